#include "protocol/frame_parser.hpp"

#include "protocol/message_deflate.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace parley::protocol {
namespace {

constexpr std::uint8_t op_continuation = 0x0;
// Named with the others though no check needs it (text is what remains once the rest are ruled
// out); clang warns about an unused constant, g++ does not.
[[maybe_unused]] constexpr std::uint8_t op_text = 0x1;
constexpr std::uint8_t op_binary = 0x2;
constexpr std::uint8_t op_close = 0x8;
constexpr std::uint8_t op_ping = 0x9;
constexpr std::uint8_t op_pong = 0xA;

constexpr std::uint8_t fin_bit = 0x80;
constexpr std::uint8_t rsv_bits = 0x70;
constexpr std::uint8_t rsv1_bit = 0x40;  // permessage-deflate: the message is compressed
constexpr std::uint8_t mask_bit = 0x80;
constexpr std::size_t max_control_payload = 125;  // RFC 6455 section 5.5

// The parser keeps a one-byte index into this table instead of a parse_result, which would
// cost 16 bytes in every connection.
enum error_id : std::uint8_t {
    e_none,
    e_reserved_bits,
    e_unknown_opcode,
    e_unmasked,
    e_fragmented_control,
    e_control_too_long,
    e_continuation_without_start,
    e_message_unfinished,
    e_binary,
    e_length_top_bit,
    e_too_big,
    e_close_one_byte,
    e_close_code,
    e_close_reason_utf8,
    e_text_utf8,
    e_inflated_too_big,
    e_bad_compressed,
    error_count
};

struct close_error {
    close_code code;
    const char* reason;
};

constexpr close_error errors[] = {
    {close_code::normal, ""},
    {close_code::protocol_error, "reserved bits set"},
    {close_code::protocol_error, "unknown opcode"},
    {close_code::protocol_error, "client frame not masked"},
    {close_code::protocol_error, "fragmented control frame"},
    {close_code::protocol_error, "control frame payload over 125 bytes"},
    {close_code::protocol_error, "continuation frame without a message in progress"},
    {close_code::protocol_error, "new data frame inside a fragmented message"},
    {close_code::unsupported_data, "binary messages are not supported"},
    {close_code::protocol_error, "frame length has the most significant bit set"},
    {close_code::message_too_big, "message too big"},
    {close_code::protocol_error, "close frame payload of 1 byte"},
    {close_code::protocol_error, "invalid close code"},
    {close_code::invalid_payload, "close reason is not valid UTF-8"},
    {close_code::invalid_payload, "text message is not valid UTF-8"},
    {close_code::message_too_big, "message too big when inflated"},
    {close_code::invalid_payload, "compressed message is not valid DEFLATE data"},
};
static_assert(std::size(errors) == error_count);

// Capacity of a std::string that holds nothing on the heap.
const std::size_t inline_capacity = std::string{}.capacity();

std::size_t header_size(std::uint8_t byte1) {
    const std::uint8_t length7 = byte1 & 0x7F;
    const std::size_t extended = length7 == 126 ? 2 : length7 == 127 ? 8 : 0;
    return 2 + extended + 4;  // only called once the mask bit is known to be set
}

// Codes a peer may put in a close frame (RFC 6455 section 7.4): 1004-1006 and 1015 are
// reserved or local-only, 1016-2999 are unassigned, 3000-4999 belong to libraries and apps.
bool valid_close_code(std::uint16_t code) {
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
           (code >= 3000 && code <= 4999);
}

// XORs n bytes with the mask key and returns the key rotated so that its first byte applies to
// the byte after the last one processed. Whole words first: the key repeats every 4 bytes, so a
// 64-bit word holds it twice and stays in step after each 8-byte stride.
std::uint32_t unmask(char* data, std::size_t n, std::uint32_t key) {
    const std::uint64_t wide = (std::uint64_t{key} << 32) | key;
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t word;
        std::memcpy(&word, data + i, sizeof word);
        word ^= wide;
        std::memcpy(data + i, &word, sizeof word);
    }
    unsigned char key_bytes[4];
    std::memcpy(key_bytes, &key, sizeof key);
    for (std::size_t k = 0; i < n; ++i, ++k) {
        data[i] = static_cast<char>(static_cast<unsigned char>(data[i]) ^ key_bytes[k & 3]);
    }
    const int shift = static_cast<int>(n % 4) * 8;
    if constexpr (std::endian::native == std::endian::little) {
        return std::rotr(key, shift);
    } else {
        return std::rotl(key, shift);
    }
}

}  // namespace

frame_parser::frame_parser(std::size_t max_message) : max_message_{max_message} {}

parse_result frame_parser::feed(char* data, std::size_t size, frame_sink& sink) {
    if (state_ == state::failed || state_ == state::done) {
        return result();
    }
    char* p = data;
    char* const end = data + size;
    for (;;) {
        if (state_ == state::header) {
            if (p == end) {
                return {};
            }
            if (!read_header(p, end)) {
                return result();
            }
            if (state_ == state::header) {
                return {};  // header incomplete, all input taken
            }
        }
        // A frame's payload is handled right after its header even with no input left, so that
        // an empty frame completes without waiting for another feed().
        if (!read_payload(p, end, sink)) {
            return result();
        }
    }
}

bool frame_parser::read_header(char*& p, char* end) {
    const auto available = static_cast<std::size_t>(end - p);
    if (header_len_ == 0 && available >= 2) {
        const auto* header = reinterpret_cast<const unsigned char*>(p);
        if (!check_start(header[0], header[1])) {
            return false;
        }
        const std::size_t size = header_size(header[1]);
        if (available >= size) {
            p += size;
            return start_frame(header);
        }
    }
    // The header spans feed() calls: gather it in pending_'s tail, behind any message being
    // assembled. Checks run as soon as their bytes are in: the first two bytes, then the rest.
    for (;;) {
        const std::size_t target =
            header_len_ < 2 ? 2 : header_size(static_cast<std::uint8_t>(pending_[pending_.size() - header_len_ + 1]));
        const std::size_t take = std::min(target - header_len_, static_cast<std::size_t>(end - p));
        pending_.append(p, take);
        p += take;
        header_len_ = static_cast<std::uint8_t>(header_len_ + take);
        if (header_len_ < target) {
            return true;
        }
        const auto* header = reinterpret_cast<const unsigned char*>(pending_.data() + pending_.size() - header_len_);
        if (target == 2) {
            if (!check_start(header[0], header[1])) {
                return false;
            }
            continue;
        }
        if (!start_frame(header)) {
            return false;
        }
        pending_.resize(pending_.size() - header_len_);
        header_len_ = 0;
        return true;
    }
}

bool frame_parser::check_start(std::uint8_t byte0, std::uint8_t byte1) {
    const std::uint8_t op = byte0 & 0x0F;
    // RSV1 marks a compressed message once permessage-deflate was negotiated, and only on the
    // first frame of a data message (RFC 7692 section 6.1); nothing else uses these bits.
    if ((byte0 & rsv_bits) != 0 &&
        !(inflate_ && (byte0 & rsv_bits) == rsv1_bit && (op == op_text || op == op_binary) && !in_message_)) {
        return fail(e_reserved_bits);
    }
    if (op > op_pong || (op > op_binary && op < op_close)) {
        return fail(e_unknown_opcode);
    }
    if ((byte1 & mask_bit) == 0) {
        return fail(e_unmasked);  // RFC 6455 section 5.1
    }
    if (op >= op_close) {
        if ((byte0 & fin_bit) == 0) {
            return fail(e_fragmented_control);
        }
        if ((byte1 & 0x7F) > max_control_payload) {
            return fail(e_control_too_long);
        }
        return true;
    }
    if (op == op_continuation) {
        return in_message_ ? true : fail(e_continuation_without_start);
    }
    if (in_message_) {
        return fail(e_message_unfinished);
    }
    if (op == op_binary) {
        return fail(e_binary);  // refused at the header, before any payload is buffered
    }
    return true;
}

bool frame_parser::start_frame(const unsigned char* header) {
    const std::uint8_t op = header[0] & 0x0F;
    const std::uint8_t length7 = header[1] & 0x7F;
    std::uint64_t length = length7;
    const unsigned char* key = header + 2;
    // Non-minimal length encodings are accepted: RFC 6455 asks senders for the minimal form
    // but gives the receiver no reason to fail on a longer one.
    if (length7 == 126) {
        length = std::uint64_t{header[2]} << 8 | header[3];
        key = header + 4;
    } else if (length7 == 127) {
        length = 0;
        for (int i = 2; i < 10; ++i) {
            length = length << 8 | header[i];
        }
        key = header + 10;
        if ((length >> 63) != 0) {
            return fail(e_length_top_bit);
        }
    }
    if (op < op_close) {
        // Decided here, from the header, so a peer cannot make us buffer an oversized message.
        const std::size_t assembled = in_message_ ? pending_.size() - header_len_ : 0;
        if (assembled > max_message_ || length > max_message_ - assembled) {
            return fail(e_too_big);
        }
    }
    std::memcpy(&mask_, key, sizeof mask_);
    if (op != op_continuation && op < op_close) {
        compressed_ = (header[0] & rsv1_bit) != 0;
    }
    opcode_ = op;
    fin_ = (header[0] & fin_bit) != 0;
    remaining_ = length;
    if (op >= op_close) {
        control_len_ = static_cast<std::uint8_t>(length);
    } else if (!fin_) {
        in_message_ = true;
    }
    state_ = state::payload;
    return true;
}

bool frame_parser::read_payload(char*& p, char* end, frame_sink& sink) {
    const auto available = static_cast<std::size_t>(end - p);
    if (opcode_ >= op_close) {
        if (remaining_ == control_len_ && remaining_ <= available) {
            const auto size = static_cast<std::size_t>(remaining_);
            unmask(p, size, mask_);
            const std::string_view payload{p, size};
            p += size;
            remaining_ = 0;
            return finish_control(payload, sink);
        }
        // A control frame split across reads goes behind the message being assembled, and
        // is cut off again once delivered.
        const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, available));
        mask_ = unmask(p, take, mask_);
        pending_.append(p, take);
        p += take;
        remaining_ -= take;
        if (remaining_ != 0) {
            return false;
        }
        const std::size_t start = pending_.size() - control_len_;
        if (!finish_control({pending_.data() + start, control_len_}, sink)) {
            return false;
        }
        pending_.resize(start);
        release_if_idle();
        return true;
    }

    if (fin_ && !in_message_ && pending_.empty() && remaining_ <= available) {
        // The hot path: a whole unfragmented message in the caller's buffer is unmasked where
        // it lies and handed out (or inflated from there) without a copy.
        const auto size = static_cast<std::size_t>(remaining_);
        unmask(p, size, mask_);
        const std::string_view message{p, size};
        p += size;
        remaining_ = 0;
        if (compressed_) {
            return finish_compressed(message, sink);
        }
        if (!is_valid_utf8(message)) {
            return fail(e_text_utf8);
        }
        state_ = state::header;
        sink.on_text(message);
        return true;
    }

    const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, available));
    mask_ = unmask(p, take, mask_);
    // Validated as it arrives, so a bad byte ends the connection before the rest is buffered
    // (a compressed message only once inflated).
    if (!compressed_ && !utf8_.feed({p, take})) {
        return fail(e_text_utf8);
    }
    pending_.append(p, take);
    p += take;
    remaining_ -= take;
    if (remaining_ != 0) {
        return false;
    }
    state_ = state::header;
    if (!fin_) {
        return true;
    }
    if (compressed_) {
        in_message_ = false;
        if (!finish_compressed(pending_, sink)) {
            return false;
        }
        pending_.clear();
        release_if_idle();
        return true;
    }
    if (!utf8_.complete()) {
        return fail(e_text_utf8);
    }
    in_message_ = false;
    utf8_.reset();
    sink.on_text(pending_);
    pending_.clear();
    release_if_idle();
    return true;
}

bool frame_parser::finish_compressed(std::string_view compressed, frame_sink& sink) {
    compressed_ = false;
    std::string_view message;
    switch (inflate_message(compressed, max_message_, message)) {
    case inflate_status::ok:
        break;
    case inflate_status::too_large:
        return fail(e_inflated_too_big);
    case inflate_status::corrupt:
        return fail(e_bad_compressed);
    }
    if (!is_valid_utf8(message)) {
        return fail(e_text_utf8);
    }
    state_ = state::header;
    sink.on_text(message);
    return true;
}

bool frame_parser::finish_control(std::string_view payload, frame_sink& sink) {
    state_ = state::header;
    if (opcode_ == op_ping) {
        sink.on_ping(payload);
        return true;
    }
    if (opcode_ == op_pong) {
        sink.on_pong(payload);
        return true;
    }
    std::uint16_t code = 1005;  // no status code present (RFC 6455 section 7.1.5)
    std::string_view reason;
    if (payload.size() == 1) {
        return fail(e_close_one_byte);
    }
    if (payload.size() >= 2) {
        code = static_cast<std::uint16_t>(static_cast<unsigned char>(payload[0]) << 8 |
                                          static_cast<unsigned char>(payload[1]));
        if (!valid_close_code(code)) {
            return fail(e_close_code);
        }
        reason = payload.substr(2);
        if (!is_valid_utf8(reason)) {
            return fail(e_close_reason_utf8);
        }
    }
    state_ = state::done;
    sink.on_close(code, reason);
    // Only now: payload may point into pending_.
    std::string{}.swap(pending_);
    in_message_ = false;
    return false;
}

// Any heap block is given back once nothing is pending, not only large ones: parsers live in
// every connection and most connections are idle, while reallocating for the next message that
// spans reads costs little next to the read itself.
void frame_parser::release_if_idle() {
    if (pending_.empty() && pending_.capacity() > inline_capacity) {
        std::string{}.swap(pending_);
    }
}

bool frame_parser::fail(std::uint8_t error) {
    state_ = state::failed;
    error_ = error;
    std::string{}.swap(pending_);
    header_len_ = 0;
    remaining_ = 0;
    in_message_ = false;
    compressed_ = false;
    utf8_.reset();
    return false;
}

parse_result frame_parser::result() const {
    if (state_ != state::failed) {
        return {};
    }
    const close_error& entry = errors[error_];
    return {false, entry.code, entry.reason};
}

}  // namespace parley::protocol
