#include "protocol/json_text.hpp"

#include <charconv>
#include <cstdint>
#include <cstring>

namespace parley::protocol {

namespace {
constexpr std::uint64_t every_byte(unsigned char c) { return 0x0101010101010101ULL * c; }

// True when one of the 8 bytes in x may need an escape: a control character, '"' or '\\'.
// Bit tricks on the whole word (a byte below n sets its high bit in (x - n) & ~x); false
// positives are possible in bytes above a true hit, never false negatives, so a hit is
// re-checked byte by byte.
bool may_need_escape(std::uint64_t x) {
    constexpr std::uint64_t high = every_byte(0x80);
    std::uint64_t control = (x - every_byte(0x20)) & ~x;
    std::uint64_t quote = x ^ every_byte('"');
    std::uint64_t backslash = x ^ every_byte('\\');
    std::uint64_t quote_zero = (quote - every_byte(1)) & ~quote;
    std::uint64_t backslash_zero = (backslash - every_byte(1)) & ~backslash;
    return ((control | quote_zero | backslash_zero) & high) != 0;
}
}  // namespace

void append_json_string(std::string& out, std::string_view value) {
    static constexpr char hex[] = "0123456789abcdef";
    out.push_back('"');
    const char* data = value.data();
    const std::size_t size = value.size();
    std::size_t run_start = 0;
    std::size_t i = 0;
    // Copy runs of characters that need no escape in one append: chat text is mostly such runs,
    // and they are scanned a word (8 bytes) at a time.
    while (i < size) {
        if (size - i >= 8) {
            std::uint64_t word;
            std::memcpy(&word, data + i, sizeof word);
            if (!may_need_escape(word)) {
                i += 8;
                continue;
            }
        }
        auto c = static_cast<unsigned char>(data[i]);
        if (c >= 0x20 && c != '"' && c != '\\') {
            ++i;
            continue;
        }
        out.append(data + run_start, i - run_start);
        ++i;
        run_start = i;
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            out += "\\u00";
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 0xF]);
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
