#pragma once

#include <cstdint>

namespace parley::protocol {

// WebSocket close status codes (RFC 6455 section 7.4.1) that parley sends.
enum class close_code : std::uint16_t {
    normal = 1000,
    going_away = 1001,
    protocol_error = 1002,
    unsupported_data = 1003,
    invalid_payload = 1007,
    policy_violation = 1008,
    message_too_big = 1009,
    // Private-use range (4000-4999): an administrator removed the user (the reason says why).
    kicked = 4000,
};

}  // namespace parley::protocol
