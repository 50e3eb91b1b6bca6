#pragma once

// A whole client connection driven by a byte stream, with the socket replaced by buffers: the
// layers a parleyd connection runs, composed without server/ (which owns a descriptor in an epoll
// set and cannot be fed from memory).
//
// What runs, as in the daemon: Beast's HTTP request parser with the daemon's header limit; the
// daemon's own routing (server/http_routes: WebSocket path, protocol::check_upgrade, the Origin
// rule, Sec-WebSocket-Accept, every plain route), keep-alive HTTP requests before the upgrade; then, with
// the bytes left over, protocol::frame_parser and the reactions of server/ws_connection (pong,
// close echo, close on a protocol error, closing and draining phases, the chat session ended from
// a posted task), a rooms::chat_session on worker 0 of a real chat_hub with two workers, whose
// tasks run after every piece of input. Three other users are online: carol on worker 0 and bob on
// worker 1, both in the permanent room "lobby" (so says fan out across workers and a dm can reach
// someone) and, with dave on worker 1, in "crowd", which is full. Lobby's log already holds 9
// messages, one more than it retains.
//
// Not modelled: the descriptor, epoll, partial writes, the write queue and its slow-consumer bound,
// timers (handshake, login and idle timeouts, keepalive pings, the close linger), connection
// limits, shutdown, the /metrics body (a stand-in), the admin API (no token: 404), logging, and
// threads (each worker's tasks run on this one).
//
// The input's first byte sets how the rest arrives: 0 in one piece, n in pieces of n bytes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::fuzz {

// What the client was sent; every frame was checked on the way (see connection_harness.cpp).
struct connection_transcript {
    std::vector<unsigned> http_statuses;  // one per HTTP response, 101 for the upgrade
    std::vector<std::string> replies;     // each text frame's "type" ("error:<code>" for errors), in order
    std::size_t pongs = 0;
    std::optional<std::uint16_t> close_sent;  // the status of the server's close frame
    std::size_t peer_frames = 0;              // frames the other users received after their joins
};

// Runs one input; aborts (fuzz::fail) when an invariant breaks.
connection_transcript run_connection(std::string_view input);

}  // namespace parley::fuzz
