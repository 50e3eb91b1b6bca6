#pragma once

// The daemon configuration the soak runs against: limits small enough that every hostile
// behaviour reaches its limit within seconds, and the few values the clients must know.

#include <chrono>
#include <cstddef>
#include <string>

namespace parley::soak {

using milliseconds = std::chrono::milliseconds;

struct soak_limits {
    milliseconds handshake_timeout{1000};   // a stalled HTTP request is dropped after this
    milliseconds login_timeout{1500};       // an upgraded connection that never logs in
    milliseconds idle_timeout{8000};        // a logged-in connection that sends nothing
    milliseconds ping_interval{2000};
    std::size_t max_request_header_bytes = 4096;
    std::size_t max_message_bytes = 16384;
    std::size_t max_text_bytes = 1024;
    // Far above what a reading client ever has queued (a room sends it a few KB per second),
    // far below what a client that stops reading is sent by its history requests.
    std::size_t write_queue_limit_bytes = 131072;
    double rate_per_second = 10;            // well-behaved clients send one request per 1.5 s
    int rate_burst = 20;
    int rate_strikes = 10;
    // Each well-behaved room has its own client address with 30 members: the per-address
    // limit leaves them room and still refuses one hostile address that opens more.
    std::size_t max_connections_per_ip = 40;
    std::size_t max_connections = 2000;
    std::size_t history_per_room = 200;     // filled during the warm-up, so the baseline holds it
    std::size_t history_max_limit = 200;
};

// The daemon's TOML configuration for these limits. The log stays at info, where the daemon
// announces its port (one line per WebSocket connection that ends, too: some thousands).
std::string daemon_config(const soak_limits& limits);

}  // namespace parley::soak
