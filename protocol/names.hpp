#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace parley::protocol {

// The name rule of protocol v1: a user name is 1-32, a room name 1-64 characters of
// A-Z a-z 0-9 _ . - (a cluster's node ids follow the room rule). Clients are held to it by
// chat_session, configured names by config/, so it lives here once, with the words that state it.
// Header only: config/ checks names by it without linking the wire layer.
// Thread: pure functions.

inline constexpr std::size_t max_user_name = 32;
inline constexpr std::size_t max_room_name = 64;

constexpr bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
}

// 1 to max characters, each an is_name_char.
constexpr bool valid_name(std::string_view name, std::size_t max) {
    if (name.empty() || name.size() > max) {
        return false;
    }
    for (char c : name) {
        if (!is_name_char(c)) {
            return false;
        }
    }
    return true;
}

constexpr bool valid_user_name(std::string_view name) { return valid_name(name, max_user_name); }
constexpr bool valid_room_name(std::string_view name) { return valid_name(name, max_room_name); }

// The characters allowed, as the rule's messages name them.
inline constexpr std::string_view name_characters = "A-Z a-z 0-9 _ . -";

// The rule in words, e.g. "user names are 1-32 characters of A-Z a-z 0-9 _ . -".
inline std::string name_rule(std::string_view plural, std::size_t max) {
    std::string text(plural);
    text += " are 1-";
    text += std::to_string(max);
    text += " characters of ";
    text += name_characters;
    return text;
}
// What an invalid_name error says (and config/ says of a configured user name).
inline std::string user_name_rule() { return name_rule("user names", max_user_name); }
inline std::string room_name_rule() { return name_rule("room names", max_room_name); }

}  // namespace parley::protocol
