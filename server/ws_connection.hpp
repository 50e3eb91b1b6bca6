#pragma once

#include "protocol/frame_parser.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/session_output.hpp"
#include "server/connection_limiter.hpp"
#include "server/connection_poller.hpp"
#include "server/frame_queue.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/smart_ptr/intrusive_ptr.hpp>

#include <memory>
#include <optional>
#include <string>

struct iovec;

namespace parley::server {

class tls_channel;
class worker;
class ws_connection;

// Connections are counted by an intrusive, non-atomic count: every reference is taken and
// dropped on the owning worker's thread, and a shared_ptr would add a control block and a weak
// count (32 bytes) to every open connection.
void intrusive_ptr_add_ref(ws_connection* c) noexcept;
void intrusive_ptr_release(ws_connection* c) noexcept;
using connection_ptr = boost::intrusive_ptr<ws_connection>;

// One WebSocket connection after the 101 response, speaking through parley's own frame layer.
//
// The socket is a plain non-blocking descriptor in the worker's own edge-triggered epoll set
// (connection_poller): no Asio socket, no reactor state, no pending operation per connection.
// Reads follow the reactor pattern: when readable, read into the worker's shared buffer until
// EAGAIN, so an idle connection holds no read buffer. Writes are corked and gathered: frames
// queue as shared references, the worker flushes each connection once per event-loop pass, and
// one sendmsg carries every queued frame. The queue is bounded in bytes; a client past the bound
// is closed with 1008 and the room never waits for it.
// With permessage-deflate a message frame is queued as its compressed twin, made once by the
// first connection that needs it and then shared like the plain frame.
// Over TLS the same frames are gathered the same way, then encrypted by the connection's
// tls_channel (small frames as one piece) and the ciphertext leaves in one send(); ciphertext
// the socket did not take waits in the channel, and no more frames are encrypted until it is
// gone, so the byte bound keeps applying to the frame queue.
// Thread: the owning worker's thread only. The worker holds the owning reference from start()
// until the connection ends; tasks and timers in flight hold one too (connection_ptr). Objects
// come from a slab of equal-sized slots (server/slab.hpp).
class ws_connection final : public rooms::session_output,
                            private protocol::frame_sink,
                            private poll_target {
public:
    // fd: the connected, upgraded TCP socket, now owned by this object.
    // slot: this connection's place in the connection limits (and its peer address).
    // tls: the connection's TLS state when it speaks TLS (null for plain TCP).
    // deflate_window_bits: the handshake agreed on permessage-deflate with this server window
    // (deflate_offer.hpp); 0: it did not.
    ws_connection(int fd, worker& owner, connection_slot slot, std::unique_ptr<tls_channel> tls = nullptr,
                  std::uint8_t deflate_window_bits = 0);
    ~ws_connection() override;
    ws_connection(const ws_connection&) = delete;
    ws_connection& operator=(const ws_connection&) = delete;

    static void* operator new(std::size_t size);
    static void operator delete(void* p) noexcept;

    // Joins the worker's set and starts reading; `leftover` are bytes that arrived after the
    // upgrade request (plaintext; over TLS more may still wait, undecrypted, in the channel).
    void start(std::string leftover);

    // session_output
    void send(const protocol::shared_frame& frame) override;
    void close(protocol::close_code code, std::string_view reason) override;

    // Called by the worker once per event-loop pass when this connection has queued frames.
    void flush();

    // Called by the worker's housekeeping timer (a few times a second) with the worker's clock:
    // closes a connection that did not log in within the login timeout, pings one that was
    // silent for the ping interval, closes one silent for the idle timeout.
    void check_timeouts(std::uint64_t now_ms);


private:
    enum class phase : unsigned char { open, closing, draining, closed };

    // frame_sink
    void on_text(std::string_view message) override;
    void on_ping(std::string_view payload) override;
    void on_pong(std::string_view payload) override;
    void on_close(std::uint16_t code, std::string_view reason) override;

    // poll_target
    void on_poll(std::uint32_t events) override;

    void on_readable();
    void consume(char* data, std::size_t size);
    // TLS: decrypts what the channel holds and hands the plaintext to consume(). False when the
    // connection ended (a TLS error or the client's close_notify).
    bool read_tls();
    // Fills iov with the queued frames (small ones copied into the worker's staging buffer);
    // returns the entries used and sets total to their bytes.
    std::size_t gather(iovec* iov, std::size_t& total);
    void flush_tls();
    // TLS: sends the channel's ciphertext; false when the socket would block (then waits for
    // it) or failed (then the connection ended).
    bool send_tls_output();
    void wait_writable();
    void queue_control(const protocol::shared_frame& frame);
    void start_close(protocol::close_code code, std::string_view reason);
    void after_close_sent();
    void arm_close_timer(std::chrono::milliseconds after);
    void terminate(const char* why);
    void push_frame(const protocol::shared_frame& frame);
    void request_flush();  // puts this connection on the worker's flush list
    void queue_bytes_changed(std::size_t before);

    worker& worker_;
    protocol::frame_parser parser_;
    frame_queue queue_;
    rooms::chat_session chat_;
    struct closing_state {
        explicit closing_state(boost::asio::io_context& io) : timer(io) {}
        boost::asio::steady_timer timer;
        std::uint16_t code = 0;  // the close status we sent
        std::string reason;      // why, for the log line
    };
    // What only some connections need, behind one pointer, so that an open plain connection
    // pays 8 bytes for all of it: the TLS state (TLS connections, from the start) and the
    // closing state (once closing starts).
    struct side_state {
        std::unique_ptr<tls_channel> tls;
        std::optional<closing_state> closing;
    };
    tls_channel* tls() const { return side_ ? side_->tls.get() : nullptr; }
    closing_state* closing() const { return side_ && side_->closing ? &*side_->closing : nullptr; }
    std::unique_ptr<side_state> side_;
    connection_slot slot_;
    std::uint64_t opened_ms_;   // precise worker clock at open (login timeout, duration)
    std::uint64_t last_rx_ms_;  // worker clock at the last bytes received (ping, idle timeout)
    int fd_;
    std::uint32_t refs_ = 0;

public:
    std::uint32_t worker_slot = 0;  // position in the worker's connection list

private:
    friend void intrusive_ptr_add_ref(ws_connection* c) noexcept;
    friend void intrusive_ptr_release(ws_connection* c) noexcept;
    phase phase_ = phase::open;
    // One bit each: every open connection carries them.
    bool ping_outstanding_ : 1 = false;
    bool write_waiting_ : 1 = false;   // waiting for the socket to become writable
    bool flush_scheduled_ : 1 = false; // in the worker's flush list
    bool close_queued_ : 1 = false;    // our close frame is in the queue
    bool peer_closed_ : 1 = false;     // the client sent its close frame
    bool peer_hung_up_ : 1 = false;    // epoll reported the client's FIN (or an error): read to the end
    // permessage-deflate: 0 when not negotiated, else the client's server_max_window_bits.
    // Messages it receives go out as their frame's compressed twin (message_deflate.hpp).
    std::uint8_t deflate_window_bits_ = 0;
};

}  // namespace parley::server
