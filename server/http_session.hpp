#pragma once

#include "rooms/worker_counters.hpp"
#include "server/connection_limiter.hpp"
#include "server/http_stream.hpp"
#include "server/web_page.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/span_body.hpp>
#include <boost/beast/http/string_body.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

namespace parley::rooms {
class chat_hub;
}

namespace parley::server {

class tls_context;
class worker;

// A connection while it speaks HTTP: Beast parses each request and writes each response.
// Routes: the ws path upgrades to a ws_connection (after checking the handshake and the
// Origin), /healthz answers 200 while the process runs, /readyz 200 until shutdown begins and
// 503 after, /metrics the Prometheus text (when enabled), /admin/ the admin API (admin_api.hpp),
// anything else 404; a malformed
// request gets 400 and the connection closes. A request head must arrive within the handshake
// timeout. A connection accepted over a connection limit (`refused`) answers its request with
// 503 and closes. With a TLS context the connection speaks TLS (https, and wss after the
// upgrade); the handshake must also complete within the handshake timeout, and a client that
// fails it is closed (one that sent plain HTTP gets a short plain-text 400 first).
// Thread: the owning worker's thread.
class http_session : public std::enable_shared_from_this<http_session> {
public:
    // tls: the server's TLS context when the port speaks TLS, else null.
    http_session(boost::asio::ip::tcp::socket socket, worker& owner, rooms::chat_hub& hub,
                 const std::atomic<bool>& accepting, connection_slot slot,
                 std::optional<rooms::reject_reason> refused, std::shared_ptr<const tls_context> tls);
    void start();

private:
    // Requests may carry a small body (the admin API's JSON); other routes ignore it.
    using request_parser = boost::beast::http::request_parser<boost::beast::http::string_body>;
    using response = boost::beast::http::response<boost::beast::http::string_body>;
    // The page's files are sent from the binary's read-only data, never copied.
    using file_response = boost::beast::http::response<boost::beast::http::span_body<const char>>;

    void arm_deadline();
    void do_read();
    void on_read(boost::system::error_code ec);
    void route();
    void route_admin(std::string_view path);
    void respond_page_file(const web_answer& answer, bool keep_alive);
    void upgrade();
    void reject(rooms::reject_reason reason, boost::beast::http::status status, std::string body);
    void respond(boost::beast::http::status status, std::string body, bool keep_alive,
                 std::string_view content_type = "text/plain; charset=utf-8");
    // respond() = prepare_response() + write_response(); the split lets a route add headers.
    void prepare_response(boost::beast::http::status status, std::string body, bool keep_alive,
                          std::string_view content_type = "text/plain; charset=utf-8");
    void write_response(bool close_after);
    void on_write(boost::system::error_code ec, bool close);
    void on_upgrade_written(boost::system::error_code ec);
    void on_tls_failure(boost::system::error_code ec);
    void close();
    std::string metrics_text() const;

    http_stream stream_;
    std::shared_ptr<const tls_context> tls_;  // until start() makes the connection's channel
    worker& worker_;
    rooms::chat_hub& hub_;
    const std::atomic<bool>& accepting_;
    connection_slot slot_;
    std::optional<rooms::reject_reason> refused_;
    boost::beast::flat_buffer buffer_;
    std::optional<request_parser> parser_;
    std::optional<response> response_;
    std::optional<file_response> file_response_;
    boost::asio::steady_timer deadline_;
};

}  // namespace parley::server
