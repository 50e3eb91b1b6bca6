#include "server/http_session.hpp"

#include "rooms/chat_hub.hpp"
#include "server/admin_api.hpp"
#include "server/metrics.hpp"
#include "server/tls_channel.hpp"
#include "server/tls_context.hpp"
#include "server/worker.hpp"
#include "server/ws_connection.hpp"

#include <boost/asio/buffers_iterator.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <spdlog/spdlog.h>

#include <sys/ioctl.h>
#include <sys/socket.h>

namespace parley::server {

namespace asio = boost::asio;
namespace http = boost::beast::http;
namespace {
constexpr std::uint64_t max_request_body_bytes = 64 * 1024;
}  // namespace

http_session::http_session(asio::ip::tcp::socket socket, worker& owner, rooms::chat_hub& hub, const http_shared& shared,
                           connection_slot slot, std::optional<reject_reason> refused,
                           std::shared_ptr<const tls_context> tls)
    : stream_(std::move(socket)),
      tls_(std::move(tls)),
      worker_(owner),
      hub_(hub),
      shared_(shared),
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
            self->worker_.http().count(handshake_failure::timeout);
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
    if (ec == asio::error::eof || ec == asio::error::connection_reset) {
        spdlog::debug("http {} bad request: {}", slot_.peer().text(), ec.message());
        close();
        return;
    }
    route_decision decision = ec ? route_parse_error(ec) : route_request(view_of(parser_->get()), refused_, *this);
    if (!decision.wait_for_room.empty() && hub_.cluster() != nullptr) {
        answer_when_fed(decision.wait_for_room);
        return;
    }
    answer(std::move(decision));
}

void http_session::answer_when_fed(const std::string& room) {
    hub_.cluster()->open_room(room, [self = shared_from_this()](bool) {
        // On the cluster's thread: back to this connection's worker, which owns it.
        asio::post(self->deadline_.get_executor(), [self] {
            self->room_fed_ = true;  // fed, or the cluster cannot feed it now: either way, no second wait
            route_decision again = route_request(view_of(self->parser_->get()), self->refused_, *self);
            self->room_fed_ = false;
            self->answer(std::move(again));
        });
    });
}

// Counts and logs what the route decided, then writes it.
void http_session::answer(route_decision decision) {
    http_counters& counters = worker_.http();
    if (decision.counts_as_request) {
        counters.http_requests.add();
    }
    if (decision.failure) {
        counters.count(*decision.failure);
    }
    if (!decision.note.empty()) {
        spdlog::debug("http {} {}", slot_.peer().text(), decision.note);
    }
    if (decision.rejected) {
        counters.count(*decision.rejected);
        spdlog::debug("http {} refused: {}", slot_.peer().text(), label(*decision.rejected));
    }
    switch (decision.kind) {
    case route_kind::upgrade:
        write_upgrade(decision);
        return;
    case route_kind::page:
        write_page(decision);
        return;
    case route_kind::respond:
        break;
    }
    response_.emplace(decision.status, 11);
    for (const auto& [name, value] : decision.headers) {
        response_->set(name, value);
    }
    response_->body() = std::move(decision.body);
    response_->keep_alive(decision.keep_alive);
    response_->prepare_payload();
    write_response(!decision.keep_alive);
}

void http_session::write_page(const route_decision& decision) {
    const web_answer& page = *decision.page;
    file_response_.emplace(decision.status, 11);
    auto& res = *file_response_;
    for (const auto& [name, value] : decision.headers) {
        res.set(name, value);
    }
    res.keep_alive(decision.keep_alive);
    if (page.status != web_status::not_modified) {  // a 304 has no body and no Content-Length
        std::string_view body = page.body();
        res.content_length(body.size());
        if (!page.head) {
            res.body() = http::span_body<const char>::value_type(body.data(), body.size());
        }
    }
    http::async_write(stream_, res,
                      [self = shared_from_this(), close_after = !decision.keep_alive](boost::system::error_code ec,
                                                                                     std::size_t) {
                          self->on_write(ec, close_after);
                      });
}

void http_session::write_upgrade(const route_decision& decision) {
    // Only the headers of the 101: no keep_alive(), which would add to Connection.
    deflate_window_bits_ = decision.deflate_window_bits;
    response_.emplace(decision.status, 11);
    for (const auto& [name, value] : decision.headers) {
        response_->set(name, value);
    }
    http::async_write(stream_, *response_, [self = shared_from_this()](boost::system::error_code e, std::size_t) {
        self->on_upgrade_written(e);
    });
}

const config::settings& http_session::settings() const { return worker_.chat().settings(); }

bool http_session::accepting() const { return shared_.accepting.load(std::memory_order_relaxed); }

bool http_session::cluster_degraded() const {
    rooms::cluster_link* cluster = hub_.cluster();
    return cluster != nullptr && cluster->health().degraded;
}

admin_reply http_session::admin(http::verb method, std::string_view path, std::string_view authorization,
                                std::string_view body) {
    return handle_admin(method, path, authorization, body, hub_, settings(), room_fed_);
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
    in.http = shared_.worker_counters;
    in.webhooks = shared_.webhooks;
    in.ready = accepting();
    in.version = PARLEY_VERSION;
    return render_metrics(in);
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
    connection_ptr connection(
        new ws_connection(fd, worker_, std::move(slot_), stream_.release_tls(), deflate_window_bits_));
    connection->start(std::move(leftover));
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
    worker_.http().count(handshake_failure::tls);
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
