#pragma once

#include "config/settings.hpp"
#include "protocol/token_keys.hpp"
#include "server/http_fetch.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace parley::server {

// Where the public keys of login tokens come from: the file auth.public_keys (PEM or a JWK Set)
// and the JWK Set at auth.jwks_url (https, fetched in the background: at start, every
// refresh_interval, and when a login names a key the keys lack, at most once per
// wanted_interval). Each time either changes, the keys of both go to `publish` together (the
// hub hands them to the workers). A file or a fetch that fails keeps the keys in force and is
// logged; the file failing at start is an error the daemon stops on.
//
// Thread: the loop of the executor it is given (the main thread's), except wanted(), which any
// thread may call.
class token_key_source {
public:
    using publish_fn = std::function<void(std::shared_ptr<const protocol::token_keys>)>;

    static constexpr std::chrono::seconds wanted_interval{10};
    static constexpr std::chrono::seconds refresh_interval{600};

    token_key_source(boost::asio::any_io_executor ex, publish_fn publish);
    ~token_key_source();

    // At start (`why` "start") and on each reload: reads the file, and fetches the URL's set
    // again when it is configured (the first fetch at start too). Returns "" or what is wrong
    // with the file or the URL's settings.
    std::string configure(const config::settings& s, const char* why);
    // A login named a key none of the keys has. Any thread; the work is posted to the
    // executor, which outlives every task posted to it (the server's main loop).
    void wanted();
    // No more fetches; a fetch in flight publishes nothing.
    void stop();

private:
    void read_file(const char* why, std::string& error);
    void fetch_url(const char* why);
    void schedule_refresh(std::chrono::steady_clock::duration after);
    void publish();

    boost::asio::any_io_executor ex_;
    publish_fn publish_;
    std::string file_;
    std::string url_text_;
    std::optional<http_url> url_;
    std::shared_ptr<boost::asio::ssl::context> tls_;
    std::shared_ptr<const protocol::token_keys> file_keys_;
    std::shared_ptr<const protocol::token_keys> url_keys_;
    boost::asio::steady_timer refresh_;
    bool stopped_ = false;
    bool fetching_ = false;
    std::function<void()> cancel_fetch_;  // of the fetch in flight (harmless once it is done)
    // Shared with fetches in flight: false once stopped or reconfigured to another URL.
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
    std::atomic<std::chrono::steady_clock::rep> next_wanted_{0};  // steady_clock ticks
};

}  // namespace parley::server
