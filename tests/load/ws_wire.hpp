#pragma once

// Client-side WebSocket wire helpers for the load generator: the upgrade request and the check of
// its response, masked client frames appended straight into an output buffer, and the header of
// (unmasked) server frames.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace parley::load {

// xoshiro-style generator: fast, good enough for masks, keys and names; one per thread.
class fast_rng {
public:
    explicit fast_rng(std::uint64_t seed) {
        for (auto& s : state_) {
            seed += 0x9E3779B97F4A7C15ull;
            std::uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            s = z ^ (z >> 31);
        }
    }
    std::uint64_t next() {
        const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
        const std::uint64_t t = state_[1] << 17;
        state_[2] ^= state_[0];
        state_[3] ^= state_[1];
        state_[1] ^= state_[2];
        state_[0] ^= state_[3];
        state_[2] ^= t;
        state_[3] = rotl(state_[3], 45);
        return result;
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t state_[4];
};

enum class ws_op : std::uint8_t { continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA };

// Appends one final, masked client frame (mask from rng) carrying payload to out.
void append_masked_frame(std::string& out, ws_op op, std::string_view payload, fast_rng& rng);

// The header of a server frame found at the start of a buffer.
struct frame_header {
    std::size_t header_size = 0;   // bytes before the payload
    std::uint64_t payload_size = 0;
    std::uint8_t opcode = 0;
    bool fin = false;
    bool rsv1 = false;             // permessage-deflate: a compressed message
    bool masked = false;           // a server must not mask: the caller treats it as an error
};

// Total bytes the frame at data[0..size) needs: when the header is complete, header plus payload
// (and h is filled); otherwise the header bytes needed so far (always > size).
std::size_t frame_need(const char* data, std::size_t size, frame_header& h);

// A random Sec-WebSocket-Key (base64 of 16 random bytes) and the Sec-WebSocket-Accept the server
// must answer with (RFC 6455 section 4.2.2).
std::string make_ws_key(fast_rng& rng);
std::string expected_accept(std::string_view key);

// "GET /ws HTTP/1.1 ..." for host:port with this key.
// deflate: offer permessage-deflate.
std::string upgrade_request(std::string_view host, std::uint16_t port, std::string_view key, bool deflate = false);

// Checks a complete response head (through the blank line): status 101, Upgrade: websocket and
// the expected accept value. On failure, reason says what was wrong.
bool check_upgrade_response(std::string_view head, std::string_view accept, const char*& reason);

// Appends the decimal digits of v.
inline void append_uint(std::string& out, std::uint64_t v) {
    char digits[20];
    int n = 0;
    do {
        digits[n++] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0) {
        out.push_back(digits[--n]);
    }
}

}  // namespace parley::load
