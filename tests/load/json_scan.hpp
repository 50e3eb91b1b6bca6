#pragma once

// The load generator's hot-path reader of server messages: it walks the top level of one JSON
// object and picks out the few fields the generator needs, without building anything. Nested
// objects and arrays (a joined reply's members and history, whose messages carry their own "type"
// and "text") are skipped as a whole, strings 16 bytes at a time. Values are returned raw: a
// string's view still holds its JSON escapes, which is fine for the ASCII the generator sends.
//
// It trusts the server to send well-formed JSON and only guards against running off the buffer;
// anything it cannot follow makes scan() return false.

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace parley::load {

struct server_fields {
    std::string_view type;
    std::string_view text;
    std::string_view code;  // of an error
    std::int64_t seq = -1;
    std::int64_t messages = -1;  // elements of a top-level "messages" array (a history reply)
};

namespace json_detail {

inline const char* skip_ws(const char* p, const char* end) {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) {
        ++p;
    }
    return p;
}

// p is just past an opening quote; returns the closing quote, or nullptr. Sixteen bytes at a
// time where SSE2 is available: most strings here are short keys or a say's text of some tens of
// bytes, for which a library memchr call costs more than the search.
inline const char* string_end(const char* p, const char* end) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    while (end - p >= 16) {
        const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const auto hits = static_cast<unsigned>(
            _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash))));
        if (hits == 0) {
            p += 16;
            continue;
        }
        const char* q = p + std::countr_zero(hits);
        if (*q == '"') {
            return q;
        }
        p = q + 2;  // skip the escaped character
    }
#endif
    while (p < end) {
        if (*p == '"') {
            return p;
        }
        p += *p == '\\' ? 2 : 1;
    }
    return nullptr;
}

// p is at '{' or '['; returns the position just past the matching close, or nullptr.
inline const char* skip_nested(const char* p, const char* end) {
    int depth = 0;
    while (p < end) {
        const char ch = *p;
        if (ch == '"') {
            p = string_end(p + 1, end);
            if (p == nullptr) {
                return nullptr;
            }
        } else if (ch == '{' || ch == '[') {
            ++depth;
        } else if (ch == '}' || ch == ']') {
            if (--depth == 0) {
                return p + 1;
            }
        }
        ++p;
    }
    return nullptr;
}

// skip_nested for an array whose elements are counted: p is at '['; returns the position just
// past the matching ']', or nullptr, and sets count to the number of elements at its own level.
// Kept apart from skip_nested so that the common path pays nothing for it.
inline const char* skip_array_counting(const char* p, const char* end, std::int64_t& count) {
    int depth = 0;
    std::int64_t commas = 0;
    bool any = false;
    while (p < end) {
        const char ch = *p;
        if (depth == 1 && ch != ']' && ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t') {
            any = true;
            commas += ch == ',' ? 1 : 0;
        }
        if (ch == '"') {
            p = string_end(p + 1, end);
            if (p == nullptr) {
                return nullptr;
            }
        } else if (ch == '{' || ch == '[') {
            ++depth;
        } else if (ch == '}' || ch == ']') {
            if (--depth == 0) {
                count = any ? commas + 1 : 0;
                return p + 1;
            }
        }
        ++p;
    }
    return nullptr;
}

}  // namespace json_detail

// Fills f from the top-level members "type", "text", "code" and "seq" of the object in json, and
// counts the elements of a top-level "messages" array.
inline bool scan(std::string_view json, server_fields& f) {
    using namespace json_detail;
    const char* p = skip_ws(json.data(), json.data() + json.size());
    const char* const end = json.data() + json.size();
    if (p == end || *p != '{') {
        return false;
    }
    ++p;
    // Bounded: every iteration consumes at least one member.
    for (;;) {
        if (p < end && *p != '"') {
            p = skip_ws(p, end);
        }
        if (p == end) {
            return false;
        }
        if (*p == '}') {
            return true;
        }
        if (*p != '"') {
            return false;
        }
        // Keys are short: a byte loop beats anything clever.
        const char* const key = p + 1;
        const char* key_end = key;
        while (key_end < end && *key_end != '"' && *key_end != '\\') {
            ++key_end;
        }
        if (key_end < end && *key_end == '\\') {
            key_end = string_end(key, end);
        }
        if (key_end == nullptr || key_end == end) {
            return false;
        }
        const auto key_len = static_cast<std::size_t>(key_end - key);
        p = key_end + 1;
        if (p < end && *p == ':') {
            ++p;
        } else {
            p = skip_ws(p, end);
            if (p == end || *p != ':') {
                return false;
            }
            p = skip_ws(p + 1, end);
        }
        if (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) {
            p = skip_ws(p, end);
        }
        if (p == end) {
            return false;
        }
        const char first = *p;
        if (first == '"') {
            const char* value_end = string_end(p + 1, end);
            if (value_end == nullptr) {
                return false;
            }
            if (key_len == 4) {
                const std::string_view value(p + 1, static_cast<std::size_t>(value_end - p - 1));
                if (std::memcmp(key, "type", 4) == 0) {
                    f.type = value;
                } else if (std::memcmp(key, "text", 4) == 0) {
                    f.text = value;
                } else if (std::memcmp(key, "code", 4) == 0) {
                    f.code = value;
                }
            }
            p = value_end + 1;
        } else if (first == '[' && key_len == 8 && std::memcmp(key, "messages", 8) == 0) {
            p = skip_array_counting(p, end, f.messages);
            if (p == nullptr) {
                return false;
            }
        } else if (first == '{' || first == '[') {
            p = skip_nested(p, end);
            if (p == nullptr) {
                return false;
            }
        } else if (first >= '0' && first <= '9') {
            std::uint64_t v = 0;
            while (p < end && *p >= '0' && *p <= '9') {
                v = v * 10 + static_cast<std::uint64_t>(*p - '0');
                ++p;
            }
            // Fractions and exponents are not expected here; step over them.
            while (p < end && (*p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-' || (*p >= '0' && *p <= '9'))) {
                ++p;
            }
            if (key_len == 3 && std::memcmp(key, "seq", 3) == 0) {
                f.seq = static_cast<std::int64_t>(v & 0x7fffffffffffffffull);
            }
        } else {
            // -number, true, false, null
            const char* start = p;
            while (p < end && *p != ',' && *p != '}' && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') {
                ++p;
            }
            if (p == start) {
                return false;
            }
        }
        if (f.seq >= 0 && !f.text.empty() && !f.type.empty()) {
            return true;  // all a message needs; the rest of the object is not looked at
        }
        if (p < end && *p == ',') {
            ++p;
            continue;
        }
        p = skip_ws(p, end);
        if (p == end) {
            return false;
        }
        if (*p == '}') {
            return true;
        }
        if (*p != ',') {
            return false;
        }
        ++p;
    }
}

// Reads "t=<digits>;p=<digits>" at the start of a generator's say text: the send stamp and the
// index of the sending connection. Returns false for any other text.
inline bool read_stamp(std::string_view text, std::uint64_t& stamp, std::uint64_t& from) {
    const char* p = text.data();
    const char* const end = p + text.size();
    auto digits = [&](std::uint64_t& out) {
        const char* const first = p;
        std::uint64_t v = 0;
        while (p < end && *p >= '0' && *p <= '9' && p - first < 19) {
            v = v * 10 + static_cast<std::uint64_t>(*p - '0');
            ++p;
        }
        out = v;
        return p != first;
    };
    if (end - p < 2 || p[0] != 't' || p[1] != '=') {
        return false;
    }
    p += 2;
    if (!digits(stamp)) {
        return false;
    }
    if (end - p < 3 || p[0] != ';' || p[1] != 'p' || p[2] != '=') {
        return false;
    }
    p += 3;
    return digits(from);
}

}  // namespace parley::load
