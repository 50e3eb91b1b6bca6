#pragma once

#include <string>
#include <string_view>

namespace parley::protocol {

// The fields of an HTTP upgrade request that RFC 6455 section 4.2.1 constrains; the server
// copies them out of its HTTP parser, so this check stays socket-free.
struct upgrade_request {
    std::string_view method;      // "GET"
    unsigned version = 11;        // HTTP version as 10 * major + minor
    bool has_host = false;
    std::string_view upgrade;     // Upgrade header
    std::string_view connection;  // Connection header (a token list)
    std::string_view ws_version;  // Sec-WebSocket-Version
    std::string_view ws_key;      // Sec-WebSocket-Key
};

enum class upgrade_verdict {
    accept,            // 101 Switching Protocols
    bad_request,       // 400
    upgrade_required,  // 426 with Sec-WebSocket-Version: 13
};

struct upgrade_check {
    upgrade_verdict verdict;
    const char* reason;  // for the response body and the debug log
};

// True when the request asks for a WebSocket upgrade at all (Upgrade: websocket, any case).
bool is_websocket_upgrade(const upgrade_request& request);

// Validates an upgrade request: GET, HTTP/1.1 or later, Host, Upgrade contains "websocket",
// Connection contains the token "upgrade" (case-insensitive, comma-separated list),
// Sec-WebSocket-Version 13 (otherwise upgrade_required), and a Sec-WebSocket-Key that is the
// base64 encoding of exactly 16 bytes.
upgrade_check check_upgrade(const upgrade_request& request);

// Sec-WebSocket-Accept for a key: base64(SHA-1(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")).
std::string websocket_accept(std::string_view key);

// Base64 (RFC 4648, with padding).
std::string base64_encode(std::string_view bytes);
// Decodes strict, padded base64; returns false on any invalid character or length.
bool base64_decode(std::string_view text, std::string& out);

// SHA-1 digest (20 bytes) of data; used only for the handshake.
std::string sha1(std::string_view data);

}  // namespace parley::protocol
