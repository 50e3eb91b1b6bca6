#pragma once

#include "protocol/frame_parser.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/session_output.hpp"
#include "server/frame_queue.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>
#include <string>

namespace parley::server {

class worker;

// One WebSocket connection after the 101 response, speaking through parley's own frame layer.
//
// Reads use the reactor pattern: wait until the socket is readable, then read non-blocking into
// the worker's shared buffer, so an idle connection holds no read buffer. Writes are corked and
// gathered: frames queue as shared references, the worker flushes each connection once per
// event-loop pass, and one writev carries every queued frame. The queue is bounded in bytes;
// a client past the bound is closed with 1008 and the room never waits for it.
// Thread: the owning worker's thread only; the object owns itself through shared_from_this.
class ws_connection final : public std::enable_shared_from_this<ws_connection>,
                            public rooms::session_output,
                            private protocol::frame_sink {
public:
    ws_connection(boost::asio::ip::tcp::socket socket, worker& owner, rooms::chat_hub& hub);
    ~ws_connection() override;

    // Starts reading; `leftover` are bytes that arrived after the upgrade request.
    void start(std::string leftover);

    // session_output
    void send(const protocol::shared_frame& frame) override;
    void close(protocol::close_code code, std::string_view reason) override;

    // Called by the worker once per event-loop pass when this connection has queued frames.
    void flush();

    std::size_t worker_slot = 0;  // position in the worker's connection list

private:
    enum class phase : unsigned char { open, closing, draining, closed };

    // frame_sink
    void on_text(std::string_view message) override;
    void on_ping(std::string_view payload) override;
    void on_pong(std::string_view payload) override;
    void on_close(std::uint16_t code, std::string_view reason) override;

    void wait_readable();
    void on_readable();
    void consume(char* data, std::size_t size);
    void wait_writable();
    void queue_control(const protocol::shared_frame& frame);
    void start_close(protocol::close_code code, std::string_view reason);
    void after_close_sent();
    void arm_close_timer(std::chrono::milliseconds after);
    void terminate(const char* why);

    boost::asio::ip::tcp::socket socket_;
    worker& worker_;
    protocol::frame_parser parser_;
    frame_queue queue_;
    rooms::chat_session chat_;
    std::unique_ptr<boost::asio::steady_timer> close_timer_;  // only while closing
    std::size_t queue_limit_;
    phase phase_ = phase::open;
    bool write_waiting_ = false;   // waiting for the socket to become writable
    bool flush_scheduled_ = false; // in the worker's flush list
    bool close_queued_ = false;    // our close frame is in the queue
    bool peer_closed_ = false;     // the client sent its close frame
};

}  // namespace parley::server
