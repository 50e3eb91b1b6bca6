#include "protocol/json_text.hpp"

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>

namespace parley::protocol {

namespace {
constexpr std::uint64_t every_byte(unsigned char c) { return 0x0101010101010101ULL * c; }
constexpr std::uint64_t low7 = every_byte(0x7F);
constexpr std::uint64_t high = every_byte(0x80);

// The high bit of each byte of the result is set exactly where that byte of x is zero. Adding
// 0x7F to the low 7 bits never carries into the next byte, so no byte disturbs another.
std::uint64_t zero_bytes(std::uint64_t x) { return ~(((x & low7) + low7) | x | low7); }

// The high bit of each byte is set exactly where that byte of x needs an escape in JSON: a
// control character (below 0x20), '"' or '\\'. Bytes of UTF-8 sequences (0x80 and up) never do.
std::uint64_t bytes_to_escape(std::uint64_t x) {
    std::uint64_t control = ~(((x & low7) + every_byte(0x80 - 0x20)) | x) & high;
    return control | zero_bytes(x ^ every_byte('"')) | zero_bytes(x ^ every_byte('\\'));
}

void append_escape(std::string& out, unsigned char c) {
    static constexpr char hex[] = "0123456789abcdef";
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default: {
        const char form[] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
        out.append(form, sizeof form);
    }
    }
}

bool needs_escape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }
}  // namespace

void append_json_string(std::string& out, std::string_view value) {
    out.push_back('"');
    const char* data = value.data();
    const std::size_t size = value.size();
    std::size_t run_start = 0;  // characters from here on are copied in one append
    std::size_t i = 0;
    // Chat text is mostly characters that need no escape: they are found 8 at a time (one word
    // test), and within a word only the bytes that need an escape are visited.
    for (; size - i >= 8; i += 8) {
        std::uint64_t word;
        std::memcpy(&word, data + i, sizeof word);
        if constexpr (std::endian::native == std::endian::big) {
            word = __builtin_bswap64(word);  // the first byte in the lowest bits, as below
        }
        for (std::uint64_t hits = bytes_to_escape(word); hits != 0; hits &= hits - 1) {
            // The lowest set bit belongs to the first byte that needs an escape.
            std::size_t at = i + static_cast<std::size_t>(__builtin_ctzll(hits)) / 8;
            out.append(data + run_start, at - run_start);
            append_escape(out, static_cast<unsigned char>(data[at]));
            run_start = at + 1;
        }
    }
    for (; i < size; ++i) {
        if (needs_escape(static_cast<unsigned char>(data[i]))) {
            out.append(data + run_start, i - run_start);
            append_escape(out, static_cast<unsigned char>(data[i]));
            run_start = i + 1;
        }
    }
    out.append(data + run_start, size - run_start);
    out.push_back('"');
}

void append_json_integer(std::string& out, std::int64_t value) {
    char buffer[24];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    (void)ec;
    out.append(buffer, end);
}

}  // namespace parley::protocol
