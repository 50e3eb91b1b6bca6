#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace parley::protocol {

// The server's side of negotiating permessage-deflate (RFC 7692) in the upgrade handshake.
//
// parley always answers with server_no_context_takeover and client_no_context_takeover (the
// server may add the latter unasked, RFC 7692 section 7.1.1.2): every message in either direction
// is compressed on its own. So a connection keeps no zlib state: a broadcast is compressed once
// and the same compressed frame goes to every member that negotiated, and a worker inflates every
// client message with one stream it resets per message.
struct deflate_agreement {
    bool agreed = false;
    // The largest back-reference distance a compressed message sent to this client may use is
    // 2^server_window_bits (the client's server_max_window_bits, 15 when it named none). Messages
    // are compressed without context, so a message no longer than that always fits; a longer one
    // goes uncompressed to such a client.
    std::uint8_t server_window_bits = 15;
    // The Sec-WebSocket-Extensions value of the 101 response; empty when not agreed.
    std::string response;
};

// Picks the first permessage-deflate offer of a Sec-WebSocket-Extensions value that parley can
// accept. An offer is declined (and the next one tried) when a parameter is unknown, repeated, or
// has a value out of its grammar (window bits are 8..15, digits, optionally quoted); other
// extensions are ignored. No acceptable offer: not agreed, and the connection is plain.
deflate_agreement negotiate_deflate(std::string_view extensions);

}  // namespace parley::protocol
