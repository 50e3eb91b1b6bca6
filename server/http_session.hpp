#pragma once

#include "server/connection_limiter.hpp"
#include "server/http_counters.hpp"
#include "server/http_routes.hpp"
#include "server/http_stream.hpp"

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
#include <vector>

namespace parley::rooms {
class chat_hub;
}

namespace parley::server {

class tls_context;
class worker;
struct webhook_counters;

// What every HTTP connection of a server reads of the server: owned by the server, which outlives
// its connections.
struct http_shared {
    const std::atomic<bool>& accepting;                  // false once shutdown begins
    std::vector<const http_counters*> worker_counters;   // every worker's, for /metrics
    const webhook_counters* webhooks = nullptr;          // the webhook sender's, for /metrics
};

// A connection while it speaks HTTP: Beast parses each request and writes each response; what
// each request gets is decided by route_request (http_routes.hpp), and the upgrade hands the
// socket to a ws_connection. A malformed request gets 400 and the connection closes. A request
// head must arrive within the handshake timeout. A connection accepted over a connection limit
// (`refused`) answers its request with 503 and closes. With a TLS context the connection speaks TLS (https, and wss after the
// upgrade); the handshake must also complete within the handshake timeout, and a client that
// fails it is closed (one that sent plain HTTP gets a short plain-text 400 first).
// Thread: the owning worker's thread.
class http_session : public std::enable_shared_from_this<http_session>, private route_environment {
public:
    // tls: the server's TLS context when the port speaks TLS, else null.
    http_session(boost::asio::ip::tcp::socket socket, worker& owner, rooms::chat_hub& hub, const http_shared& shared,
                 connection_slot slot, std::optional<reject_reason> refused, std::shared_ptr<const tls_context> tls);
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
    void answer(route_decision decision);
    // An admin request whose room the cluster must feed here first: asks the cluster, then
    // routes the request again (on this worker) with room_fed_ set.
    void answer_when_fed(const std::string& room);
    void write_page(const route_decision& decision);
    void write_upgrade(const route_decision& decision);
    void write_response(bool close_after);
    void on_write(boost::system::error_code ec, bool close);
    void on_upgrade_written(boost::system::error_code ec);
    void on_tls_failure(boost::system::error_code ec);
    void close();

    // route_environment
    const config::settings& settings() const override;
    bool accepting() const override;
    bool cluster_degraded() const override;
    std::string metrics_text() const override;
    admin_reply admin(boost::beast::http::verb method, std::string_view path, std::string_view authorization,
                      std::string_view body) override;

    http_stream stream_;
    std::shared_ptr<const tls_context> tls_;  // until start() makes the connection's channel
    worker& worker_;
    rooms::chat_hub& hub_;
    const http_shared& shared_;
    connection_slot slot_;
    std::optional<reject_reason> refused_;
    boost::beast::flat_buffer buffer_;
    std::optional<request_parser> parser_;
    std::optional<response> response_;
    std::optional<file_response> file_response_;
    boost::asio::steady_timer deadline_;
    bool room_fed_ = false;  // routing again after answer_when_fed
    std::uint8_t deflate_window_bits_ = 0;  // the upgrade agreed on permessage-deflate (route_decision)
};

}  // namespace parley::server
