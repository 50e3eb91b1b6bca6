#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace parley::protocol {

// Incremental UTF-8 validator (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
// Feed the bytes of one message in any number of pieces; the verdict is final only at the end.
class utf8_validator {
public:
    // Returns false as soon as the bytes seen so far cannot start a valid sequence.
    bool feed(std::string_view bytes);
    // True when everything fed so far is complete, valid UTF-8 (no sequence cut off at the end).
    bool complete() const { return state_ == 0; }
    void reset() { state_ = 0; }

private:
    std::uint32_t state_ = 0;
};

// Whole-string check.
bool is_valid_utf8(std::string_view bytes);

// The bytes with every ill-formed part replaced by U+FFFD, one per maximal subpart (Unicode's
// recommended practice, as browsers decode): for text that may not be UTF-8, such as what a
// client sent before any check, on its way into a log line. Valid input comes back unchanged.
std::string replace_invalid_utf8(std::string_view bytes);

}  // namespace parley::protocol
