#include "protocol/utf8.hpp"

#include <bit>
#include <cstring>

namespace parley::protocol {
namespace {

// The state packs what the next byte must be: bits 0-7 count the continuation bytes still
// owed, bits 8-15 and 16-23 the lowest and highest value the next one may take. Narrowing the
// range of the first continuation byte is what rejects overlongs (E0, F0), surrogates (ED) and
// code points above U+10FFFF (F4) the moment that byte arrives (RFC 3629 section 4).
constexpr std::uint32_t expect(std::uint32_t owed, std::uint32_t low, std::uint32_t high) {
    return owed | low << 8 | high << 16;
}

constexpr std::uint32_t failed_state = 0xFFFFFFFFu;
constexpr std::uint32_t any_continuation = expect(0, 0x80, 0xBF);
constexpr std::uint64_t high_bits = 0x8080808080808080ull;

constexpr std::uint32_t after_lead(unsigned lead) {
    if (lead < 0xC2) {
        return failed_state;  // a continuation byte, or C0/C1 which only start overlongs
    }
    if (lead < 0xE0) {
        return expect(1, 0x80, 0xBF);
    }
    if (lead < 0xF0) {
        if (lead == 0xE0) {
            return expect(2, 0xA0, 0xBF);
        }
        if (lead == 0xED) {
            return expect(2, 0x80, 0x9F);
        }
        return expect(2, 0x80, 0xBF);
    }
    if (lead == 0xF0) {
        return expect(3, 0x90, 0xBF);
    }
    if (lead < 0xF4) {
        return expect(3, 0x80, 0xBF);
    }
    if (lead == 0xF4) {
        return expect(3, 0x80, 0x8F);
    }
    return failed_state;
}

// Index of the first byte with its high bit set in a word loaded from memory.
unsigned first_high_byte(std::uint64_t masked) {
    if constexpr (std::endian::native == std::endian::little) {
        return static_cast<unsigned>(std::countr_zero(masked)) / 8;
    } else {
        return static_cast<unsigned>(std::countl_zero(masked)) / 8;
    }
}

}  // namespace

bool utf8_validator::feed(std::string_view bytes) {
    if (state_ == failed_state) {
        return false;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    const auto* const end = p + bytes.size();
    std::uint32_t state = state_;
    while (p != end) {
        if (state == 0) {
            // Chat text is mostly ASCII: skip it a word at a time, then jump straight to the
            // first non-ASCII byte of the word that stopped the run.
            while (end - p >= 8) {
                std::uint64_t word;
                std::memcpy(&word, p, sizeof word);
                const std::uint64_t high = word & high_bits;
                if (high != 0) {
                    p += first_high_byte(high);
                    break;
                }
                p += 8;
            }
            if (p == end) {
                break;
            }
            const unsigned byte = *p++;
            if (byte < 0x80) {
                continue;
            }
            state = after_lead(byte);
            if (state == failed_state) {
                state_ = failed_state;
                return false;
            }
            continue;
        }
        const unsigned byte = *p++;
        if (byte < ((state >> 8) & 0xFF) || byte > (state >> 16)) {
            state_ = failed_state;
            return false;
        }
        const std::uint32_t owed = (state & 0xFF) - 1;
        state = owed == 0 ? 0 : (owed | any_continuation);
    }
    state_ = state;
    return true;
}

bool is_valid_utf8(std::string_view bytes) {
    utf8_validator validator;
    return validator.feed(bytes) && validator.complete();
}

}  // namespace parley::protocol

namespace parley::protocol {

std::string replace_invalid_utf8(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    std::size_t i = 0;
    while (i < bytes.size()) {
        const auto lead = static_cast<unsigned char>(bytes[i]);
        if (lead < 0x80) {
            out += static_cast<char>(lead);
            ++i;
            continue;
        }
        // The same narrowing as the validator: the first continuation byte's range rejects
        // overlongs, surrogates and code points above U+10FFFF.
        std::uint32_t state = after_lead(lead);
        std::size_t length = 1;  // bytes of this sequence accepted so far
        while (state != failed_state && (state & 0xFF) != 0 && i + length < bytes.size()) {
            const std::uint32_t next = static_cast<unsigned char>(bytes[i + length]);
            if (next < ((state >> 8) & 0xFF) || next > ((state >> 16) & 0xFF)) {
                break;
            }
            state = (state & 0xFF) == 1 ? 0 : expect((state & 0xFF) - 1, 0x80, 0xBF);
            ++length;
        }
        if (state == 0) {
            out.append(bytes.substr(i, length));
        } else {
            out += "\xEF\xBF\xBD";
        }
        i += length;
    }
    return out;
}

}  // namespace parley::protocol
