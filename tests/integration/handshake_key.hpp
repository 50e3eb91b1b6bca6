#pragma once

#include <random>
#include <string>
#include <string_view>

namespace parley::integration {

// The client half of the RFC 6455 opening handshake, computed independently of the daemon's
// own code so that a wrong digest on the server side cannot hide behind a matching one here.

// A fresh Sec-WebSocket-Key: base64 of 16 random bytes.
std::string make_websocket_key(std::mt19937& rng);

// The Sec-WebSocket-Accept a server must answer for key (RFC 6455 section 4.2.2):
// base64(SHA-1(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")).
std::string expected_accept(std::string_view key);

// Base64 with padding (RFC 4648).
std::string to_base64(std::string_view bytes);

// SHA-1 digest (20 raw bytes).
std::string sha1_digest(std::string_view data);

}  // namespace parley::integration
