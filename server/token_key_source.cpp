#include "server/token_key_source.hpp"

#include "server/token_key_file.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

namespace parley::server {

namespace asio = boost::asio;

token_key_source::token_key_source(asio::any_io_executor ex, publish_fn publish)
    : ex_(std::move(ex)), publish_(std::move(publish)), refresh_(ex_) {}

token_key_source::~token_key_source() { stop(); }

std::string token_key_source::configure(const config::settings& s, const char* why) {
    std::string error;
    file_ = s.auth_public_keys;
    read_file(why, error);
    if (s.auth_jwks_url != url_text_) {
        // Another URL (or none): what the old one gave no longer counts, and a fetch of it in
        // flight publishes nothing.
        *alive_ = false;
        alive_ = std::make_shared<bool>(true);
        if (cancel_fetch_) {
            cancel_fetch_();
            cancel_fetch_ = nullptr;
        }
        fetching_ = false;
        url_keys_ = nullptr;
        url_.reset();
        url_text_ = s.auth_jwks_url;
        refresh_.cancel();
        if (!url_text_.empty()) {
            url_ = parse_http_url(url_text_, error);
            if (url_ && !url_->tls) {
                error = "auth.jwks_url: '" + url_text_ + "' is not https (keys fetched in the clear could be "
                        "swapped on the way)";
                url_.reset();
            }
        }
    }
    if (url_) {
        std::string tls_error;
        auto tls = make_client_tls(s.auth_jwks_ca_file, tls_error);
        if (!tls) {
            error = "auth.jwks_ca_file: " + tls_error;
        } else {
            tls_ = std::move(tls);
            fetch_url(why);
        }
    }
    if (!error.empty() && !url_text_.empty() && !url_) {
        spdlog::error("{}: {}", why, error);
    }
    publish();
    return error;
}

void token_key_source::read_file(const char* why, std::string& error) {
    if (file_.empty()) {
        file_keys_ = nullptr;
        return;
    }
    auto keys = read_token_key_file(file_, error);
    if (!keys) {
        spdlog::error("{}: token keys of the file not replaced, logins are checked with the previous ones: {}", why,
                      error);
        return;
    }
    spdlog::info("{}: {} token key(s) read from {}", why, keys->size(), file_);
    file_keys_ = std::move(keys);
}

void token_key_source::fetch_url(const char* why) {
    if (!url_ || fetching_) {
        return;
    }
    fetching_ = true;
    http_request_spec spec;
    spec.headers.emplace_back("Accept", "application/json");
    spec.timeout = std::chrono::seconds(10);
    spec.body_limit = 1 << 20;
    cancel_fetch_ = http_fetch(ex_, tls_, *url_, std::move(spec),
               [this, alive = alive_, why = std::string(why)](http_answer answer) {
                   if (!*alive) {
                       return;
                   }
                   fetching_ = false;
                   if (answer.status != 200) {
                       spdlog::warn("{}: the JWK Set at {} was not fetched, logins are checked with the keys in force: "
                                    "{}",
                                    why, url_text_,
                                    answer.status == 0 ? answer.error : "HTTP " + std::to_string(answer.status));
                       // Sooner than the usual refresh: the provider may be back in a minute.
                       schedule_refresh(std::chrono::seconds(60));
                       return;
                   }
                   auto keys = std::make_shared<protocol::token_keys>();
                   if (std::string problem = keys->add_jwks(answer.body); !problem.empty()) {
                       spdlog::warn("{}: the JWK Set at {} is not usable, logins are checked with the keys in force: {}",
                                    why, url_text_, problem);
                       schedule_refresh(std::chrono::seconds(60));
                       return;
                   }
                   url_keys_ = std::move(keys);
                   publish();
                   spdlog::info("{}: {} token key(s) fetched from {}", why, url_keys_->size(), url_text_);
                   schedule_refresh(refresh_interval);
               });
}

void token_key_source::schedule_refresh(std::chrono::steady_clock::duration after) {
    refresh_.expires_after(after);
    refresh_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
        if (!ec && *alive) {
            fetch_url("refresh");
        }
    });
}

void token_key_source::wanted() {
    // One look per interval however many logins name unknown keys.
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    auto next = next_wanted_.load(std::memory_order_relaxed);
    const auto later = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(wanted_interval).count();
    if (now < next || !next_wanted_.compare_exchange_strong(next, later)) {
        return;
    }
    // Only `this` crosses threads here: alive_ is the main thread's (configure replaces it).
    asio::post(ex_, [this] {
        if (stopped_) {
            return;
        }
        const char* why = "a token named an unknown key";
        std::string error;
        read_file(why, error);
        publish();
        fetch_url(why);
    });
}

void token_key_source::stop() {
    stopped_ = true;
    *alive_ = false;
    refresh_.cancel();
    if (cancel_fetch_) {
        cancel_fetch_();
        cancel_fetch_ = nullptr;
    }
}

void token_key_source::publish() {
    if (!file_keys_ && !url_keys_) {
        publish_(nullptr);
        return;
    }
    auto keys = std::make_shared<protocol::token_keys>();
    for (const auto* part : {file_keys_.get(), url_keys_.get()}) {
        if (part != nullptr) {
            keys->add_all(*part);
        }
    }
    publish_(std::move(keys));
}

}  // namespace parley::server
