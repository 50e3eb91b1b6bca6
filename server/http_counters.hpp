#pragma once

#include "rooms/worker_counters.hpp"

#include <array>
#include <cstddef>

namespace parley::server {

// Why a connection was refused before it became a WebSocket.
enum class reject_reason : unsigned char {
    max_connections,         // the total limit
    max_connections_per_ip,  // the per-address limit
    origin,                  // Origin not allowed (403)
    shutting_down,           // arrived during shutdown (503)
};
inline constexpr std::size_t reject_reason_count = 4;

// Why an HTTP connection failed to become a WebSocket (the client's fault).
enum class handshake_failure : unsigned char {
    bad_request,         // malformed HTTP or a bad upgrade request (400)
    upgrade_required,    // wrong Sec-WebSocket-Version or not an upgrade (426)
    header_too_large,    // 431
    timeout,             // no complete request head in time
    tls,                 // the TLS handshake failed: garbage, plain HTTP, no common cipher
};
inline constexpr std::size_t handshake_failure_count = 5;

// What one worker counts of the HTTP side of its connections (before any becomes a WebSocket).
// Written only by that worker's thread (rooms::local_counter: one writer); summed over the
// workers when /metrics is scraped, from any thread.
struct alignas(64) http_counters {
    std::array<rooms::local_counter, reject_reason_count> rejected;
    std::array<rooms::local_counter, handshake_failure_count> handshake_failures;
    rooms::local_counter http_requests;  // plain HTTP requests answered (healthz, metrics, 404...)

    void count(reject_reason reason) { rejected[static_cast<std::size_t>(reason)].add(); }
    void count(handshake_failure failure) { handshake_failures[static_cast<std::size_t>(failure)].add(); }
};

}  // namespace parley::server
