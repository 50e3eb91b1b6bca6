#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace parley::integration {

// A webhook receiver inside the test: an HTTP server (or HTTPS, with a self-signed certificate
// for 127.0.0.1 written to cert_path(), which the daemon trusts as its ca_file) on 127.0.0.1 and
// a free port. It reads each request whole (head and Content-Length body), keeps it, and answers
// with the status set last (200 at first), one request per connection. Its thread serves until
// the object goes.
class webhook_receiver {
public:
    struct request {
        std::string method;
        std::string target;
        std::string signature;     // the X-Parley-Signature header
        std::string content_type;
        std::string body;
        int answered = 0;          // the status it got
    };

    // dir: where an HTTPS receiver writes its certificate; empty: plain HTTP.
    explicit webhook_receiver(const std::string& tls_dir = {});
    ~webhook_receiver();
    webhook_receiver(const webhook_receiver&) = delete;
    webhook_receiver& operator=(const webhook_receiver&) = delete;

    std::uint16_t port() const { return port_; }
    std::string url() const;
    const std::string& cert_path() const { return cert_path_; }
    void answer(int status);
    // The next `count` requests get no answer: each is read, kept (answered 0) and its connection
    // held silent for `hold` before it is closed, as a receiver that hangs.
    void stall(int count, std::chrono::milliseconds hold);

    // Whether `signature` (an X-Parley-Signature value, "t=<unix s>,v1=<hex>") signs body under
    // secret, checked as a receiver would: HMAC-SHA256 over "<t>.<body>", compared in constant
    // time, and t within max_age_s of this machine's clock (an older request is a replay).
    static bool signature_valid(const std::string& secret, const std::string& signature, const std::string& body,
                                long max_age_s = 300);

    // Every request so far, in arrival order.
    std::vector<request> requests() const;
    // Waits until pred(requests()) holds; false after timeout.
    template <typename Pred>
    bool wait(Pred pred, std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, timeout, [&] { return pred(requests_); });
    }

private:
    void serve();
    // Reads one request from the connection (through read_some) and answers it.
    template <typename Read, typename Write>
    void handle(Read read_some, Write write_all);

    std::string cert_path_;
    std::string key_path_;
    bool tls_ = false;
    int listener_ = -1;
    std::uint16_t port_ = 0;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    int status_ = 200;
    int stalls_ = 0;
    std::chrono::milliseconds stall_hold_{0};
    std::vector<request> requests_;
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

}  // namespace parley::integration
