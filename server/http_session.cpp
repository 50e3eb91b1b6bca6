#include "server/http_session.hpp"

#include "protocol/handshake.hpp"
#include "server/admin_api.hpp"
#include "protocol/origin.hpp"
#include "rooms/chat_hub.hpp"
#include "server/metrics.hpp"
#include "server/tls_channel.hpp"
#include "server/tls_context.hpp"
#include "server/worker.hpp"
#include "server/ws_connection.hpp"

#include <boost/asio/buffers_iterator.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <spdlog/spdlog.h>

#include <sys/ioctl.h>
#include <sys/socket.h>

namespace parley::server {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using rooms::handshake_failure;
using rooms::reject_reason;

namespace {
std::string_view to_view(boost::beast::string_view s) { return {s.data(), s.size()}; }
constexpr std::uint64_t max_request_body_bytes = 64 * 1024;
}  // namespace

http_session::http_session(asio::ip::tcp::socket socket, worker& owner, rooms::chat_hub& hub,
                           const std::atomic<bool>& accepting, connection_slot slot,
                           std::optional<reject_reason> refused, std::shared_ptr<const tls_context> tls)
    : stream_(std::move(socket)),
      tls_(std::move(tls)),
      worker_(owner),
      hub_(hub),
      accepting_(accepting),
      slot_(std::move(slot)),
      refused_(refused),
      deadline_(owner.io()) {}

void http_session::start() {
    if (tls_) {
        // Made here, on the worker, rather than by the listener thread that accepted it.
        try {
            stream_.use_tls(std::make_unique<tls_channel>(*tls_));
        } catch (const std::bad_alloc&) {
            spdlog::warn("http {} no memory for a TLS connection", slot_.peer().text());
            close();
            return;
        }
        tls_.reset();
    }
    arm_deadline();
    do_read();
}

void http_session::arm_deadline() {
    // A client must send a complete request head this quickly after connecting (and between
    // keep-alive requests); slow-loris connections are dropped.
    deadline_.expires_after(std::chrono::milliseconds(worker_.chat().settings().handshake_timeout_ms));
    deadline_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
        if (auto self = weak.lock(); self && !ec) {
            spdlog::debug("http {} handshake timeout", self->slot_.peer().text());
            self->worker_.chat().counters().handshake_failures[static_cast<std::size_t>(handshake_failure::timeout)].add();
            self->close();
        }
    });
}

void http_session::do_read() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(worker_.chat().settings().max_request_header_bytes));
    // The admin API's requests are a few hundred bytes; nothing else sends a body.
    parser_->body_limit(max_request_body_bytes);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](boost::system::error_code ec, std::size_t) { self->on_read(ec); });
}

void http_session::on_read(boost::system::error_code ec) {
    if (ec == http::error::end_of_stream || ec == asio::error::operation_aborted) {
        close();
        return;
    }
    if (ec.category() == asio::error::get_ssl_category()) {
        on_tls_failure(ec);
        return;
    }
    auto& counters = worker_.chat().counters();
    if (ec) {
        spdlog::debug("http {} bad request: {}", slot_.peer().text(), ec.message());
        if (ec == http::error::header_limit) {
            counters.handshake_failures[static_cast<std::size_t>(handshake_failure::header_too_large)].add();
            respond(http::status::request_header_fields_too_large, "request head too large\n", false);
        } else if (ec == http::error::body_limit) {
            counters.handshake_failures[static_cast<std::size_t>(handshake_failure::bad_request)].add();
            respond(http::status::payload_too_large, "request body too large\n", false);
        } else if (ec == asio::error::eof || ec == asio::error::connection_reset) {
            close();
        } else {
            counters.handshake_failures[static_cast<std::size_t>(handshake_failure::bad_request)].add();
            respond(http::status::bad_request, "malformed HTTP request\n", false);
        }
        return;
    }
    route();
}

void http_session::route() {
    const auto& settings = worker_.chat().settings();
    const auto& req = parser_->get();
    std::string_view target = to_view(req.target());
    std::string_view path = target.substr(0, target.find('?'));
    bool keep_alive = req.keep_alive();

    if (refused_) {
        reject(*refused_, http::status::service_unavailable, "too many connections, try again later\n");
        return;
    }
    if (path == settings.ws_path) {
        if (!accepting_.load(std::memory_order_relaxed)) {
            reject(reject_reason::shutting_down, http::status::service_unavailable, "server shutting down\n");
            return;
        }
        upgrade();
        return;
    }
    worker_.chat().counters().http_requests.add();
    if (path == "/admin" || path.starts_with("/admin/")) {
        route_admin(path);
        return;
    }
    bool read_only = req.method() == http::verb::get || req.method() == http::verb::head;
    if (path == "/healthz" || path == "/readyz" || (path == "/metrics" && settings.metrics_enabled)) {
        if (!read_only) {
            respond(http::status::method_not_allowed, "use GET\n", keep_alive);
            return;
        }
    }
    if (path == "/healthz") {
        // A node cut off from the cluster still serves its own users: 200, saying so.
        rooms::cluster_link* cluster = hub_.cluster();
        respond(http::status::ok, cluster != nullptr && cluster->health().degraded ? "degraded" : "ok", keep_alive);
        return;
    }
    if (path == "/readyz") {
        // Load balancers stop sending new clients once this turns 503 at the start of shutdown.
        if (accepting_.load(std::memory_order_relaxed)) {
            respond(http::status::ok, "ready", keep_alive);
        } else {
            respond(http::status::service_unavailable, "shutting down", keep_alive);
        }
        return;
    }
    if (path == "/metrics" && settings.metrics_enabled) {
        respond(http::status::ok, metrics_text(), keep_alive, "text/plain; version=0.0.4; charset=utf-8");
        return;
    }
    if (path == "/client.json") {
        if (!read_only) {
            respond(http::status::method_not_allowed, "use GET\n", keep_alive);
            return;
        }
        prepare_response(http::status::ok, client_settings_json(settings), keep_alive, "application/json");
        response_->set(http::field::cache_control, "no-store");
        write_response(!keep_alive);
        return;
    }
    web_request page_request{to_view(req.method_string()), path, to_view(req[http::field::if_none_match]),
                             to_view(req[http::field::accept_encoding])};
    if (auto answer = answer_web_request(page_request)) {
        respond_page_file(*answer, keep_alive);
        return;
    }
    respond(http::status::not_found, "not found\n", keep_alive);
}

void http_session::respond_page_file(const web_answer& answer, bool keep_alive) {
    if (answer.status == web_status::method_not_allowed) {
        prepare_response(http::status::method_not_allowed, "use GET\n", keep_alive);
        response_->set(http::field::allow, "GET, HEAD");
        write_response(!keep_alive);
        return;
    }
    bool not_modified = answer.status == web_status::not_modified;
    file_response_.emplace(not_modified ? http::status::not_modified : http::status::ok, 11);
    auto& res = *file_response_;
    res.set(http::field::server, "parleyd");
    res.set(http::field::etag, answer.etag());
    // Revalidate every time: a new parleyd must never run an old page. The ETag makes that a
    // 304 of a few hundred bytes.
    res.set(http::field::cache_control, "no-cache");
    res.set(http::field::vary, "Accept-Encoding");
    res.set("X-Content-Type-Options", "nosniff");
    if (answer.asset->path == "/") {
        // The page runs only its own scripts and styles, talks only to its own origin, and is
        // never framed: injected markup could do nothing even if the page rendered any.
        res.set("Content-Security-Policy",
                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; "
                "frame-ancestors 'none'");
        res.set("Referrer-Policy", "no-referrer");
    }
    res.keep_alive(keep_alive);
    if (!not_modified) {  // a 304 has no body and no Content-Type/Length: the client keeps what it has
        res.set(http::field::content_type, answer.asset->content_type);
        if (answer.gzip) {
            res.set(http::field::content_encoding, "gzip");
        }
        std::string_view body = answer.body();
        res.content_length(body.size());
        if (!answer.head) {
            res.body() = http::span_body<const char>::value_type(body.data(), body.size());
        }
    }
    http::async_write(stream_, res,
                      [self = shared_from_this(), close_after = !keep_alive](boost::system::error_code ec, std::size_t) {
                          self->on_write(ec, close_after);
                      });
}

void http_session::route_admin(std::string_view path) {
    const auto& req = parser_->get();
    admin_reply reply = handle_admin(req.method(), path, to_view(req[http::field::authorization]), req.body(), hub_,
                                     worker_.chat().settings());
    response_.emplace(reply.status, 11);
    response_->set(http::field::server, "parleyd");
    response_->set(http::field::content_type, "application/json");
    response_->set(http::field::cache_control, "no-store");
    if (reply.challenge) {
        response_->set(http::field::www_authenticate, "Bearer realm=\"parley admin\"");
    }
    if (!reply.allow.empty()) {
        response_->set(http::field::allow, reply.allow);
    }
    response_->body() = std::move(reply.body);
    response_->keep_alive(req.keep_alive());
    response_->prepare_payload();
    write_response(!req.keep_alive());
}

std::string http_session::metrics_text() const {
    metrics_input in;
    for (rooms::worker_context* w : hub_.workers()) {
        in.workers.push_back(&w->counters());
    }
    in.users = hub_.users().size();
    in.rooms = hub_.rooms().size();
    in.history = hub_.history().stats();
    if (rooms::cluster_link* cluster = hub_.cluster()) {
        in.cluster = cluster->health();
    }
    in.ready = accepting_.load(std::memory_order_relaxed);
    in.version = PARLEY_VERSION;
    return render_metrics(in);
}

void http_session::upgrade() {
    const auto& req = parser_->get();
    auto& counters = worker_.chat().counters();
    protocol::upgrade_request check_input;
    check_input.method = to_view(req.method_string());
    check_input.version = req.version();
    check_input.has_host = req.find(http::field::host) != req.end();
    check_input.upgrade = to_view(req[http::field::upgrade]);
    check_input.connection = to_view(req[http::field::connection]);
    check_input.ws_version = to_view(req[http::field::sec_websocket_version]);
    check_input.ws_key = to_view(req[http::field::sec_websocket_key]);

    protocol::upgrade_check verdict = protocol::check_upgrade(check_input);
    if (verdict.verdict == protocol::upgrade_verdict::upgrade_required) {
        spdlog::debug("http {} upgrade refused: {}", slot_.peer().text(), verdict.reason);
        counters.handshake_failures[static_cast<std::size_t>(handshake_failure::upgrade_required)].add();
        response_.emplace(http::status::upgrade_required, 11);
        response_->set(http::field::sec_websocket_version, "13");
        response_->set(http::field::content_type, "text/plain");
        response_->body() = std::string(verdict.reason) + "\n";
        response_->keep_alive(false);
        response_->prepare_payload();
        write_response(true);
        return;
    }
    if (verdict.verdict == protocol::upgrade_verdict::bad_request) {
        spdlog::debug("http {} upgrade refused: {}", slot_.peer().text(), verdict.reason);
        counters.handshake_failures[static_cast<std::size_t>(handshake_failure::bad_request)].add();
        respond(http::status::bad_request, std::string(verdict.reason) + "\n", false);
        return;
    }
    std::string_view origin = to_view(req[http::field::origin]);
    if (!protocol::origin_allowed(origin, to_view(req[http::field::host]), worker_.chat().settings().allowed_origins)) {
        spdlog::debug("http {} upgrade refused: origin '{}' not allowed", slot_.peer().text(), origin);
        reject(reject_reason::origin, http::status::forbidden, "origin not allowed\n");
        return;
    }
    response_.emplace(http::status::switching_protocols, 11);
    response_->set(http::field::upgrade, "websocket");
    response_->set(http::field::connection, "Upgrade");
    response_->set(http::field::sec_websocket_accept, protocol::websocket_accept(check_input.ws_key));
    http::async_write(stream_, *response_, [self = shared_from_this()](boost::system::error_code e, std::size_t) {
        self->on_upgrade_written(e);
    });
}

void http_session::reject(reject_reason reason, http::status status, std::string body) {
    worker_.chat().counters().rejected[static_cast<std::size_t>(reason)].add();
    spdlog::debug("http {} refused: {}", slot_.peer().text(), label(reason));
    respond(status, std::move(body), false);
}

void http_session::on_upgrade_written(boost::system::error_code ec) {
    if (ec) {
        close();
        return;
    }
    deadline_.cancel();
    // Frames the client sent right behind its request are already in our buffer.
    auto data = buffer_.data();
    std::string leftover(asio::buffers_begin(data), asio::buffers_end(data));
    // From here on the socket is a plain descriptor in the worker's own epoll set.
    boost::system::error_code option_error;  // no Nagle is an optimisation: go on without it
    stream_.socket().set_option(asio::ip::tcp::no_delay(true), option_error);
    boost::system::error_code release_error;
    int fd = stream_.socket().release(release_error);
    if (release_error) {
        close();
        return;
    }
    int non_blocking = 1;
    ::ioctl(fd, FIONBIO, &non_blocking);
    // A TLS connection's channel goes with it, holding whatever the client already sent.
    connection_ptr connection(new ws_connection(fd, worker_, std::move(slot_), stream_.release_tls()));
    connection->start(std::move(leftover));
}

void http_session::respond(http::status status, std::string body, bool keep_alive, std::string_view content_type) {
    prepare_response(status, std::move(body), keep_alive, content_type);
    write_response(!keep_alive);
}

void http_session::prepare_response(http::status status, std::string body, bool keep_alive,
                                    std::string_view content_type) {
    response_.emplace(status, 11);
    response_->set(http::field::server, "parleyd");
    response_->set(http::field::content_type, content_type);
    if (status == http::status::service_unavailable) {
        response_->set(http::field::retry_after, "5");
    }
    response_->body() = std::move(body);
    response_->keep_alive(keep_alive);
    response_->prepare_payload();
}

void http_session::write_response(bool close_after) {
    http::async_write(stream_, *response_,
                      [self = shared_from_this(), close_after](boost::system::error_code ec, std::size_t) {
                          self->on_write(ec, close_after);
                      });
}

void http_session::on_write(boost::system::error_code ec, bool close_after) {
    if (ec || close_after) {
        close();
        return;
    }
    arm_deadline();
    do_read();
}

void http_session::on_tls_failure(boost::system::error_code ec) {
    worker_.chat().counters().handshake_failures[static_cast<std::size_t>(handshake_failure::tls)].add();
    tls_channel* tls = stream_.tls();
    spdlog::debug("http {} TLS failed: {}", slot_.peer().text(), tls ? tls->reason() : ec.message());
    if (tls && tls->plain_http_seen() && !tls->has_output()) {
        // Someone typed http:// for https://. Say so in the clear, as a courtesy: one small
        // write that the fresh socket's buffer takes whole; if it does not, the client gets
        // only the close.
        static constexpr std::string_view answer =
            "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 45\r\n"
            "Connection: close\r\n\r\nThis port speaks TLS: use https:// or wss://\n";
        static_assert(std::string_view("This port speaks TLS: use https:// or wss://\n").size() == 45);
        [[maybe_unused]] ssize_t n =
            ::send(stream_.socket().native_handle(), answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    stream_.release_tls();  // no close_notify on a failed handshake
    close();
}

void http_session::close() {
    boost::system::error_code ec;
    deadline_.cancel();
    if (tls_channel* tls = stream_.tls(); tls && stream_.socket().is_open()) {
        // Tell a TLS client that the end is intended, not a truncation. Best effort: one
        // non-blocking write of a 24-byte alert.
        tls->close_notify();
        std::string_view out = tls->output();
        [[maybe_unused]] ssize_t n =
            ::send(stream_.socket().native_handle(), out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    stream_.socket().close(ec);
}

}  // namespace parley::server
