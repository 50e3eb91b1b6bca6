#pragma once

#include "rooms/history/history_store.hpp"
#include "rooms/room_moderation.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::rooms {

// How a room's moderation state is kept as the store's settings (history_store, "room
// settings"): one row per role, ban and mute, and one each for the topic and the slow mode.
//   role       subject: user   value: "owner" or "moderator"
//   ban, mute  subject: user   value: until_ms, by and reason, one per line (the reason last,
//                              so it may hold line breaks itself; a name cannot)
//   topic      subject: ""     value: the topic set in the room
//   slow_mode  subject: ""     value: the interval in seconds
// A removal is the same row with an empty value.

room_setting role_setting(std::string_view user, room_role role);
// s null: the ban or mute is lifted.
room_setting sanction_setting(bool ban, std::string_view user, const sanction* s);
room_setting topic_setting(std::string_view topic);
room_setting slow_mode_setting(std::int64_t interval_s);

// What stored settings make of a room. Rows that cannot be read (another version's kinds, a
// damaged value) are skipped: a room must open whatever its settings hold.
struct loaded_settings {
    room_moderation moderation;
    std::optional<std::string> topic;
};
loaded_settings load_settings(const std::vector<room_setting>& rows);

}  // namespace parley::rooms
