#pragma once

#include <string>
#include <string_view>

// Names of the cluster's keys in Redis, all under "parley:" (the scripts build some of them too).
namespace parley::cluster::keys {

inline constexpr std::string_view channel = "parley:events";
inline constexpr std::string_view epoch = "parley:epoch";

// "parley:" + parts, without chains of operator+ (GCC 12 warns inside those).
inline std::string key(std::string_view a, std::string_view b, std::string_view c = {}) {
    std::string out("parley:");
    out.append(a).append(b).append(c);
    return out;
}

inline std::string name_lease(std::string_view user) { return key("name:", user); }
inline std::string node_users(std::string_view node) { return key("node:", node, ":users"); }
inline std::string node_rooms(std::string_view node) { return key("node:", node, ":rooms"); }
inline std::string room_seq(std::string_view room) { return key("room:", room, ":seq"); }
// A room's channel: its messages (says and numbered events, scripts::says and scripts::say)
// and its typing notices and announcements. A node subscribes to it while it feeds the room.
inline constexpr std::string_view room_channel_prefix = "parley:room:";
inline constexpr std::string_view room_channel_suffix = ":events";
inline std::string room_channel(std::string_view room) { return key("room:", room, room_channel_suffix); }
// The room a channel of room_channel() is for; empty for any other channel.
inline std::string_view room_of_channel(std::string_view name) {
    if (name.size() <= room_channel_prefix.size() + room_channel_suffix.size() ||
        !name.starts_with(room_channel_prefix) || !name.ends_with(room_channel_suffix)) {
        return {};
    }
    name.remove_prefix(room_channel_prefix.size());
    name.remove_suffix(room_channel_suffix.size());
    return name;
}
inline std::string room_stream(std::string_view room) { return key("room:", room, ":log"); }
// A room's settings (roles, bans, mutes, topic, slow mode): a hash from "KIND\nSUBJECT" to the
// value (rooms/room_settings.hpp), written with the event that changes it.
inline std::string room_settings(std::string_view room) { return key("room:", room, ":settings"); }
// A room's revised messages (an edit's new text, a deleted message's tombstone): a sorted set of
// "TS\nJSON" scored by seq, standing in for the stream entries they replaced, which are deleted
// (scripts::read_log merges the two).
inline std::string room_revised(std::string_view room) { return key("room:", room, ":revised"); }
// A stored direct conversation, named by its history key ("dm:A:B", rooms/direct_conversations.hpp):
// a counter and a stream like a room's.
inline std::string conversation_seq(std::string_view conversation) { return key(conversation, ":seq"); }
inline std::string conversation_stream(std::string_view conversation) { return key(conversation, ":log"); }
// A user's read markers (token mode): a hash from a room's name or a conversation's key to the
// seq read up to. Its fields are also the list of the user's conversations (welcome).
inline std::string user_markers(std::string_view user) { return key("user:", user, ":read"); }

// A stream entry's id for a message: its seq, then 1 (an id must not be 0-0).
inline std::string stream_id(long long seq) { return std::to_string(seq) + "-1"; }

}  // namespace parley::cluster::keys
