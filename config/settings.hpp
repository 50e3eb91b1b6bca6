#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace parley::config {

// Every tunable of the daemon with its default. The command line fills it today; the config
// file issue adds a TOML loader that fills the same struct. Nothing else in the code hard-codes
// a limit: each module reads the value it needs from here.
struct settings {
    // [server]
    std::string bind = "0.0.0.0";
    std::uint16_t port = 8080;
    unsigned threads = 0;              // 0: one worker per core
    std::string ws_path = "/ws";

    // [limits]
    std::size_t max_message_bytes = 64 * 1024;        // one WebSocket message, after reassembly
    std::size_t max_text_bytes = 4096;                // `text` of say and dm
    std::size_t max_rooms_per_connection = 100;
    std::size_t max_room_members = 100000;
    std::size_t write_queue_limit_bytes = 4 * 1024 * 1024;  // slow consumer bound
    double rate_limit_per_second = 200;               // requests per connection (token bucket)
    double rate_limit_burst = 400;
    std::uint32_t rate_limit_strikes = 50;  // rejected requests in a row before close 1008
    std::size_t max_request_header_bytes = 8 * 1024;  // HTTP request head

    // [rooms]
    std::size_t history_per_room = 1000;   // messages kept per room (memory store)
    std::size_t joined_history = 50;       // messages sent in `joined`
    std::size_t history_default_limit = 50;
    std::size_t history_max_limit = 500;
    std::uint32_t typing_interval_ms = 1000;  // at most one typing per user per room per interval

    // [log]
    std::string log_level = "info";
};

// Rejects values no daemon can run with; returns an empty string when valid, else the reason.
std::string validate(const settings& s);

}  // namespace parley::config
