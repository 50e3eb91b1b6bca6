#pragma once

#include "config/settings.hpp"
#include "server/admin_api.hpp"
#include "server/http_counters.hpp"
#include "server/web_page.hpp"

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/verb.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace parley::server {

// What routing reads of one parsed request: views into the parser's message, valid while it is.
// A header that is absent is an empty view (has_host tells an empty Host from none).
struct http_request_view {
    boost::beast::http::verb method = boost::beast::http::verb::get;
    std::string_view method_text;  // as sent: "GET", "HEAD", "BREW" ...
    std::string_view target;       // path and query
    unsigned version = 11;         // 10 or 11
    bool keep_alive = true;
    bool has_host = false;
    std::string_view host;
    std::string_view upgrade;
    std::string_view connection;
    std::string_view ws_version;   // Sec-WebSocket-Version
    std::string_view ws_key;       // Sec-WebSocket-Key
    std::string_view ws_extensions;  // Sec-WebSocket-Extensions (the first such header)
    std::string_view origin;
    std::string_view authorization;
    std::string_view if_none_match;
    std::string_view accept_encoding;
    std::string_view body;         // the admin API's JSON; empty for a parser without a body
};

// The view of a Beast request (any body type; only a string body is passed on as `body`).
template <class Body>
http_request_view view_of(const boost::beast::http::request<Body>& req) {
    namespace http = boost::beast::http;
    auto text = [](boost::beast::string_view s) { return std::string_view(s.data(), s.size()); };
    http_request_view v;
    v.method = req.method();
    v.method_text = text(req.method_string());
    v.target = text(req.target());
    v.version = req.version();
    v.keep_alive = req.keep_alive();
    v.has_host = req.find(http::field::host) != req.end();
    v.host = text(req[http::field::host]);
    v.upgrade = text(req[http::field::upgrade]);
    v.connection = text(req[http::field::connection]);
    v.ws_version = text(req[http::field::sec_websocket_version]);
    v.ws_key = text(req[http::field::sec_websocket_key]);
    v.ws_extensions = text(req[http::field::sec_websocket_extensions]);
    v.origin = text(req[http::field::origin]);
    v.authorization = text(req[http::field::authorization]);
    v.if_none_match = text(req[http::field::if_none_match]);
    v.accept_encoding = text(req[http::field::accept_encoding]);
    if constexpr (std::is_same_v<Body, http::string_body>) {
        v.body = req.body();
    }
    return v;
}

// What a route needs from the daemon besides the request. http_session implements it over the
// chat hub and the server's state; tests and the connection fuzz target over their own.
// Called on the thread that routes (the connection's worker).
class route_environment {
public:
    virtual ~route_environment() = default;
    virtual const config::settings& settings() const = 0;
    // False once shutdown has begun: /readyz 503, upgrades 503.
    virtual bool accepting() const = 0;
    // A cluster node cut off from Redis (/healthz says "degraded"); false on a single node.
    virtual bool cluster_degraded() const = 0;
    // The Prometheus text of /metrics; called only when metrics are enabled.
    virtual std::string metrics_text() const = 0;
    // A request under /admin (admin_api.hpp's handle_admin, in the daemon).
    virtual admin_reply admin(boost::beast::http::verb method, std::string_view path, std::string_view authorization,
                              std::string_view body) = 0;
};

enum class route_kind : unsigned char {
    respond,  // write status, headers and body
    page,     // a file of the browser page: status and headers here, the bytes from `page`
    upgrade,  // write the 101 (status and headers here), then the connection is a WebSocket
};

// How to answer one request: a plain response, a page file, or the WebSocket upgrade; and what
// the connection counts and logs about it.
struct route_decision {
    route_kind kind = route_kind::respond;
    boost::beast::http::status status = boost::beast::http::status::ok;
    // In the order to write them. Content-Length is left to the writer.
    std::vector<std::pair<std::string_view, std::string>> headers;
    std::string body;               // kind respond
    std::optional<web_answer> page;  // kind page: the body views the compiled-in file
    bool keep_alive = false;        // false: close the connection after the answer
    bool counts_as_request = false;               // a plain HTTP request (http_requests)
    std::optional<reject_reason> rejected;        // refused before the upgrade
    std::optional<handshake_failure> failure;     // a bad upgrade request
    std::string note;  // for the debug log line after "http <peer> ": why it was refused; "" for none
    // An admin request that waits for the cluster to feed this room here (admin_reply): the
    // session asks the cluster, then routes the request again with the room fed.
    std::string wait_for_room;
    // kind upgrade: permessage-deflate was agreed, with this server_window_bits (8..15); 0: not.
    std::uint8_t deflate_window_bits = 0;

    // The value of the first header of that name (case as written here), or "".
    std::string_view header(std::string_view name) const;
};

// Routes one complete request. refused: the connection was accepted over a connection limit
// (every request then gets 503 and the connection closes).
//   ws path         the upgrade (protocol::check_upgrade, then the Origin rule): 101, or 426,
//                   400, 403; 503 while shutting down
//   /healthz        200 "ok" (or "degraded" on a cut-off cluster node)
//   /readyz         200 "ready", 503 "shutting down" once shutdown began
//   /metrics        the Prometheus text, when metrics are enabled
//   /client.json    the page's settings (web_page.hpp)
//   /admin/ and the admin page's files (server/web/admin/): GET and HEAD without a token,
//                   /admin redirects to /admin/ (both only while the admin API is on)
//   /admin, /admin/... otherwise the admin API (admin_api.hpp)
//   the page's files (web_page.hpp), anything else 404
// The GET-only routes answer another method with 405. Never throws except std::bad_alloc.
route_decision route_request(const http_request_view& request, std::optional<reject_reason> refused,
                             route_environment& environment);

// The answer to a request the parser rejected (ec: its error): 431 for a head over the limit,
// 413 for a body over it, 400 for anything else; each closes the connection. A connection that
// simply ended (end of stream, reset) is not a request: close it without an answer instead.
route_decision route_parse_error(boost::beast::error_code ec);

}  // namespace parley::server
