#pragma once

#include "rooms/cluster/partitions.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

// Names of the cluster's keys in Redis, all under "parley:" (the scripts build some of them too).
//
// Everything of one room, one direct conversation or one user lives in its partition
// (partitions.hpp): its keys and its channel start "parley:{pN}:", so Redis Cluster keeps them in
// one slot and a script on them touches one slot. What belongs to the cluster as a whole (the
// epoch, the nodes and their users and rooms) carries the tag "{cluster}": one slot too, so the
// scripts that walk the nodes touch one slot. The cluster's channel has no tag: it is published
// with PUBLISH, which Redis Cluster carries to every server.
namespace parley::cluster::keys {

inline constexpr std::string_view channel = "parley:events";
// The prefix of the cluster's own keys (the scripts that walk the nodes spell it too).
inline constexpr std::string_view cluster_prefix = "parley:{cluster}:";
inline constexpr std::string_view epoch = "parley:{cluster}:epoch";
inline constexpr std::string_view nodes = "parley:{cluster}:nodes";

// "parley:" + parts, without chains of operator+ (GCC 12 warns inside those).
inline std::string key(std::string_view a, std::string_view b, std::string_view c = {}) {
    std::string out("parley:");
    out.append(a).append(b).append(c);
    return out;
}

// "parley:{pN}:" + kind + name + suffix, N the partition of `owner` (the room's name, the
// conversation's key, the user's name).
inline std::string partitioned(std::string_view owner, std::string_view kind, std::string_view name,
                               std::string_view suffix) {
    std::string out("parley:");
    out.append(partition_tag(partition_of(owner))).append(":").append(kind).append(name).append(suffix);
    return out;
}

// The layout of the keys below, kept in Redis under layout_key (scripts::migrate_layout moves
// the keys of an earlier layout).
inline constexpr std::string_view layout_key = "parley:layout";
inline constexpr std::string_view layout = "3";

inline std::string name_lease(std::string_view user) { return partitioned(user, "name:", user, {}); }
inline std::string node_users(std::string_view node) { return key("{cluster}:node:", node, ":users"); }
inline std::string node_rooms(std::string_view node) { return key("{cluster}:node:", node, ":rooms"); }
inline std::string room_seq(std::string_view room) { return partitioned(room, "room:", room, ":seq"); }
// A room's channel: its messages (says and numbered events, scripts::says and scripts::say)
// and its typing notices and announcements. A node subscribes to it while it feeds the room.
inline constexpr std::string_view room_channel_suffix = ":events";
inline std::string room_channel(std::string_view room) { return partitioned(room, "room:", room, room_channel_suffix); }
// The room a channel of room_channel() is for ("parley:{pN}:room:" ROOM ":events"); empty for
// any other channel.
inline std::string_view room_of_channel(std::string_view name) {
    constexpr std::string_view start = "parley:{p";
    constexpr std::string_view kind = "}:room:";
    if (!name.starts_with(start) || !name.ends_with(room_channel_suffix)) {
        return {};
    }
    const std::size_t tag_end = name.find(kind, start.size());
    if (tag_end == std::string_view::npos || tag_end == start.size() ||
        name.size() <= tag_end + kind.size() + room_channel_suffix.size()) {
        return {};
    }
    name.remove_prefix(tag_end + kind.size());
    name.remove_suffix(room_channel_suffix.size());
    return name;
}
// A room's members (scripts::presence): each member's node, and the membership version.
inline std::string room_members(std::string_view room) { return partitioned(room, "room:", room, ":members"); }
// A partition's rooms index: each of its rooms with members, and how many (scripts::presence).
inline constexpr std::string_view rooms_index_suffix = ":rooms";
inline std::string rooms_index(std::uint32_t partition) {
    std::string out("parley:");
    out.append(partition_tag(partition)).append(rooms_index_suffix);
    return out;
}
inline std::string room_stream(std::string_view room) { return partitioned(room, "room:", room, ":log"); }
// A room's settings (roles, bans, mutes, topic, slow mode): a hash from "KIND\nSUBJECT" to the
// value (rooms/room_settings.hpp), written with the event that changes it.
inline std::string room_settings(std::string_view room) { return partitioned(room, "room:", room, ":settings"); }
// A room's revised messages (an edit's new text, a deleted message's tombstone): a sorted set of
// "TS\nJSON" scored by seq, standing in for the stream entries they replaced, which are deleted
// (scripts::read_log merges the two).
inline std::string room_revised(std::string_view room) { return partitioned(room, "room:", room, ":revised"); }
// A stored direct conversation, named by its history key ("dm:A:B", rooms/direct_conversations.hpp):
// a counter and a stream like a room's.
inline std::string conversation_seq(std::string_view conversation) {
    return partitioned(conversation, {}, conversation, ":seq");
}
inline std::string conversation_stream(std::string_view conversation) {
    return partitioned(conversation, {}, conversation, ":log");
}
// A user's read markers (token mode): a hash from a room's name or a conversation's key to the
// seq read up to. Its fields are also the list of the user's conversations (welcome).
inline std::string user_markers(std::string_view user) { return partitioned(user, "user:", user, ":read"); }
// A user's channel: the dms for the user (live ones without tokens, stored ones with), read by
// the node holding the user's name (a sharded channel, in the user's partition).
inline constexpr std::string_view user_channel_suffix = ":events";
inline std::string user_channel(std::string_view user) {
    return partitioned(user, "user:", user, user_channel_suffix);
}
inline bool is_user_channel(std::string_view name) {
    return name.starts_with("parley:{p") && name.find("}:user:") != std::string_view::npos &&
           name.ends_with(user_channel_suffix);
}
// A partition's users index: each name of the partition a node claimed, and the node (a name
// counts while its lease names that node: scripts::users_index).
inline std::string users_index(std::uint32_t partition) {
    std::string out("parley:");
    out.append(partition_tag(partition)).append(":users");
    return out;
}

// The partition of a room's key or channel ("parley:{pN}:room:...") or of a partition's rooms
// index; nullopt for any other.
inline std::optional<std::uint32_t> room_partition(std::string_view key) {
    constexpr std::string_view start = "parley:{p";
    constexpr std::string_view kind = "}:room:";
    if (!key.starts_with(start)) {
        return std::nullopt;
    }
    std::uint32_t partition = 0;
    std::size_t at = start.size();
    for (; at < key.size() && at < start.size() + 3 && key[at] >= '0' && key[at] <= '9'; ++at) {
        partition = partition * 10 + static_cast<std::uint32_t>(key[at] - '0');
    }
    if (at == start.size() || partition >= partition_count ||
        (key.substr(at, kind.size()) != kind && key.substr(at) != std::string("}").append(rooms_index_suffix))) {
        return std::nullopt;
    }
    return partition;
}

// Which of `shards` standalone Redis servers holds a key or channel. The rooms are spread: a
// room's keys and channel live on its partition's shard (shard_of_partition). Everything else
// (the cluster's channel, epoch and nodes, names, direct conversations, read markers) lives on
// the first server, so every script that touches it runs on one server. (A Redis Cluster places
// keys by their slot instead: redis_link::shard_of.)
inline std::uint32_t shard_of_key(std::string_view key, std::uint32_t shards) {
    if (shards <= 1) {
        return 0;
    }
    const auto partition = room_partition(key);
    return partition ? shard_of_partition(*partition, shards) : 0;
}

// A stream entry's id for a message: its seq, then 1 (an id must not be 0-0).
inline std::string stream_id(long long seq) { return std::to_string(seq) + "-1"; }

}  // namespace parley::cluster::keys
