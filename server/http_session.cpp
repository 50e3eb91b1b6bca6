#include "server/http_session.hpp"

#include "protocol/handshake.hpp"
#include "rooms/chat_hub.hpp"
#include "server/worker.hpp"
#include "server/ws_connection.hpp"

#include <boost/asio/buffers_iterator.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <spdlog/spdlog.h>

namespace parley::server {

namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace {
// A client must send a complete request head this quickly after connecting (and between
// keep-alive requests); slow-loris connections are dropped.
constexpr std::chrono::seconds handshake_timeout{10};

std::string_view to_view(boost::beast::string_view s) { return {s.data(), s.size()}; }
}  // namespace

http_session::http_session(asio::ip::tcp::socket socket, worker& owner, rooms::chat_hub& hub)
    : socket_(std::move(socket)), worker_(owner), hub_(hub), deadline_(owner.io()) {
    boost::system::error_code ec;
    auto endpoint = socket_.remote_endpoint(ec);
    if (!ec) {
        peer_ = endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
    }
}

void http_session::start() {
    deadline_.expires_after(handshake_timeout);
    deadline_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
        if (auto self = weak.lock(); self && !ec) {
            spdlog::debug("http {} handshake timeout", self->peer_);
            self->close();
        }
    });
    do_read();
}

void http_session::do_read() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(hub_.settings().max_request_header_bytes));
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](boost::system::error_code ec, std::size_t) { self->on_read(ec); });
}

void http_session::on_read(boost::system::error_code ec) {
    if (ec == http::error::end_of_stream || ec == asio::error::operation_aborted) {
        close();
        return;
    }
    if (ec) {
        spdlog::debug("http {} bad request: {}", peer_, ec.message());
        if (ec == http::error::header_limit) {
            respond(http::status::request_header_fields_too_large, "request head too large\n", false);
        } else if (ec == asio::error::eof || ec == asio::error::connection_reset) {
            close();
        } else {
            respond(http::status::bad_request, "malformed HTTP request\n", false);
        }
        return;
    }
    route();
}

void http_session::route() {
    const auto& req = parser_->get();
    std::string_view target = to_view(req.target());
    std::string_view path = target.substr(0, target.find('?'));
    bool keep_alive = req.keep_alive();

    if (path == hub_.settings().ws_path) {
        upgrade();
        return;
    }
    if (path == "/healthz") {
        if (req.method() != http::verb::get && req.method() != http::verb::head) {
            respond(http::status::method_not_allowed, "use GET\n", keep_alive);
            return;
        }
        respond(http::status::ok, "ok", keep_alive);
        return;
    }
    respond(http::status::not_found, "not found\n", keep_alive);
}

void http_session::upgrade() {
    const auto& req = parser_->get();
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
        spdlog::debug("http {} upgrade refused: {}", peer_, verdict.reason);
        response_.emplace(http::status::upgrade_required, 11);
        response_->set(http::field::sec_websocket_version, "13");
        response_->set(http::field::content_type, "text/plain");
        response_->body() = std::string(verdict.reason) + "\n";
        response_->keep_alive(false);
        response_->prepare_payload();
        http::async_write(socket_, *response_, [self = shared_from_this()](boost::system::error_code e, std::size_t) {
            self->on_write(e, true);
        });
        return;
    }
    if (verdict.verdict == protocol::upgrade_verdict::bad_request) {
        spdlog::debug("http {} upgrade refused: {}", peer_, verdict.reason);
        respond(http::status::bad_request, std::string(verdict.reason) + "\n", false);
        return;
    }
    response_.emplace(http::status::switching_protocols, 11);
    response_->set(http::field::upgrade, "websocket");
    response_->set(http::field::connection, "Upgrade");
    response_->set(http::field::sec_websocket_accept, protocol::websocket_accept(check_input.ws_key));
    http::async_write(socket_, *response_, [self = shared_from_this()](boost::system::error_code e, std::size_t) {
        self->on_upgrade_written(e);
    });
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
    auto connection = std::make_shared<ws_connection>(std::move(socket_), worker_, hub_);
    connection->start(std::move(leftover));
}

void http_session::respond(http::status status, std::string body, bool keep_alive) {
    response_.emplace(status, 11);
    response_->set(http::field::server, "parleyd");
    response_->set(http::field::content_type, "text/plain; charset=utf-8");
    response_->body() = std::move(body);
    response_->keep_alive(keep_alive);
    response_->prepare_payload();
    http::async_write(socket_, *response_,
                      [self = shared_from_this(), keep_alive](boost::system::error_code ec, std::size_t) {
                          self->on_write(ec, !keep_alive);
                      });
}

void http_session::on_write(boost::system::error_code ec, bool close_after) {
    if (ec || close_after) {
        close();
        return;
    }
    deadline_.expires_after(handshake_timeout);
    deadline_.async_wait([weak = weak_from_this()](boost::system::error_code e) {
        if (auto self = weak.lock(); self && !e) {
            self->close();
        }
    });
    do_read();
}

void http_session::close() {
    boost::system::error_code ec;
    deadline_.cancel();
    socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    socket_.close(ec);
}

}  // namespace parley::server
