#pragma once

// The fuzzed client's connection with its socket replaced by buffers: what server/http_session
// does with the request head (Beast's parser, then the daemon's own route_request from
// server/http_routes.hpp, whose upgrade decision it follows), then what server/
// ws_connection does with the frames (frame_parser, pong, close echo, close on a protocol error,
// the closing and draining phases, the chat session ended from a task), in the same order. Every
// frame it would write is checked and recorded instead.

#include "protocol/frame_parser.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/session_output.hpp"
#include "server/http_routes.hpp"
#include "tests/fuzz/connection_harness.hpp"
#include "tests/fuzz/fuzz_world.hpp"
#include "tests/fuzz/server_frames.hpp"

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::fuzz {

// Thread: the test's only thread, acting as worker 0.
class buffer_connection final : public rooms::session_output,
                                private protocol::frame_sink,
                                private server::route_environment {
public:
    buffer_connection(chat_world& world, connection_transcript& transcript);
    buffer_connection(const buffer_connection&) = delete;
    buffer_connection& operator=(const buffer_connection&) = delete;

    // Bytes that arrived in one read.
    void receive(std::string_view bytes);
    // The end of a pass of the worker's loop: queued frames are written, which completes a close.
    void flush();
    // The client hung up.
    void end_of_input();

    bool upgraded() const { return chat_.has_value(); }
    const rooms::chat_session& chat() const { return *chat_; }

    // session_output
    void send(const protocol::shared_frame& frame) override;
    void close(protocol::close_code code, std::string_view reason) override;

private:
    enum class phase : unsigned char { http, open, closing, draining, closed };
    using request_parser = boost::beast::http::request_parser<boost::beast::http::empty_body>;

    void on_http_bytes(std::string_view bytes);
    void answer(const server::route_decision& decision);
    void upgrade(const server::route_decision& decision);
    void respond(unsigned status, bool keep_alive);

    // route_environment: a single node that accepts, has no admin token, and a stand-in for the
    // /metrics text (the metrics are not what is fuzzed).
    const config::settings& settings() const override;
    bool accepting() const override { return true; }
    bool cluster_degraded() const override { return false; }
    std::string metrics_text() const override { return "parley_up 1\n"; }
    server::admin_reply admin(boost::beast::http::verb method, std::string_view path, std::string_view authorization,
                              std::string_view body) override;
    void consume(std::string& bytes);

    // frame_sink
    void on_text(std::string_view message) override;
    void on_ping(std::string_view payload) override;
    void on_pong(std::string_view payload) override;
    void on_close(std::uint16_t code, std::string_view reason) override;

    void start_close(protocol::close_code code, std::string_view reason);
    void end_chat_later();
    void write_control(const std::string& bytes);
    void terminate();

    chat_world& world_;
    connection_transcript& transcript_;
    phase phase_ = phase::http;
    std::string http_buffer_;  // the daemon's flat_buffer: bytes the HTTP parser has not consumed
    std::optional<request_parser> http_parser_;
    protocol::frame_parser parser_;
    std::optional<rooms::chat_session> chat_;  // from the upgrade on, as ws_connection's
    seq_order order_;
    std::vector<nlohmann::json> replies_;  // what the request being handled was answered
    bool handling_request_ = false;
    bool close_queued_ = false;  // our close frame is written at the next flush
    bool peer_closed_ = false;   // the client sent its close frame
};

}  // namespace parley::fuzz
