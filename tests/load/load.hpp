#pragma once

// parley-load: options, the counters every worker publishes, and the control block the main
// thread uses to move the workers through the phases of a run.

#include <netinet/in.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace parley::load {

enum class run_mode : std::uint8_t { fanout, idle, churn };

struct options {
    run_mode mode = run_mode::fanout;
    std::string host = "127.0.0.1";
    in_addr host_addr{};
    std::uint16_t port = 8080;
    // Several ports (a cluster's nodes): connection i goes to ports[i % ports.size()]. Always
    // holds at least `port`.
    std::vector<std::uint16_t> ports{8080};
    std::uint32_t connections = 1000;   // fanout, idle
    std::uint32_t rooms = 1;            // default depends on the mode
    std::uint32_t publishers = 1;       // fanout
    std::uint32_t window = 8;           // fanout: says in flight per publisher
    double rate = 0;                    // fanout: total says per second; 0 = window mode
    double duration = 10;               // fanout, churn: measured seconds
    double warmup = 1;                  // fanout: seconds of sending before measuring
    std::uint32_t size = 64;            // fanout: bytes of say text
    std::uint32_t threads = 1;
    bool tls = false;                   // wss: TLS on every connection (the server's [tls] on)
    bool deflate = false;               // offer permessage-deflate (the server's compression on)
    bool words = false;                 // fanout: pad say texts with everyday words, not x's
    int server_pid = 0;
    // Every server process whose CPU counts (a cluster's nodes and its Redis); starts with server_pid.
    std::vector<int> server_pids;
    std::uint32_t source_addrs = 1;     // bind client sockets to 127.0.0.1 .. 127.0.0.K
    double hold = 10;                   // idle: seconds to hold the connections open
    std::uint32_t concurrency = 50;     // churn: cycles in parallel
    double setup_timeout = 60;          // seconds for every connection to log in and join
    std::uint32_t connect_batch = 256;  // connections being set up at once, per worker
    double cycle_timeout = 5;           // churn: seconds one cycle may take
    std::uint32_t history_readers = 0;  // fanout: extra connections reading room "hist"'s history
    std::uint32_t history_limit = 500;  // fanout: messages asked for per history request
    std::uint32_t history_fill = 2000;  // fanout: says put into "hist" before measuring
};

// Connections the generator opens: in fanout, the history readers come after the N members of
// the fanout rooms (global indexes N .. N + readers - 1).
inline std::uint32_t total_connections(const options& o) {
    return o.mode == run_mode::fanout ? o.connections + o.history_readers : o.connections;
}

// Per-worker counters. Each worker counts in plain integers and publishes them to the shared
// atomics once per event-loop pass, so the hot path never touches a shared cache line.
enum counter : std::size_t {
    c_joined,         // connections that got "joined" (fanout, idle; churn counts per cycle)
    c_failed,         // connections that failed during setup
    c_dropped,        // ready connections that closed or failed afterwards
    c_frames,         // server frames received, any kind
    c_bytes_in,       // bytes read
    c_compressed,     // server messages that arrived compressed (permessage-deflate)
    c_deliveries,     // "message" frames carrying a generator timestamp
    c_says,           // says written
    c_refused,        // says answered with an error
    c_expected,       // deliveries the says written should produce (room sizes)
    c_server_errors,  // "error" frames
    c_seq_gaps,       // missing seq numbers seen by a member
    c_seq_backwards,  // seq not greater than the previous one
    c_bad_frames,     // frames the generator could not read (bad JSON, masked, binary)
    c_rate_skipped,   // rate mode: says not sent because the publisher's buffer was full
    c_cycles,         // churn: complete cycles
    c_active,         // churn: slots busy with a cycle (a gauge)
    c_err_connect,    // churn: connect() failed
    c_err_handshake,  // churn: upgrade refused or malformed
    c_err_closed,     // churn: the server closed or reset mid-cycle
    c_err_server,     // churn: an error reply
    c_err_timeout,    // churn: the cycle took longer than --cycle-timeout
    c_fill_acked,     // history: fill says answered (acked or refused)
    c_fill_refused,   // history: fill says answered with an error
    c_history_requests,  // history: replies to requests sent in the measured interval
    c_history_messages,  // history: messages in those replies
    c_history_errors,    // history: requests answered with an error, in any phase
    c_history_waiting,   // history: requests sent and not yet answered (a gauge)
    counter_count
};

using counter_values = std::array<std::uint64_t, counter_count>;

// fill runs only in fanout with history readers: one reader fills room "hist" while nobody else
// sends, so the history read later is long and the fill is not part of the measurement.
enum class phase : int { setup, fill, send, drain, done };

struct control {
    std::uint64_t t0 = 0;  // CLOCK_MONOTONIC ns; every timestamp in the run is relative to it
    std::atomic<int> current{static_cast<int>(phase::setup)};
    // Latency is recorded for says stamped in [measure_start, measure_end).
    std::atomic<std::uint64_t> measure_start{UINT64_MAX};
    std::atomic<std::uint64_t> measure_end{UINT64_MAX};
    std::uint64_t hard_deadline = 0;  // workers stop by themselves after this (ns since t0)
    // seq of the first fill message in room "hist" (0 until its ack arrived). The room may hold
    // messages from an earlier run, so history readers page relative to it.
    std::atomic<std::uint64_t> history_base{0};

    phase get() const { return static_cast<phase>(current.load(std::memory_order_acquire)); }
    void set(phase p) { current.store(static_cast<int>(p), std::memory_order_release); }
};

// Members of room r when connection i joins room i % rooms.
inline std::uint64_t room_members(std::uint32_t connections, std::uint32_t rooms, std::uint32_t r) {
    return connections / rooms + (r < connections % rooms ? 1 : 0);
}

}  // namespace parley::load
