#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace parley::protocol {

// The kinds of chat event a webhook may ask for (docs/webhooks.md). The words are what a
// [[webhooks]] table's `events` lists and what a delivered event's "type" says. Header only:
// config/ checks the words by it, rooms/ tags the events it emits.
// Thread: pure functions.
enum class webhook_event : std::uint8_t {
    user_connected,     // a user's first session on this node logged in
    user_disconnected,  // that user's last session on this node ended
    room_occupied,      // a room got its first member
    room_vacated,       // its last member left
    member_joined,      // a user entered a room (first session)
    member_left,        // and left it (last session)
    message,            // a say was sequenced
    message_edited,
    message_deleted,
    dm,                 // a direct message was stored or sent
    moderation,         // kick, ban, unban, mute, unmute, role changes, room settings
};

inline constexpr std::array<std::string_view, 11> webhook_event_names = {
    "user_connected", "user_disconnected", "room_occupied",  "room_vacated",    "member_joined", "member_left",
    "message",        "message_edited",    "message_deleted", "dm",             "moderation",
};

// What a [[webhooks]] table's events = ["*"] stands for.
inline constexpr std::string_view all_webhook_events = "*";

constexpr std::string_view name_of(webhook_event e) { return webhook_event_names[static_cast<std::size_t>(e)]; }

constexpr std::optional<webhook_event> webhook_event_of(std::string_view word) {
    for (std::size_t i = 0; i < webhook_event_names.size(); ++i) {
        if (webhook_event_names[i] == word) {
            return static_cast<webhook_event>(i);
        }
    }
    return std::nullopt;
}

// A set of kinds as bits, so that emitters can ask "does anyone want this?" with one load.
using webhook_event_mask = std::uint32_t;
constexpr webhook_event_mask bit_of(webhook_event e) { return webhook_event_mask{1} << static_cast<unsigned>(e); }
inline constexpr webhook_event_mask every_webhook_event = (webhook_event_mask{1} << webhook_event_names.size()) - 1;

}  // namespace parley::protocol
