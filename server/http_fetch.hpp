#pragma once

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace boost::asio::ssl {
class context;
}

namespace parley::server {

// Where an http:// or https:// URL points.
struct http_url {
    bool tls = false;
    std::string host;  // a name or an address (IPv6 without its brackets)
    std::string port;  // "80" / "443" unless the URL says
    std::string target;  // the path and query, "/" at least
};

// The URL's parts, or nothing with `error` saying why (another scheme, no host, a user part).
std::optional<http_url> parse_http_url(std::string_view url, std::string& error);

struct http_request_spec {
    std::string method = "GET";
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::string content_type;  // with a body
    std::chrono::milliseconds timeout{10000};  // the whole exchange, connect to the last byte
    std::size_t body_limit = 1 << 20;          // a longer answer is an error
};

struct http_answer {
    int status = 0;      // 0: no answer (error says why)
    std::string body;
    std::string error;   // what failed: resolving, connecting, TLS, a timeout, a malformed answer
};

// The client's TLS settings for https: the system's trusted roots, or ca_file's alone when set;
// the server's name is verified against its certificate. Null with error when ca_file cannot be
// read.
std::shared_ptr<boost::asio::ssl::context> make_client_tls(const std::string& ca_file, std::string& error);

// One request on a connection of its own (HTTP/1.1, "Connection: close"), asynchronously on ex:
// done runs there once, with the answer or what failed. https needs tls. Nothing blocks the
// calling thread; the exchange keeps itself alive until done has run. The timeout covers the
// exchange after the name lookup, which the system resolver's own timeouts bound. Returns a
// cancel function (to call on ex's thread): the exchange ends at once, done runs with an error.
std::function<void()> http_fetch(const boost::asio::any_io_executor& ex, std::shared_ptr<boost::asio::ssl::context> tls,
                const http_url& url, http_request_spec request, std::function<void(http_answer)> done);

}  // namespace parley::server
