#include "server/http_fetch.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/dynamic_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/version.hpp>
#include <openssl/ssl.h>

#include <optional>

namespace parley::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::optional<http_url> parse_http_url(std::string_view url, std::string& error) {
    http_url out;
    std::string_view rest;
    if (url.starts_with("https://")) {
        out.tls = true;
        rest = url.substr(8);
    } else if (url.starts_with("http://")) {
        rest = url.substr(7);
    } else {
        error = "'" + std::string(url) + "' is not an http:// or https:// URL";
        return std::nullopt;
    }
    const std::size_t slash = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, slash);
    std::string_view target = slash == std::string_view::npos ? std::string_view("/") : rest.substr(slash);
    target = target.substr(0, target.find('#'));
    if (authority.find('@') != std::string_view::npos) {
        error = "'" + std::string(url) + "' has a user part; put credentials in a header instead";
        return std::nullopt;
    }
    std::string_view port;
    if (authority.starts_with("[")) {
        const std::size_t close = authority.find(']');
        if (close == std::string_view::npos) {
            error = "'" + std::string(url) + "' has an unclosed IPv6 address";
            return std::nullopt;
        }
        out.host = std::string(authority.substr(1, close - 1));
        if (close + 1 < authority.size() && authority[close + 1] == ':') {
            port = authority.substr(close + 2);
        }
    } else {
        const std::size_t colon = authority.rfind(':');
        out.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos) {
            port = authority.substr(colon + 1);
        }
    }
    if (out.host.empty()) {
        error = "'" + std::string(url) + "' names no host";
        return std::nullopt;
    }
    if (!port.empty() && (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos)) {
        error = "'" + std::string(url) + "' has a bad port";
        return std::nullopt;
    }
    out.port = port.empty() ? (out.tls ? "443" : "80") : std::string(port);
    out.target = target.empty() ? "/" : (target.front() == '?' ? "/" + std::string(target) : std::string(target));
    return out;
}

std::shared_ptr<asio::ssl::context> make_client_tls(const std::string& ca_file, std::string& error) {
    auto tls = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
    tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                     asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
    boost::system::error_code ec;
    if (ca_file.empty()) {
        tls->set_default_verify_paths(ec);
    } else {
        tls->load_verify_file(ca_file, ec);
    }
    if (ec) {
        error = "cannot read the trusted certificates" + (ca_file.empty() ? std::string() : " in '" + ca_file + "'") +
                ": " + ec.message();
        return nullptr;
    }
    tls->set_verify_mode(asio::ssl::verify_peer);
    return tls;
}

namespace {

// One exchange: resolve, connect, (handshake,) write, read, done. Keeps itself alive through
// its handlers; the stream's expiry bounds the whole exchange.
class fetch : public std::enable_shared_from_this<fetch> {
public:
    fetch(const asio::any_io_executor& ex, std::shared_ptr<asio::ssl::context> tls, http_url url,
          http_request_spec spec, std::function<void(http_answer)> done)
        : resolver_(ex),
          tls_(std::move(tls)),
          url_(std::move(url)),
          spec_(std::move(spec)),
          done_(std::move(done)),
          deadline_(std::chrono::steady_clock::now() + spec_.timeout) {
        if (url_.tls && tls_) {
            secure_.emplace(ex, *tls_);
        } else {
            plain_.emplace(ex);
        }
    }

    void start() {
        if (url_.tls && !tls_) {
            finish("https without TLS settings");
            return;
        }
        tcp_layer().expires_at(deadline_);
        resolver_.async_resolve(url_.host, url_.port,
                                [self = shared_from_this()](beast::error_code ec, tcp::resolver::results_type found) {
                                    self->on_resolved(ec, std::move(found));
                                });
    }

    void cancel() {
        resolver_.cancel();
        tcp_layer().close();
    }

private:
    beast::tcp_stream& tcp_layer() { return secure_ ? beast::get_lowest_layer(*secure_) : *plain_; }

    // f(stream) with the stream the request goes through.
    template <typename F>
    void with_stream(F&& f) {
        if (secure_) {
            f(*secure_);
        } else {
            f(*plain_);
        }
    }

    void on_resolved(beast::error_code ec, tcp::resolver::results_type found) {
        if (ec) {
            finish("cannot resolve " + url_.host + ": " + ec.message());
            return;
        }
        tcp_layer().async_connect(found, [self = shared_from_this()](beast::error_code e, const tcp::endpoint&) {
            self->on_connected(e);
        });
    }

    void on_connected(beast::error_code ec) {
        if (ec) {
            finish("cannot connect to " + url_.host + ":" + url_.port + ": " + ec.message());
            return;
        }
        auto* tls = secure_ ? &*secure_ : nullptr;
        if (tls == nullptr) {
            send();
            return;
        }
        // SNI, and the certificate must name the host.
        if (SSL_set_tlsext_host_name(tls->native_handle(), url_.host.c_str()) != 1) {
            finish("cannot set the TLS server name");
            return;
        }
        tls->set_verify_callback(asio::ssl::host_name_verification(url_.host));
        tls->async_handshake(asio::ssl::stream_base::client, [self = shared_from_this()](beast::error_code e) {
            if (e) {
                self->finish("TLS with " + self->url_.host + " failed: " + e.message());
                return;
            }
            self->send();
        });
    }

    void send() {
        request_.method_string(spec_.method);
        request_.target(url_.target);
        request_.version(11);
        const bool default_port = url_.port == (url_.tls ? "443" : "80");
        const bool v6 = url_.host.find(':') != std::string::npos;
        request_.set(http::field::host, (v6 ? "[" + url_.host + "]" : url_.host) + (default_port ? "" : ":" + url_.port));
        request_.set(http::field::user_agent, "parleyd");
        request_.set(http::field::connection, "close");
        for (const auto& [name, value] : spec_.headers) {
            request_.set(name, value);
        }
        if (!spec_.body.empty() || spec_.method == "POST") {
            if (!spec_.content_type.empty()) {
                request_.set(http::field::content_type, spec_.content_type);
            }
            request_.body() = std::move(spec_.body);
            request_.prepare_payload();
        }
        parser_.body_limit(spec_.body_limit);
        with_stream([this](auto& stream) {
            http::async_write(stream, request_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
                self->on_written(ec);
            });
        });
    }

    void on_written(beast::error_code ec) {
        if (ec) {
            finish("sending the request failed: " + ec.message());
            return;
        }
        with_stream([this](auto& stream) {
            http::async_read(stream, buffer_, parser_, [self = shared_from_this()](beast::error_code e, std::size_t) {
                self->on_read(e);
            });
        });
    }

    void on_read(beast::error_code ec) {
        if (ec) {
            finish(ec == beast::error::timeout ? std::string("no answer within the timeout")
                                               : "reading the answer failed: " + ec.message());
            return;
        }
        http_answer answer;
        answer.status = static_cast<int>(parser_.get().result_int());
        answer.body = std::move(parser_.get().body());
        deliver(std::move(answer));
    }

    void finish(std::string error) {
        http_answer answer;
        answer.error = std::move(error);
        deliver(std::move(answer));
    }

    void deliver(http_answer answer) {
        beast::error_code ignored;
        tcp_layer().socket().shutdown(tcp::socket::shutdown_both, ignored);
        if (done_) {
            auto done = std::move(done_);
            done_ = nullptr;
            done(std::move(answer));
        }
    }

    tcp::resolver resolver_;
    std::shared_ptr<asio::ssl::context> tls_;
    std::optional<beast::tcp_stream> plain_;                         // http
    std::optional<beast::ssl_stream<beast::tcp_stream>> secure_;     // https
    http_url url_;
    http_request_spec spec_;
    std::function<void(http_answer)> done_;
    std::chrono::steady_clock::time_point deadline_;
    http::request<http::string_body> request_;
    http::response_parser<http::string_body> parser_;
    beast::flat_buffer buffer_;
};

}  // namespace

std::function<void()> http_fetch(const asio::any_io_executor& ex, std::shared_ptr<asio::ssl::context> tls,
                                 const http_url& url, http_request_spec request, std::function<void(http_answer)> done) {
    auto exchange = std::make_shared<fetch>(ex, std::move(tls), url, std::move(request), std::move(done));
    exchange->start();
    return [weak = std::weak_ptr<fetch>(exchange)] {
        if (auto alive = weak.lock()) {
            alive->cancel();
        }
    };
}

}  // namespace parley::server
