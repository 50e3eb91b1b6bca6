#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace parley::integration {

// A small HTTPS server inside the test, as an identity provider's key endpoint: on 127.0.0.1 and
// a free port, with a self-signed certificate for localhost and 127.0.0.1 (cert_path(), which a
// client trusts as its CA file), answering every request with the status and body set last, one
// request per connection. Counts the requests. Its thread serves until the object goes.
class https_stub {
public:
    explicit https_stub(const std::string& dir);
    ~https_stub();
    https_stub(const https_stub&) = delete;
    https_stub& operator=(const https_stub&) = delete;

    std::uint16_t port() const { return port_; }
    const std::string& cert_path() const { return cert_path_; }
    void answer(int status, std::string body);
    int requests() const { return requests_.load(); }

private:
    void serve();

    std::string cert_path_;
    std::string key_path_;
    int listener_ = -1;
    std::uint16_t port_ = 0;
    std::mutex mutex_;
    int status_ = 200;
    std::string body_;
    std::atomic<int> requests_{0};
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

}  // namespace parley::integration
