#include "protocol/frame_encoder.hpp"

#include <algorithm>
#include <cstring>

namespace parley::protocol {
namespace {

constexpr std::size_t max_close_reason = 125 - 2;  // control payload limit minus the code

}  // namespace

std::size_t frame_header_size(std::size_t payload_size) {
    if (payload_size < 126) {
        return 2;
    }
    if (payload_size <= 0xFFFF) {
        return 4;
    }
    return 10;
}

void write_frame_header(char* out, opcode op, std::size_t payload_size) {
    auto* bytes = reinterpret_cast<unsigned char*>(out);
    bytes[0] = static_cast<unsigned char>(0x80 | static_cast<unsigned>(op));
    if (payload_size < 126) {
        bytes[1] = static_cast<unsigned char>(payload_size);
        return;
    }
    if (payload_size <= 0xFFFF) {
        bytes[1] = 126;
        bytes[2] = static_cast<unsigned char>(payload_size >> 8);
        bytes[3] = static_cast<unsigned char>(payload_size);
        return;
    }
    bytes[1] = 127;
    const auto size = static_cast<std::uint64_t>(payload_size);
    for (int i = 0; i < 8; ++i) {
        bytes[2 + i] = static_cast<unsigned char>(size >> (56 - 8 * i));
    }
}

std::string encode_frame(opcode op, std::string_view payload) {
    const std::size_t header = frame_header_size(payload.size());
    std::string frame;
    frame.reserve(header + payload.size());
    frame.resize(header);
    write_frame_header(frame.data(), op, payload.size());
    frame.append(payload);
    return frame;
}

std::string encode_close(close_code code, std::string_view reason) {
    std::size_t keep = std::min(reason.size(), max_close_reason);
    if (keep < reason.size()) {
        // Back off to a character boundary: a cut UTF-8 sequence would make the peer fail the
        // close with 1007.
        while (keep > 0 && (static_cast<unsigned char>(reason[keep]) & 0xC0) == 0x80) {
            --keep;
        }
    }
    const auto value = static_cast<std::uint16_t>(code);
    char payload[125];
    payload[0] = static_cast<char>(value >> 8);
    payload[1] = static_cast<char>(value & 0xFF);
    if (keep > 0) {
        std::memcpy(payload + 2, reason.data(), keep);
    }
    return encode_frame(opcode::close, {payload, 2 + keep});
}

std::string_view frame_payload(std::string_view frame) {
    if (frame.size() < 2) {
        return {};
    }
    const unsigned length7 = static_cast<unsigned char>(frame[1]) & 0x7F;
    const std::size_t header = length7 < 126 ? 2 : length7 == 126 ? 4 : 10;
    return header < frame.size() ? frame.substr(header) : std::string_view{};
}

}  // namespace parley::protocol
