#include "tests/fuzz/server_frames.hpp"

#include "protocol/error_code.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <algorithm>

namespace parley::fuzz {

using json = nlohmann::json;

server_frame check_server_frame(std::string_view bytes) {
    require(bytes.size() >= 2, "server frame shorter than a header");
    const auto byte0 = static_cast<unsigned char>(bytes[0]);
    const auto byte1 = static_cast<unsigned char>(bytes[1]);
    require((byte0 & 0x80) != 0, "server frame without FIN");
    require((byte0 & 0x70) == 0, "server frame with RSV bits");
    require((byte1 & 0x80) == 0, "server frame masked");
    std::size_t header = 2;
    std::uint64_t length = byte1 & 0x7F;
    if (length >= 126) {
        header = length == 126 ? 4 : 10;
        require(bytes.size() >= header, "server frame header cut short");
        length = 0;
        for (std::size_t i = 2; i < header; ++i) {
            length = length << 8 | static_cast<unsigned char>(bytes[i]);
        }
        require(length >= (header == 4 ? 126u : 65536u), "server frame length not in its shortest form");
    }
    require(bytes.size() - header == length, "server frame length does not match its bytes");
    const std::uint8_t opcode = byte0 & 0x0F;
    const std::string_view payload = bytes.substr(header);
    require(opcode == 0x1 || opcode == 0x8 || opcode == 0xA, "server frame of an unexpected opcode");
    if (opcode >= 0x8) {
        require(payload.size() <= 125, "server control frame over 125 bytes");
    }
    if (opcode == 0x8) {
        require(payload.size() != 1, "server close frame of 1 byte");
        require(is_utf8(payload.substr(std::min<std::size_t>(2, payload.size()))), "close reason not UTF-8");
    }
    if (opcode == 0x1) {
        require(is_utf8(payload), "server text frame not UTF-8");
    }
    return {opcode, payload};
}

namespace {
bool known_error_code(std::string_view code) {
    for (std::size_t i = 0; i < protocol::error_code_count; ++i) {
        if (protocol::wire_name(static_cast<protocol::error_code>(i)) == code) {
            return true;
        }
    }
    return false;
}
}  // namespace

json check_text_frame(std::string_view bytes) {
    const server_frame frame = check_server_frame(bytes);
    require(frame.opcode == 0x1, "a chat message that is not a text frame");
    json message = json::parse(frame.payload, nullptr, false);
    require(!message.is_discarded() && message.is_object(), "server text frame is not a JSON object", frame.payload);
    require(message.contains("type") && message["type"].is_string(), "server message without a type", frame.payload);
    if (message["type"] == "error") {
        require(message.contains("code") && message["code"].is_string() &&
                    known_error_code(message["code"].get_ref<const std::string&>()),
                "error without a known code", frame.payload);
        require(message.contains("message") && message["message"].is_string() &&
                    !message["message"].get_ref<const std::string&>().empty(),
                "error without a message", frame.payload);
    }
    return message;
}

void seq_order::see(const json& message) {
    if (message["type"] != "message") {
        return;
    }
    require(message.contains("room") && message["room"].is_string() && message.contains("seq") &&
                message["seq"].is_number_integer(),
            "message without room or seq", message.dump());
    const auto seq = message["seq"].get<std::int64_t>();
    std::int64_t& last = last_[message["room"].get<std::string>()];
    require(seq > last, "messages of a room out of seq order", message.dump());
    last = seq;
}

}  // namespace parley::fuzz
