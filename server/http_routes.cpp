#include "server/http_routes.hpp"

#include "protocol/deflate_offer.hpp"
#include "protocol/handshake.hpp"
#include "protocol/origin.hpp"

#include <boost/beast/http/error.hpp>

namespace parley::server {

namespace http = boost::beast::http;

namespace {

constexpr std::string_view plain_text = "text/plain; charset=utf-8";

route_decision respond(http::status status, std::string body, bool keep_alive,
                       std::string_view content_type = plain_text) {
    route_decision d;
    d.status = status;
    d.headers.emplace_back("Server", "parleyd");
    d.headers.emplace_back("Content-Type", std::string(content_type));
    if (status == http::status::service_unavailable) {
        d.headers.emplace_back("Retry-After", "5");
    }
    d.body = std::move(body);
    d.keep_alive = keep_alive;
    return d;
}

route_decision reject(reject_reason reason, http::status status, std::string body) {
    route_decision d = respond(status, std::move(body), false);
    d.rejected = reason;
    return d;
}

route_decision method_not_allowed(bool keep_alive) {
    return respond(http::status::method_not_allowed, "use GET\n", keep_alive);
}

route_decision upgrade(const http_request_view& req, const config::settings& settings) {
    protocol::upgrade_request check_input;
    check_input.method = req.method_text;
    check_input.version = req.version;
    check_input.has_host = req.has_host;
    check_input.upgrade = req.upgrade;
    check_input.connection = req.connection;
    check_input.ws_version = req.ws_version;
    check_input.ws_key = req.ws_key;
    protocol::upgrade_check verdict = protocol::check_upgrade(check_input);
    if (verdict.verdict == protocol::upgrade_verdict::upgrade_required) {
        // No Server header here, as before: only what RFC 6455 section 4.4 asks for.
        route_decision d;
        d.status = http::status::upgrade_required;
        d.headers.emplace_back("Sec-WebSocket-Version", "13");
        d.headers.emplace_back("Content-Type", "text/plain");
        d.body = std::string(verdict.reason) + "\n";
        d.failure = handshake_failure::upgrade_required;
        d.note = "upgrade refused: " + std::string(verdict.reason);
        return d;
    }
    if (verdict.verdict == protocol::upgrade_verdict::bad_request) {
        route_decision d = respond(http::status::bad_request, std::string(verdict.reason) + "\n", false);
        d.failure = handshake_failure::bad_request;
        d.note = "upgrade refused: " + std::string(verdict.reason);
        return d;
    }
    if (!protocol::origin_allowed(req.origin, req.host, settings.allowed_origins)) {
        route_decision d = reject(reject_reason::origin, http::status::forbidden, "origin not allowed\n");
        d.note = "upgrade refused: origin '" + std::string(req.origin) + "' not allowed";
        return d;
    }
    route_decision d;
    d.kind = route_kind::upgrade;
    d.status = http::status::switching_protocols;
    d.headers.emplace_back("Upgrade", "websocket");
    d.headers.emplace_back("Connection", "Upgrade");
    d.headers.emplace_back("Sec-WebSocket-Accept", protocol::websocket_accept(req.ws_key));
    if (settings.compression == config::compression_mode::on && !req.ws_extensions.empty()) {
        protocol::deflate_agreement deflate = protocol::negotiate_deflate(req.ws_extensions);
        if (deflate.agreed) {
            d.headers.emplace_back("Sec-WebSocket-Extensions", std::move(deflate.response));
            d.deflate_window_bits = deflate.server_window_bits;
        }
    }
    d.keep_alive = true;
    return d;
}

route_decision admin(const http_request_view& req, std::string_view path, route_environment& env) {
    admin_reply reply = env.admin(req.method, path, req.authorization, req.body);
    route_decision d;
    d.status = reply.status;
    d.headers.emplace_back("Server", "parleyd");
    d.headers.emplace_back("Content-Type", "application/json");
    d.headers.emplace_back("Cache-Control", "no-store");
    if (reply.challenge) {
        d.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"parley admin\"");
    }
    if (!reply.allow.empty()) {
        d.headers.emplace_back("Allow", std::string(reply.allow));
    }
    d.body = std::move(reply.body);
    d.keep_alive = req.keep_alive;
    d.wait_for_room = std::move(reply.wait_for_room);
    return d;
}

route_decision page_file(const web_answer& answer, bool keep_alive) {
    if (answer.status == web_status::method_not_allowed) {
        route_decision d = method_not_allowed(keep_alive);
        d.headers.emplace_back("Allow", "GET, HEAD");
        return d;
    }
    route_decision d;
    d.kind = route_kind::page;
    d.page = answer;
    d.keep_alive = keep_alive;
    d.status = answer.status == web_status::not_modified ? http::status::not_modified : http::status::ok;
    d.headers.emplace_back("Server", "parleyd");
    d.headers.emplace_back("ETag", std::string(answer.etag()));
    // Revalidate every time: a new parleyd must never run an old page. The ETag makes that a
    // 304 of a few hundred bytes.
    d.headers.emplace_back("Cache-Control", "no-cache");
    d.headers.emplace_back("Vary", "Accept-Encoding");
    d.headers.emplace_back("X-Content-Type-Options", "nosniff");
    if (answer.asset->content_type.starts_with("text/html")) {
        // Each page (the chat's, the admin's) runs only its own scripts and styles, talks only to
        // its own origin, and is never framed: injected markup could do nothing even if the page
        // rendered any.
        d.headers.emplace_back("Content-Security-Policy",
                               "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; "
                               "frame-ancestors 'none'");
        d.headers.emplace_back("Referrer-Policy", "no-referrer");
    }
    if (answer.status != web_status::not_modified) {  // a 304 keeps the client's own copy's headers
        d.headers.emplace_back("Content-Type", std::string(answer.asset->content_type));
        if (answer.gzip) {
            d.headers.emplace_back("Content-Encoding", "gzip");
        }
    }
    return d;
}

// The admin page: /admin/ and its files, compiled in from server/web/admin/ (index.html is
// served at /admin/, admin.js at /admin/admin.js, ...). They share the /admin/ prefix with the
// admin API yet cannot be taken for one of its paths: every API path is a bare word
// (/admin/users, /admin/kick, ...: admin_api.cpp), every file of the page has an extension. So
// a file of the page must keep its extension, and an API path must never get one.
// The page holds no secret (the admin types the token into it), so a GET or HEAD of it needs no
// token; every other request under /admin/ is the API's, token check and all. With the API off
// (admin.token empty) the page is off too: it could do nothing, and /admin/ stays 404.
std::optional<route_decision> admin_page(const http_request_view& req, std::string_view path,
                                         route_environment& env) {
    if (env.settings().admin_token.empty() ||
        (req.method != http::verb::get && req.method != http::verb::head)) {
        return std::nullopt;
    }
    if (path == "/admin") {
        // The page names its files relative to /admin/; keep the query.
        route_decision d = respond(http::status::permanent_redirect, "see /admin/\n", req.keep_alive);
        d.headers.emplace_back("Location", "/admin/" + std::string(req.target.substr(path.size())));
        return d;
    }
    const std::string_view file = path == "/admin/" ? std::string_view("/admin/index.html") : path;
    if (file.substr(file.rfind('/')).find('.') == std::string_view::npos) {
        return std::nullopt;  // a bare word: the API's
    }
    web_request page_request{req.method_text, file, req.if_none_match, req.accept_encoding};
    if (auto answer = answer_web_request(page_request)) {
        return page_file(*answer, req.keep_alive);
    }
    return std::nullopt;
}

// Every path but the WebSocket one.
route_decision plain_request(const http_request_view& req, std::string_view path, route_environment& env) {
    const config::settings& settings = env.settings();
    const bool keep_alive = req.keep_alive;
    const bool read_only = req.method == http::verb::get || req.method == http::verb::head;
    const bool metrics = path == "/metrics" && settings.metrics_enabled;
    if ((path == "/healthz" || path == "/readyz" || metrics || path == "/client.json") && !read_only) {
        return method_not_allowed(keep_alive);
    }
    if (path == "/healthz") {
        // A node cut off from the cluster still serves its own users: 200, saying so.
        return respond(http::status::ok, env.cluster_degraded() ? "degraded" : "ok", keep_alive);
    }
    if (path == "/readyz") {
        // Load balancers stop sending new clients once this turns 503 at the start of shutdown.
        return env.accepting() ? respond(http::status::ok, "ready", keep_alive)
                               : respond(http::status::service_unavailable, "shutting down", keep_alive);
    }
    if (metrics) {
        return respond(http::status::ok, env.metrics_text(), keep_alive, "text/plain; version=0.0.4; charset=utf-8");
    }
    if (path == "/client.json") {
        route_decision d = respond(http::status::ok, client_settings_json(settings), keep_alive, "application/json");
        d.headers.emplace_back("Cache-Control", "no-store");
        return d;
    }
    web_request page_request{req.method_text, path, req.if_none_match, req.accept_encoding};
    if (auto answer = answer_web_request(page_request)) {
        return page_file(*answer, keep_alive);
    }
    return respond(http::status::not_found, "not found\n", keep_alive);
}

}  // namespace

route_decision route_parse_error(boost::beast::error_code ec) {
    route_decision d;
    if (ec == http::error::header_limit) {
        d = respond(http::status::request_header_fields_too_large, "request head too large\n", false);
        d.failure = handshake_failure::header_too_large;
    } else if (ec == http::error::body_limit) {
        d = respond(http::status::payload_too_large, "request body too large\n", false);
        d.failure = handshake_failure::bad_request;
    } else {
        d = respond(http::status::bad_request, "malformed HTTP request\n", false);
        d.failure = handshake_failure::bad_request;
    }
    d.note = "bad request: " + ec.message();
    return d;
}

std::string_view route_decision::header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
        if (key == name) {
            return value;
        }
    }
    return {};
}

route_decision route_request(const http_request_view& req, std::optional<reject_reason> refused,
                             route_environment& env) {
    if (refused) {
        return reject(*refused, http::status::service_unavailable, "too many connections, try again later\n");
    }
    const std::string_view path = req.target.substr(0, req.target.find('?'));
    if (path == env.settings().ws_path) {
        if (!env.accepting()) {
            return reject(reject_reason::shutting_down, http::status::service_unavailable, "server shutting down\n");
        }
        return upgrade(req, env.settings());
    }
    const bool admin_path = path == "/admin" || path.starts_with("/admin/");
    std::optional<route_decision> page = admin_path ? admin_page(req, path, env) : std::nullopt;
    route_decision d = page ? std::move(*page) : admin_path ? admin(req, path, env) : plain_request(req, path, env);
    d.counts_as_request = true;
    return d;
}

}  // namespace parley::server
