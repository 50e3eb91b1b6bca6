#pragma once

#include "protocol/error_code.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace parley::protocol {

enum class request_type : unsigned char {
    login, join, leave, say, dm, users, rooms, history, typing, dm_history, read,
    // Moderation inside a room, and changes to messages already said (issue 19).
    kick, ban, unban, mute, unmute, set_role, set_topic, set_slow_mode, edit, delete_message,
    // A page of a big room's member list (issue 23).
    members,
};

// One client request after JSON parsing and shape validation (types of fields, required fields
// present). Rules that need state or configuration (name syntax, text length, membership,
// limits) are the chat logic's to check.
struct request {
    request_type type = request_type::users;
    std::string id;     // the request's "id" as JSON text, echoed verbatim as "re"; empty if none
    std::string user;   // login; kick, ban, unban, mute, unmute, set_role: whom it is about
    std::string token;  // login (optional)
    std::string room;   // join, leave, say, history, typing, read (room or with), and every
                        // moderation request, edit and delete
    std::string to;     // dm
    std::string with;   // dm_history, read: the other user of a direct conversation
    std::string text;   // say, dm, edit; set_topic (the topic)
    std::string reason; // kick, ban, mute (optional)
    std::string role;   // set_role
    std::string after_name;  // members: list the names after this one (empty: from the start)
    std::optional<std::int64_t> after;   // join, history, dm_history
    std::optional<std::int64_t> before;  // history, dm_history
    std::optional<std::int64_t> epoch;   // join
    std::optional<std::int64_t> limit;   // history, dm_history, members
    std::optional<std::int64_t> seq;     // read, edit, delete
    std::optional<std::int64_t> duration_s;  // ban, mute (absent: until lifted)
    std::optional<std::int64_t> interval_s;  // set_slow_mode (0: off)
};

// Either a request or the error to send (with the id, when the id itself was readable).
struct parse_result_request {
    std::optional<request> value;
    error_code error = error_code::bad_request;
    std::string message;
    std::string id;
};

// Parses one text message. Never throws.
parse_result_request parse_request(std::string_view text);
// The same into a result kept from an earlier call: its strings keep their capacity, so a
// connection that sends one say after another parses without allocating.
void parse_request(std::string_view text, parse_result_request& result);

}  // namespace parley::protocol
