#include "protocol/handshake.hpp"

#include "protocol/header_text.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <utility>

namespace parley::protocol {
namespace {

constexpr std::string_view websocket_guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
constexpr std::string_view base64_alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> make_base64_values() {
    std::array<std::int8_t, 256> values{};
    values.fill(-1);
    for (std::size_t i = 0; i < base64_alphabet.size(); ++i) {
        values[static_cast<unsigned char>(base64_alphabet[i])] = static_cast<std::int8_t>(i);
    }
    return values;
}
constexpr std::array<std::int8_t, 256> base64_values = make_base64_values();

// Whether a comma-separated header value lists token (RFC 9110 section 5.6.1), any case.
bool has_token(std::string_view list, std::string_view token) {
    return any_list_item(list, [&](std::string_view item) { return equal_nocase(item, token); });
}

std::uint32_t load_be32(const unsigned char* p) {
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

// One 64-byte block of SHA-1 (FIPS 180-4 section 6.1.2).
void sha1_block(std::uint32_t state[5], const unsigned char* block) {
    std::uint32_t w[80];
    for (int i = 0; i < 16; ++i) {
        w[i] = load_be32(block + 4 * i);
    }
    for (int i = 16; i < 80; ++i) {
        w[i] = std::rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    }
    std::uint32_t a = state[0];
    std::uint32_t b = state[1];
    std::uint32_t c = state[2];
    std::uint32_t d = state[3];
    std::uint32_t e = state[4];
    for (int i = 0; i < 80; ++i) {
        std::uint32_t f;
        std::uint32_t k;
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5A827999;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ED9EBA1;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8F1BBCDC;
        } else {
            f = b ^ c ^ d;
            k = 0xCA62C1D6;
        }
        const std::uint32_t next = std::rotl(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = std::rotl(b, 30);
        b = a;
        a = next;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
}

}  // namespace

bool is_websocket_upgrade(const upgrade_request& request) {
    return has_token(request.upgrade, "websocket");
}

upgrade_check check_upgrade(const upgrade_request& request) {
    if (request.method != "GET") {
        return {upgrade_verdict::bad_request, "method must be GET"};
    }
    if (request.version < 11) {
        return {upgrade_verdict::bad_request, "HTTP/1.1 or later required"};
    }
    if (!request.has_host) {
        return {upgrade_verdict::bad_request, "missing Host header"};
    }
    if (!is_websocket_upgrade(request)) {
        return {upgrade_verdict::bad_request, "Upgrade header must name websocket"};
    }
    if (!has_token(request.connection, "upgrade")) {
        return {upgrade_verdict::bad_request, "Connection header must contain upgrade"};
    }
    if (request.ws_version != "13") {
        return {upgrade_verdict::upgrade_required, "Sec-WebSocket-Version must be 13"};
    }
    std::string nonce;
    if (request.ws_key.size() != 24 || !base64_decode(request.ws_key, nonce) || nonce.size() != 16) {
        return {upgrade_verdict::bad_request, "Sec-WebSocket-Key must be base64 of 16 bytes"};
    }
    return {upgrade_verdict::accept, "ok"};
}

std::string websocket_accept(std::string_view key) {
    std::string input;
    input.reserve(key.size() + websocket_guid.size());
    input.append(key);
    input.append(websocket_guid);
    return base64_encode(sha1(input));
}

std::string base64_encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    std::size_t left = bytes.size();
    for (; left >= 3; left -= 3, p += 3) {
        const std::uint32_t v = std::uint32_t{p[0]} << 16 | std::uint32_t{p[1]} << 8 | p[2];
        out.push_back(base64_alphabet[v >> 18]);
        out.push_back(base64_alphabet[(v >> 12) & 0x3F]);
        out.push_back(base64_alphabet[(v >> 6) & 0x3F]);
        out.push_back(base64_alphabet[v & 0x3F]);
    }
    if (left > 0) {
        const std::uint32_t v = std::uint32_t{p[0]} << 16 | (left == 2 ? std::uint32_t{p[1]} << 8 : 0);
        out.push_back(base64_alphabet[v >> 18]);
        out.push_back(base64_alphabet[(v >> 12) & 0x3F]);
        out.push_back(left == 2 ? base64_alphabet[(v >> 6) & 0x3F] : '=');
        out.push_back('=');
    }
    return out;
}

bool base64_decode(std::string_view text, std::string& out) {
    if (text.size() % 4 != 0) {
        return false;
    }
    std::size_t padding = 0;
    if (!text.empty() && text.back() == '=') {
        padding = text[text.size() - 2] == '=' ? 2 : 1;
    }
    std::string decoded;
    decoded.reserve(text.size() / 4 * 3);
    for (std::size_t i = 0; i < text.size(); i += 4) {
        const std::size_t digits = i + 4 == text.size() ? 4 - padding : 4;
        std::uint32_t v = 0;
        for (std::size_t j = 0; j < 4; ++j) {
            v <<= 6;
            if (j < digits) {
                // '=' maps to -1 too, so padding anywhere but the end is rejected here.
                const std::int8_t digit = base64_values[static_cast<unsigned char>(text[i + j])];
                if (digit < 0) {
                    return false;
                }
                v |= static_cast<std::uint32_t>(digit);
            }
        }
        // Strict: the bits that padding leaves over must be zero, so each byte string has
        // exactly one accepted encoding.
        if ((digits == 2 && (v & 0xFFFF) != 0) || (digits == 3 && (v & 0xFF) != 0)) {
            return false;
        }
        decoded.push_back(static_cast<char>(v >> 16));
        if (digits > 2) {
            decoded.push_back(static_cast<char>((v >> 8) & 0xFF));
        }
        if (digits > 3) {
            decoded.push_back(static_cast<char>(v & 0xFF));
        }
    }
    out = std::move(decoded);
    return true;
}

std::string sha1(std::string_view data) {
    std::uint32_t state[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    const std::size_t whole = data.size() / 64 * 64;
    for (std::size_t i = 0; i < whole; i += 64) {
        sha1_block(state, p + i);
    }
    // Padding: a 1 bit, zeros, then the message length in bits as a 64-bit big-endian number,
    // which spills into a second block when fewer than 9 bytes are left in the first.
    unsigned char tail[128] = {};
    const std::size_t rest = data.size() - whole;
    if (rest > 0) {
        std::memcpy(tail, p + whole, rest);
    }
    tail[rest] = 0x80;
    const std::size_t tail_size = rest + 1 + 8 <= 64 ? 64 : 128;
    const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
    for (int i = 0; i < 8; ++i) {
        tail[tail_size - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
    }
    for (std::size_t i = 0; i < tail_size; i += 64) {
        sha1_block(state, tail + i);
    }
    std::string digest(20, '\0');
    for (int i = 0; i < 5; ++i) {
        digest[4 * i] = static_cast<char>(state[i] >> 24);
        digest[4 * i + 1] = static_cast<char>((state[i] >> 16) & 0xFF);
        digest[4 * i + 2] = static_cast<char>((state[i] >> 8) & 0xFF);
        digest[4 * i + 3] = static_cast<char>(state[i] & 0xFF);
    }
    return digest;
}

}  // namespace parley::protocol
