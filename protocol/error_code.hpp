#pragma once

#include <cstddef>
#include <string_view>

namespace parley::protocol {

// Every error a client can be sent, in one table (error_code.cpp): the wire name and a default
// human sentence. The server counts them by index.
enum class error_code : unsigned char {
    bad_json,
    bad_request,
    unknown_type,
    not_logged_in,
    already_logged_in,
    invalid_name,
    username_taken,
    unauthorized,
    not_in_room,
    user_not_found,
    room_full,
    too_many_rooms,
    rate_limited,
    too_large,
    // The server could not do it now (its storage or the cluster could not be reached): the
    // request was fine, and the same request may succeed later.
    unavailable,
    // Moderation (issue 19): the actor's role does not allow it; the user is banned from the
    // room; the user is muted there; the message a seq names is not there (or not the actor's).
    forbidden,
    banned,
    muted,
    message_not_found,
};

inline constexpr std::size_t error_code_count = 19;

std::string_view wire_name(error_code code);
std::string_view default_message(error_code code);

}  // namespace parley::protocol
