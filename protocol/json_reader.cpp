#include "protocol/json_reader.hpp"

#include "protocol/utf8.hpp"

#include <array>
#include <bit>
#include <clocale>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

namespace parley::protocol {
namespace {

constexpr std::uint64_t byte_ones = 0x0101010101010101ull;
constexpr std::uint64_t byte_highs = 0x8080808080808080ull;

// Nonzero when one of the 8 bytes of word ends a run of plain string bytes: '"', '\\' or a
// control character below 0x20 (which JSON requires to be escaped). The flags above the lowest
// one can be spurious, the lowest one never is.
constexpr std::uint64_t string_stoppers(std::uint64_t word) {
    const std::uint64_t quote = word ^ (byte_ones * '"');
    const std::uint64_t backslash = word ^ (byte_ones * '\\');
    const std::uint64_t is_quote = (quote - byte_ones) & ~quote;
    const std::uint64_t is_backslash = (backslash - byte_ones) & ~backslash;
    const std::uint64_t is_control = (word - byte_ones * 0x20) & ~word;
    return (is_quote | is_backslash | is_control) & byte_highs;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The value of 4 hex digits at s (either case), or -1.
int hex4(const char* s) {
    int value = 0;
    for (int i = 0; i < 4; ++i) {
        const char c = s[i];
        int digit = 0;
        if (c >= '0' && c <= '9') {
            digit = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            digit = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            digit = c - 'A' + 10;
        } else {
            return -1;
        }
        value = value << 4 | digit;
    }
    return value;
}

bool is_high_surrogate(int code) { return code >= 0xD800 && code <= 0xDBFF; }
bool is_low_surrogate(int code) { return code >= 0xDC00 && code <= 0xDFFF; }

void append_utf8(std::string& out, std::uint32_t code) {
    if (code < 0x80) {
        out.push_back(static_cast<char>(code));
    } else if (code < 0x800) {
        out.push_back(static_cast<char>(0xC0 | code >> 6));
        out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | code >> 12));
        out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | code >> 18));
        out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
}

// A number nlohmann::json reads as a double is an error when it overflows to infinity. It
// converts with strtod under the current locale (swapping '.' for the locale's decimal point),
// so the verdict is taken the same way rather than re-derived.
bool converts_to_finite_double(std::string_view number) {
    const std::lconv* locale = std::localeconv();
    const char point = locale->decimal_point != nullptr ? *locale->decimal_point : '.';
    std::array<char, 128> small;
    std::string large;
    char* buffer = small.data();
    if (number.size() >= small.size()) {
        large.resize(number.size() + 1);
        buffer = large.data();
    }
    for (std::size_t i = 0; i < number.size(); ++i) {
        buffer[i] = number[i] == '.' ? point : number[i];
    }
    buffer[number.size()] = '\0';
    return std::isfinite(std::strtod(buffer, nullptr));
}

// The open arrays and objects inside one member value, a bit each (set: array). Skipping nested
// values keeps this instead of recursing, so depth costs a bit, not a stack frame; 512 levels fit
// inline and deeper input (a 64 KiB message can nest 32K deep, which the protocol accepts as an
// ignored field) spills to the heap.
class nesting_stack {
public:
    bool empty() const { return depth_ == 0; }

    bool top_is_array() const {
        const std::size_t level = depth_ - 1;
        return (word(level / 64) >> (level % 64) & 1) != 0;
    }

    void push(bool is_array) {
        const std::size_t index = depth_ / 64;
        if (index >= inline_.size() && index - inline_.size() >= spill_.size()) {
            spill_.push_back(0);
        }
        std::uint64_t& bits = index < inline_.size() ? inline_[index] : spill_[index - inline_.size()];
        const std::uint64_t mask = std::uint64_t{1} << (depth_ % 64);
        bits = is_array ? (bits | mask) : (bits & ~mask);
        ++depth_;
    }

    void pop() { --depth_; }

private:
    std::uint64_t word(std::size_t index) const {
        return index < inline_.size() ? inline_[index] : spill_[index - inline_.size()];
    }

    std::size_t depth_ = 0;
    std::array<std::uint64_t, 8> inline_{};
    std::vector<std::uint64_t> spill_;
};

// A cursor over the text with one function per JSON production. Each returns false on the
// first byte that cannot continue a valid text: errors are results here, not exceptions.
class reader {
public:
    explicit reader(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

    bool skip_byte_order_mark() {
        if (p_ == end_ || static_cast<unsigned char>(*p_) != 0xEF) {
            return true;
        }
        if (end_ - p_ < 3 || static_cast<unsigned char>(p_[1]) != 0xBB ||
            static_cast<unsigned char>(p_[2]) != 0xBF) {
            return false;
        }
        p_ += 3;
        return true;
    }

    void skip_whitespace() {
        while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) {
            ++p_;
        }
    }

    bool consume(char c) {
        if (p_ != end_ && *p_ == c) {
            ++p_;
            return true;
        }
        return false;
    }

    bool at(char c) const { return p_ != end_ && *p_ == c; }

    // nlohmann::json's lexer takes a NUL byte as the end of the input (for C strings), so a NUL
    // where a token may start ends the text and whatever follows it is never looked at.
    bool at_end_of_text() const { return p_ == end_ || *p_ == '\0'; }

    // At the opening quote. raw receives the bytes between the quotes.
    bool read_string(std::string_view& raw, bool& escaped) {
        ++p_;
        const char* const begin = p_;
        std::uint64_t high = 0;  // nonzero when some byte may be >= 0x80: only then check UTF-8
        escaped = false;
        for (;;) {
            while (end_ - p_ >= 8) {
                std::uint64_t word;
                std::memcpy(&word, p_, sizeof word);
                high |= word & byte_highs;
                const std::uint64_t stoppers = string_stoppers(word);
                if (stoppers != 0) {
                    if constexpr (std::endian::native == std::endian::little) {
                        p_ += std::countr_zero(stoppers) / 8;
                    }
                    break;
                }
                p_ += 8;
            }
            if (p_ == end_) {
                return false;
            }
            const auto c = static_cast<unsigned char>(*p_);
            if (c == '"') {
                break;
            }
            if (c == '\\') {
                escaped = true;
                if (!skip_escape()) {
                    return false;
                }
                continue;
            }
            if (c < 0x20) {
                return false;
            }
            high |= c & 0x80;
            ++p_;
        }
        raw = std::string_view(begin, static_cast<std::size_t>(p_ - begin));
        ++p_;
        // Escapes are ASCII and no byte of a multi-byte sequence is, so checking the raw bytes
        // as a whole rejects exactly the strings with an ill-formed sequence.
        return high == 0 || is_valid_utf8(raw);
    }

    bool read_value(json_value& value) {
        if (at('{') || at('[')) {
            value.kind = at('{') ? json_kind::object : json_kind::array;
            return skip_nested();
        }
        return read_scalar(value);
    }

private:
    // At a backslash inside a string.
    bool skip_escape() {
        if (end_ - p_ < 2) {
            return false;
        }
        switch (p_[1]) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
            p_ += 2;
            return true;
        case 'u':
            break;
        default:
            return false;
        }
        if (end_ - p_ < 6) {
            return false;
        }
        const int first = hex4(p_ + 2);
        if (first < 0 || is_low_surrogate(first)) {
            return false;
        }
        if (!is_high_surrogate(first)) {
            p_ += 6;
            return true;
        }
        // A high surrogate counts only as the first half of a pair written as two escapes.
        if (end_ - p_ < 12 || p_[6] != '\\' || p_[7] != 'u' || !is_low_surrogate(hex4(p_ + 8))) {
            return false;
        }
        p_ += 12;
        return true;
    }

    bool read_literal(std::string_view word) {
        if (static_cast<std::size_t>(end_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0) {
            return false;
        }
        p_ += word.size();
        return true;
    }

    // One or more digits (a fraction's, an exponent's); false when there is none.
    bool read_digits() {
        const char* const first = p_;
        while (p_ != end_ && is_digit(*p_)) {
            ++p_;
        }
        return p_ != first;
    }

    // At '-' or a digit.
    bool read_number(json_value& value) {
        const char* const begin = p_;
        const bool negative = consume('-');
        if (p_ == end_ || !is_digit(*p_)) {
            return false;
        }
        const char* const integer_part = p_;
        std::uint64_t magnitude = 0;
        bool too_large = false;  // for 64 bits
        if (*p_ == '0') {
            ++p_;  // no leading zeros: a digit after this one is a second token, and an error
        } else {
            for (; p_ != end_ && is_digit(*p_); ++p_) {
                const auto digit = static_cast<unsigned>(*p_ - '0');
                if (magnitude > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
                    too_large = true;
                } else {
                    magnitude = magnitude * 10 + digit;
                }
            }
        }
        const auto integer_digits = static_cast<std::size_t>(p_ - integer_part);
        bool fraction = false;
        if (consume('.')) {
            if (!read_digits()) {
                return false;
            }
            fraction = true;
        }
        bool exponent = false;
        if (consume('e') || consume('E')) {
            if (!consume('+')) {
                consume('-');
            }
            if (!read_digits()) {
                return false;
            }
            exponent = true;
        }
        if (!fraction && !exponent && !too_large) {
            constexpr std::uint64_t int64_min_magnitude = std::uint64_t{1} << 63;
            if (!negative) {
                value.kind = json_kind::unsigned_integer;
                value.unsigned_integer = magnitude;
                return true;
            }
            if (magnitude <= int64_min_magnitude) {
                value.kind = json_kind::integer;
                value.integer = magnitude == int64_min_magnitude ? std::numeric_limits<std::int64_t>::min()
                                                                 : -static_cast<std::int64_t>(magnitude);
                return true;
            }
        }
        value.kind = json_kind::floating;
        // Below 10^308 without an exponent: finite for sure, no conversion needed.
        if (!exponent && integer_digits <= 308) {
            return true;
        }
        return converts_to_finite_double(std::string_view(begin, static_cast<std::size_t>(p_ - begin)));
    }

    bool read_scalar(json_value& value) {
        if (p_ == end_) {
            return false;
        }
        switch (*p_) {
        case '"':
            value.kind = json_kind::string;
            return read_string(value.raw, value.escaped);
        case 't':
            value.kind = json_kind::boolean;
            return read_literal("true");
        case 'f':
            value.kind = json_kind::boolean;
            return read_literal("false");
        case 'n':
            value.kind = json_kind::null;
            return read_literal("null");
        case '-':
        case '0':
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
        case '7':
        case '8':
        case '9':
            return read_number(value);
        default:
            return false;
        }
    }

    // A key of a nested object, its colon and the whitespace up to the value.
    bool skip_member_key() {
        std::string_view key;
        bool escaped = false;
        if (!at('"') || !read_string(key, escaped)) {
            return false;
        }
        skip_whitespace();
        if (!consume(':')) {
            return false;
        }
        skip_whitespace();
        return true;
    }

    // At '{' or '['; validates the whole value and moves past it.
    bool skip_nested() {
        nesting_stack open;
        json_value ignored;
        for (;;) {
            // Here p_ is at the first byte of a value.
            if (at('{') || at('[')) {
                const bool is_array = *p_ == '[';
                ++p_;
                skip_whitespace();
                if (!consume(is_array ? ']' : '}')) {
                    open.push(is_array);
                    if (!is_array && !skip_member_key()) {
                        return false;
                    }
                    continue;
                }
            } else if (!read_scalar(ignored)) {
                return false;
            }
            // A value is complete: close the containers it completes, then start the next element.
            for (;;) {
                if (open.empty()) {
                    return true;
                }
                skip_whitespace();
                const bool in_array = open.top_is_array();
                if (consume(',')) {
                    skip_whitespace();
                    if (!in_array && !skip_member_key()) {
                        return false;
                    }
                    break;
                }
                if (!consume(in_array ? ']' : '}')) {
                    return false;
                }
                open.pop();
            }
        }
    }

    const char* p_;
    const char* end_;
};

// The index of key among keys, or keys.size().
std::size_t key_index(std::span<const std::string_view> keys, std::string_view raw, bool escaped) {
    std::string unescaped;
    std::string_view key = raw;
    if (escaped) {
        append_unescaped(unescaped, raw);
        key = unescaped;
    }
    std::size_t i = 0;
    // Sizes and first bytes rule out almost every candidate without a call to memcmp.
    while (i < keys.size() && (keys[i].size() != key.size() || (!key.empty() && keys[i][0] != key[0]) ||
                               keys[i] != key)) {
        ++i;
    }
    return i;
}

}  // namespace

bool read_json_object(std::string_view text, std::span<const std::string_view> keys,
                      std::span<std::optional<json_value>> values) {
    reader in(text);
    if (!in.skip_byte_order_mark()) {
        return false;
    }
    in.skip_whitespace();
    if (!in.consume('{')) {
        return false;
    }
    in.skip_whitespace();
    if (!in.consume('}')) {
        for (;;) {
            std::string_view key;
            bool key_escaped = false;
            if (!in.at('"') || !in.read_string(key, key_escaped)) {
                return false;
            }
            in.skip_whitespace();
            if (!in.consume(':')) {
                return false;
            }
            in.skip_whitespace();
            // Read straight into the key's slot (a later duplicate replaces it): copying the value
            // there afterwards cost as much as reading it.
            json_value skipped;
            const std::size_t i = key_index(keys, key, key_escaped);
            if (!in.read_value(i < keys.size() ? values[i].emplace() : skipped)) {
                return false;
            }
            in.skip_whitespace();
            if (in.consume('}')) {
                break;
            }
            if (!in.consume(',')) {
                return false;
            }
            in.skip_whitespace();
        }
    }
    in.skip_whitespace();
    return in.at_end_of_text();
}

void append_unescaped(std::string& out, std::string_view raw) {
    const char* p = raw.data();
    const char* const end = p + raw.size();
    while (p != end) {
        const auto* backslash = static_cast<const char*>(std::memchr(p, '\\', static_cast<std::size_t>(end - p)));
        if (backslash == nullptr) {
            out.append(p, end);
            return;
        }
        out.append(p, backslash);
        p = backslash + 2;
        switch (backslash[1]) {
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
            auto code = static_cast<std::uint32_t>(hex4(p));
            p += 4;
            if (is_high_surrogate(static_cast<int>(code))) {
                const auto low = static_cast<std::uint32_t>(hex4(p + 2));
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                p += 6;
            }
            append_utf8(out, code);
            break;
        }
        default: out.push_back(backslash[1]); break;  // '"', '\\' or '/'
        }
    }
}

std::string_view string_of(const json_value& value, std::string& scratch) {
    if (!value.escaped) {
        return value.raw;
    }
    scratch.clear();
    append_unescaped(scratch, value.raw);
    return scratch;
}

void assign_string(std::string& out, const json_value& value) {
    if (!value.escaped) {
        out.assign(value.raw);
        return;
    }
    out.clear();
    append_unescaped(out, value.raw);
}

}  // namespace parley::protocol
