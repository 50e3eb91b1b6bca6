#pragma once

#include "protocol/close_code.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace parley::protocol {

enum class opcode : std::uint8_t { continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA };

// Server-to-client frames: FIN set, never masked, so one encoded frame can be sent unchanged to
// every member of a room.

// Bytes of the header for a payload of this size: 2, 4 or 10.
std::size_t frame_header_size(std::size_t payload_size);

// Writes the header for an unmasked final frame into out (frame_header_size(payload_size) bytes).
void write_frame_header(char* out, opcode op, std::size_t payload_size);

// A complete frame: header followed by payload.
std::string encode_frame(opcode op, std::string_view payload);

// A close frame with a status code and a reason (truncated so the payload stays <= 125 bytes).
std::string encode_close(close_code code, std::string_view reason = {});

// The payload of a frame produced by encode_frame (skips the header).
std::string_view frame_payload(std::string_view frame);

}  // namespace parley::protocol
