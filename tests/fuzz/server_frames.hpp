#pragma once

// Checks on what the server sends, shared by the connection harness's client and peers.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace parley::fuzz {

// A frame the server sent, decoded.
struct server_frame {
    std::uint8_t opcode;
    std::string_view payload;
};

// Decodes bytes as one complete server frame; fails on anything RFC 6455 section 5 forbids a
// server to send (no FIN, RSV bits, a mask, a length not in its shortest form or not matching the
// bytes, an opcode parley never sends, a control frame over 125 bytes, text or a close reason
// that is not UTF-8, a close payload of 1 byte).
server_frame check_server_frame(std::string_view bytes);

// The JSON of a chat message frame: a text frame holding an object with a string "type"; an
// error must have a code from the protocol's table and a message.
nlohmann::json check_text_frame(std::string_view bytes);

// Within one room, a member sees each message once and in seq order, whether the room served its
// worker at once or through a task.
class seq_order {
public:
    void see(const nlohmann::json& message);

private:
    std::map<std::string, std::int64_t, std::less<>> last_;
};

}  // namespace parley::fuzz
