#pragma once

#include "protocol/error_code.hpp"
#include "protocol/shared_frame.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::protocol {

// Builders for every server message of protocol v1. Each returns a complete, unmasked WebSocket
// text frame (header and JSON payload) ready to be queued on any number of connections.
// `re` is the request's id as JSON text (empty: no "re" field).
// Thread: any; they only use a thread-local scratch buffer.

// Where a user stands in one room or direct conversation, for `welcome`'s `conversations`.
struct conversation_summary {
    bool is_room = true;
    std::string name;      // the room, or the other user of a direct conversation
    std::int64_t seq = 0;  // the conversation's last seq
    std::int64_t read = 0; // the user's read marker
    std::int64_t unread = 0;
};

shared_frame encode_welcome(std::string_view user, std::string_view re);
// With `conversations` (token mode): newest activity first, as given.
shared_frame encode_welcome(std::string_view user, std::string_view re,
                            const std::vector<conversation_summary>& conversations);

// What `joined` says of a room's settings and moderation (docs/protocol.md, Moderation). Empty
// parts are left out of the frame.
struct sanction_info {
    std::string user;
    std::string by;
    std::string reason;
    std::int64_t until_ms = 0;  // 0: until lifted
};
struct room_standing {
    std::string topic;
    std::vector<std::pair<std::string, std::string>> roles;  // user, "owner" or "moderator"
    std::int64_t slow_mode_s = 0;
    std::vector<sanction_info> bans;
    std::vector<sanction_info> mutes;
};

// A room's members as `joined` and `members` show them: names in sorted order (all of them, or
// the first of them when truncated), and how many members the room has in all.
struct member_list {
    std::vector<std::string> names;
    std::size_t count = 0;
    bool truncated = false;  // joined: names is the start of the list ("members_truncated")
};

// history holds message frames (as made by encode_message); their payloads are embedded as is.
shared_frame encode_joined(std::string_view room, std::int64_t epoch, const member_list& members,
                           const std::vector<shared_frame>& history, std::optional<bool> recovered,
                           std::string_view re, const room_standing* standing = nullptr);

// A page of a room's sorted member list (the reply to `members`): more when names after the
// page's last remain.
shared_frame encode_members(std::string_view room, const member_list& page, bool more, std::string_view re);

// A big room's member count, sent instead of presence events (rooms.presence_max_members).
shared_frame encode_presence_count(std::string_view room, std::size_t count);

shared_frame encode_left(std::string_view room, std::string_view re);

shared_frame encode_message(std::string_view room, std::string_view from, std::string_view text, std::int64_t seq,
                            std::int64_t ts);

// A `message` whose seq is not known yet (a cluster assigns it): the JSON text before and after
// the seq's digits, so whoever assigns the seq completes the text without encoding it again.
struct message_text_around_seq {
    std::string before;  // {"type":"message",...,"seq":
    std::string after;   // }
    // Where the text's JSON string (quotes included) lies in `before` (encode_message_around_seq
    // only; 0 and 0 otherwise): what a cluster sends of a say besides its names and time.
    std::size_t text_at = 0;
    std::size_t text_size = 0;
};
message_text_around_seq encode_message_around_seq(std::string_view room, std::string_view from,
                                                  std::string_view text, std::int64_t ts);
// Appends a `message`'s JSON up to its seq's digits (what encode_message_around_seq gives as
// `before`, byte for byte) for a text that is a JSON string already, quotes included: how a
// cluster node rebuilds a say that travelled as its names, time and text alone.
void append_message_before_seq(std::string& out, std::string_view room, std::string_view from,
                               std::string_view text_json, std::int64_t ts);

// Any server event of a room encoded with its seq (its first "seq" field, which every room
// event has right after its room name) split around that seq's digits, for a cluster to number.
message_text_around_seq split_around_seq(const shared_frame& event);

// A complete text frame around a server message's JSON text encoded elsewhere (another node).
shared_frame frame_of_json(std::string_view json);
// The same for JSON text encoded elsewhere without its seq: before, the seq's digits, after.
shared_frame frame_of_json_around(std::string_view before, std::int64_t seq, std::string_view after);

// seq: the message's place in the stored conversation of from and to; none when direct messages
// are live only (no identities: auth.mode "none").
shared_frame encode_dm(std::string_view from, std::string_view to, std::string_view text, std::int64_t ts,
                       std::optional<std::int64_t> seq = std::nullopt);
// A stored `dm` whose seq a cluster assigns: the text of encode_dm(from, to, text, ts, seq)
// before and after the seq's digits.
message_text_around_seq encode_dm_around_seq(std::string_view from, std::string_view to, std::string_view text,
                                             std::int64_t ts);

// The answer to dm_history: dm frames (as made by encode_dm), oldest first, embedded as is.
// epoch: the conversation's (as a room's in `joined`); none when there is no conversation.
shared_frame encode_dm_history(std::string_view with, std::optional<std::int64_t> epoch,
                               const std::vector<shared_frame>& messages, std::string_view re);

// A read marker: the reply to `read` (with re) and the event the user's other sessions get.
// is_room: name is a room; else it is the other user of a direct conversation (`with`).
shared_frame encode_read(bool is_room, std::string_view name, std::int64_t seq, std::string_view re);

shared_frame encode_presence(std::string_view room, std::string_view user, bool joined);

shared_frame encode_typing(std::string_view room, std::string_view user);

shared_frame encode_system(std::string_view text);

shared_frame encode_users(const std::vector<std::string>& users, std::string_view re);

// topics: when given, the topic of each room (same order; empty: no "topic" field).
shared_frame encode_rooms(const std::vector<std::pair<std::string, std::size_t>>& rooms, std::string_view re,
                          const std::vector<std::string>* topics = nullptr);

shared_frame encode_history(std::string_view room, const std::vector<shared_frame>& messages, std::string_view re);

// ack for a say (room and seq) or, with room empty, for a live-only dm.
shared_frame encode_ack(std::string_view re, std::string_view room, std::int64_t seq);
// ack for a stored dm: the conversation's other user and the message's seq.
shared_frame encode_dm_ack(std::string_view re, std::string_view with, std::int64_t seq);

shared_frame encode_error(error_code code, std::string_view message, std::string_view re);

// A moderation action as an event in the room's sequence (stored, replayed on catch-up):
// {"type":"moderation","room","seq","ts","action","by", and when they apply: "user","reason",
// "until" (Unix ms; absent: until lifted), "role", "topic", "interval_s"}.
struct moderation_event {
    std::string_view room;
    std::string_view action;  // kick, ban, unban, mute, unmute, set_role, set_topic, set_slow_mode
    std::string_view by;      // the actor; "" for the server (a timed sanction that ended)
    std::string_view user;
    std::string_view reason;
    std::string_view role;
    std::optional<std::string_view> topic;
    std::optional<std::int64_t> until_ms;
    std::optional<std::int64_t> interval_s;
};
shared_frame encode_moderation(const moderation_event& event, std::int64_t seq, std::int64_t ts);

// A message as history shows it once edited (its new text, "edited": true) or deleted (no text,
// "deleted": true): same room, author, seq and ts as the original.
shared_frame encode_revised_message(std::string_view room, std::string_view from, std::string_view text,
                                    std::int64_t seq, std::int64_t ts);
shared_frame encode_deleted_message(std::string_view room, std::string_view from, std::int64_t seq, std::int64_t ts);
// The events in the room's sequence that say so: `edited` (with the new text) and `deleted`,
// `target` being the original's seq. An `edited` event of a message deleted later is kept
// without its text (text nullopt).
shared_frame encode_edited(std::string_view room, std::int64_t seq, std::int64_t ts, std::int64_t target,
                           std::string_view by, std::optional<std::string_view> text);
shared_frame encode_deleted(std::string_view room, std::int64_t seq, std::int64_t ts, std::int64_t target,
                            std::string_view by);

}  // namespace parley::protocol
