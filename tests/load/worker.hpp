#pragma once

// One load-generator thread: an edge-triggered epoll loop over its share of the client
// connections, all non-blocking. Reads go into one large buffer owned by the worker; only the bytes of a frame cut
// off by the end of a read are kept per connection. Frames to send are appended to the
// connection's output buffer and written once per loop pass (one write() per connection carries
// every frame queued in that pass).

#include "histogram.hpp"
#include "json_scan.hpp"
#include "load.hpp"
#include "message_inflater.hpp"
#include "tls_link.hpp"
#include "ws_wire.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace parley::load {

class worker {
public:
    // Worker id of threads owns connection (or churn slot) i when i % threads == id.
    worker(const options& opts, control& ctl, std::uint32_t id);
    ~worker();
    worker(const worker&) = delete;
    worker& operator=(const worker&) = delete;

    // The thread body: runs until the control block says done (or the hard deadline passes).
    void run();

    // Published counters (any thread).
    std::uint64_t get(counter c) const { return published_[c].load(std::memory_order_relaxed); }

    // Valid after run() returned.
    const histogram& latency() const { return *latency_; }
    const histogram& cycle_time() const { return *cycle_time_; }
    const histogram& history_time() const { return *history_time_; }
    const std::string& first_error() const { return first_error_; }

private:
    // securing: the TLS handshake (--tls), between the connect and the upgrade.
    enum class state : std::uint8_t { unused, connecting, securing, handshake, login_wait, join_wait, ready, closing, dead };

    struct conn {
        int fd = -1;
        SSL* ssl = nullptr;          // --tls: the session over fd
        std::uint32_t gen = 0;       // bumped when the fd is closed, to drop stale events
        std::uint32_t index = 0;     // global connection index (churn: slot index)
        std::uint32_t room = 0;
        std::int32_t publisher = -1;
        std::int32_t reader = -1;    // history reader index (fanout), in room "hist"
        state st = state::unused;
        bool dirty = false;          // on the flush list
        bool want_out = false;       // waiting for EPOLLOUT
        bool in_fragment = false;    // a fragmented server message is being assembled
        bool history_owed = false;   // reader: a history request to write at the next flush
        bool history_waiting = false;  // reader: a history request not yet answered
        std::uint32_t inflight = 0;  // publisher: says not yet echoed
        std::uint32_t owed = 0;      // publisher: says to write at the next flush
        std::int64_t last_seq = -1;
        std::uint64_t started = 0;   // ns: connect began
        std::uint64_t deadline = 0;  // ns: setup or cycle deadline
        std::uint64_t say_t = 0;     // churn: timestamp of our say
        std::uint64_t cycle = 0;     // churn: cycles begun on this slot
        std::uint64_t history_sent = 0;   // reader: when the request in flight was written
        std::uint64_t history_count = 0;  // reader: history requests written
        std::size_t out_off = 0;
        std::string out;             // frames not yet written
        std::string carry;           // handshake bytes, or the unfinished tail of a frame
        std::string fragment;        // fragmented message being assembled
        std::string accept;          // expected Sec-WebSocket-Accept (until the handshake)
    };

    static bool in_setup(state s) { return s >= state::connecting && s <= state::join_wait; }
    std::uint64_t now() const;
    void maintain(std::uint64_t now, phase ph);
    void start_connect(conn& c, std::uint64_t now);
    void on_event(std::uint64_t data, std::uint32_t events);
    void on_connected(conn& c);
    void drive_tls(conn& c);
    void start_upgrade(conn& c);
    // recv() and send() over the socket, or through TLS with --tls (EAGAIN when TLS waits).
    ssize_t read_some(conn& c, char* data, std::size_t size);
    ssize_t write_some(conn& c, const char* data, std::size_t size);
    void on_readable(conn& c);
    void on_bytes(conn& c, char* data, std::size_t size, std::uint64_t now);
    void on_frames(conn& c, char* data, std::size_t size, std::uint64_t now);
    void on_frame(conn& c, const frame_header& h, char* payload, std::uint64_t now);
    void on_text(conn& c, std::string_view text, std::uint64_t now);
    void on_message(conn& c, const server_fields& f, std::uint64_t now);
    void on_joined(conn& c, std::uint64_t now);
    void on_peer_gone(conn& c, counter churn_reason);
    void send_text(conn& c, std::string_view payload);
    void send_login(conn& c);
    void send_join(conn& c);
    void append_say(conn& c, std::uint64_t t);
    // Pads a say's text with n bytes: 'x's, or everyday words with --words.
    void pad_text(std::string& p, std::size_t n);
    void start_fill();
    void start_readers();
    void on_reader_text(conn& c, const server_fields& f, std::uint64_t now);
    void on_fill_answer(conn& c, const server_fields& f);
    void on_history_answer(conn& c, const server_fields& f, std::uint64_t now);
    void append_fill_say(conn& c);
    void append_history(conn& c, std::uint64_t t);
    std::uint64_t history_before(const conn& c) const;
    void mark_dirty(conn& c);
    void flush_all();
    void flush(conn& c);
    void set_out_interest(conn& c, bool want);
    void close_conn(conn& c, state next);
    void fail(conn& c, counter churn_reason, std::string_view what);
    void finish_cycle(conn& c, std::uint64_t now);
    void publish();
    void note_error(std::string_view what);
    std::uint32_t slot_of(const conn& c) const { return static_cast<std::uint32_t>(&c - conns_.data()); }

    const options& opts_;
    control& ctl_;
    int ep_ = -1;
    SSL_CTX* tls_ = nullptr;  // --tls
    fast_rng rng_;
    std::vector<conn> conns_;
    std::vector<std::uint32_t> dirty_;
    std::vector<std::uint32_t> publishers_;  // slots of this worker's publishers
    std::vector<std::uint32_t> readers_;     // slots of this worker's history readers
    std::uint32_t filler_ = UINT32_MAX;      // slot of history reader 0, if this worker has it
    std::uint32_t fill_sent_ = 0;            // fill says written
    std::vector<char> rbuf_;
    std::string scratch_;
    std::string scratch2_;
    std::string held_;       // a frame completed from a connection's carried bytes
    std::string held_text_;  // a reassembled fragmented message
    // --deflate: one stream, reset per message, and its output; made only then, so the plain
    // runs' worker keeps the layout it had.
    struct inflate_state {
        message_inflater inflater;
        std::string inflated;
    };
    std::unique_ptr<inflate_state> inflate_;
    std::vector<std::uint32_t> free_slots_;  // churn: slots ready for a new cycle
    std::vector<std::uint32_t> starting_;
    std::vector<std::uint64_t> read_again_;  // connections left with unread bytes (epoll data)
    std::vector<std::uint64_t> reading_;
    std::uint64_t last_deadline_check_ = 0;
    std::size_t next_setup_ = 0;  // next slot to connect (fanout, idle)
    std::uint32_t in_setup_ = 0;  // slots between connect and joined
    bool sending_started_ = false;
    bool fill_started_ = false;
    bool readers_started_ = false;
    std::uint64_t rate_start_ = 0;
    std::uint64_t rate_sent_ = 0;
    std::size_t rate_next_ = 0;
    double my_rate_ = 0;  // says per second for this worker's publishers
    std::uint64_t measure_start_ = UINT64_MAX;
    std::uint64_t measure_end_ = UINT64_MAX;
    bool sending_ = false;
    counter_values local_{};
    std::array<std::atomic<std::uint64_t>, counter_count> published_{};
    std::unique_ptr<histogram> latency_;
    std::unique_ptr<histogram> cycle_time_;
    std::unique_ptr<histogram> history_time_;
    std::string first_error_;
};

}  // namespace parley::load
