#include "protocol/error_code.hpp"

#include <array>

namespace parley::protocol {
namespace {

struct error_entry {
    std::string_view name;
    std::string_view message;
};

// Indexed by error_code; the order must match the enum.
constexpr std::array<error_entry, error_code_count> error_table{{
    {"bad_json", "the message is not a JSON object"},
    {"bad_request", "a field is missing or has the wrong type"},
    {"unknown_type", "unknown message type"},
    {"not_logged_in", "log in first"},
    {"already_logged_in", "this connection is already logged in"},
    {"invalid_name", "names are 1-32 (users) or 1-64 (rooms) characters of A-Z a-z 0-9 _ . -"},
    {"username_taken", "that name is in use"},
    {"unauthorized", "the token was not accepted"},
    {"not_in_room", "join the room first"},
    {"user_not_found", "no such user is online"},
    {"room_full", "the room is full"},
    {"too_many_rooms", "this connection is in too many rooms"},
    {"rate_limited", "too many requests; slow down"},
    {"too_large", "the text is too long"},
    {"unavailable", "the server cannot do that right now; try again shortly"},
    {"forbidden", "your role in this room does not allow that"},
    {"banned", "you are banned from this room"},
    {"muted", "you are muted in this room"},
    {"message_not_found", "no such message in this room"},
}};

}  // namespace

std::string_view wire_name(error_code code) { return error_table[static_cast<std::size_t>(code)].name; }

std::string_view default_message(error_code code) {
    return error_table[static_cast<std::size_t>(code)].message;
}

}  // namespace parley::protocol
