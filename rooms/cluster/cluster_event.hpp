#pragma once

#include "protocol/server_messages.hpp"
#include "registry/session_handle.hpp"
#include "rooms/cluster/number_text.hpp"
#include "rooms/cluster/said_batch.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace parley::cluster {

// What nodes tell each other through Redis: on the cluster's channel (logins, dms, nodes coming
// and going) and on each room's channel (its messages, joins, leaves, typing, announcements).
enum class event_type : char {
    message = 'M',             // a say, sequenced (published by the say script with its seq)
    join = 'J',                // a user's first session here entered a room
    leave = 'L',
    leave_disconnected = 'D',  // left because the connection ended
    typing = 'T',
    system = 'S',              // an announcement to a room
    login = 'I',               // a name is now held by the origin node
    logout = 'O',
    dm = 'P',                  // a direct message for a user on node `room` (the target node)
    node_gone = 'X',           // the origin (or, from a reaper, the node in `room`) is gone
    node_state = 'R',          // the origin rewrote its users and rooms: read them again
    marker = 'K',              // the end of a snapshot read (`room` holds its nonce)
    stored_dm = 'Q',           // a dm stored in a conversation (token mode): `room` is the recipient
};

// One event, as text: five lines, "TYPE\nORIGIN\nROOM\nUSER\n" and the body. Node ids, room
// names and user names hold no newline (their character sets exclude it), and a body is JSON
// text, which holds none either (JSON escapes control characters in strings). A message's
// body is "SEQ\nTS\nACK\nJSON", written by the say script around the seq it assigns. A stored
// dm's body is "SENDER\nJSON": the sending session on the origin node, then the dm with its seq.
struct cluster_event {
    event_type type = event_type::marker;
    std::string_view origin;
    std::string_view room;
    std::string_view user;
    std::string_view body;  // the frame's JSON text (for messages, only the JSON)
    // Messages only.
    std::int64_t seq = 0;
    std::int64_t ts = 0;
    std::string_view ack;  // ack ticket, empty when the sender wants none
    // Messages of a batch of says: the body is the JSON without the seq's digits, which go at
    // this offset; npos when the body holds them.
    std::size_t seq_at = std::string_view::npos;
    // Stored dms only: the sending session on the origin node (format_session), which has its
    // copy already.
    std::string_view sender;
    // Joins and leaves from a room's channel: the room's membership version (scripts::presence);
    // their body is then the presence JSON, empty when the reader makes it. 0: not versioned.
    std::int64_t version = 0;
};

// Reads an event; nothing when the text is not one (another program publishing on the channel).
// batch_seq: the seq of a message whose seq line holds the offset of the seq's digits in its
// JSON instead of the seq (a say of a batch, kept as an event while a sync reads its snapshot);
// 0 for any other event.
std::optional<cluster_event> parse_event(std::string_view payload, std::int64_t batch_seq = 0);

// A publication on a channel holds one event, or a batch of one room's says (is_said_batch).
inline bool is_said_batch(std::string_view publication) {
    // An event's type letter is followed by a newline; a batch's "Y" by its first seq. (No
    // event's type is 'Y'.)
    return publication.size() > 1 && publication[0] == 'Y' && publication[1] != '\n';
}

// The first of the two publications scripts::says makes of a batch: "Y" and the stream entry's
// id "FIRST-COUNT", nothing after (said_batch_joiner puts it together with its block).
inline bool is_said_header(std::string_view publication) {
    return is_said_batch(publication) && publication.find('\n') == std::string_view::npos;
}

// A batch of one room's says as scripts::says publishes it on the room's channel: "Y", the
// stream entry's id "FIRST-COUNT", "\n" and the says (said_batch.hpp), numbered from the first
// seq one by one; `room` is the channel's (keys::room_of_channel). Calls f(const cluster_event&)
// for each, in order, as a message event: origin the sending node, no user, body the message's
// JSON without its seq's digits, which go at seq_at. The body is written into `scratch`, which
// each say reuses (no allocation per message once it has grown to a message's size); the other
// fields view the publication and the room. Returns false when the batch is malformed or holds
// other than COUNT says (f has seen the says before the fault).
template <typename F>
bool for_each_said(std::string_view publication, std::string_view room, std::string& scratch, F&& f) {
    const std::size_t end = publication.find('\n');
    const std::string_view id = publication.substr(0, end);
    const std::size_t dash = id.find('-');
    std::int64_t first = 0;
    std::int64_t count = 0;
    if (!is_said_batch(publication) || end == std::string_view::npos || dash == std::string_view::npos ||
        !parse_unsigned(id.substr(1, dash - 1), first) || first <= 0 || !parse_unsigned(id.substr(dash + 1), count) ||
        count <= 0 || room.empty()) {
        return false;
    }
    cluster_event e;
    e.type = event_type::message;
    e.room = room;
    e.seq = first - 1;
    std::int64_t left = count;
    const std::int64_t read = said_batch::read(publication.substr(end + 1), [&](const said_batch::say& say) {
        if (left-- <= 0) {
            return;  // more says than the id counts: read() goes on, the count below refuses
        }
        scratch.clear();
        protocol::append_message_before_seq(scratch, room, say.from, say.text_json, say.ts);
        e.seq_at = scratch.size();
        scratch.push_back('}');
        e.body = scratch;
        e.origin = say.node;
        e.ts = say.ts;
        e.ack = say.ack;
        ++e.seq;
        f(static_cast<const cluster_event&>(e));
    });
    return read == count;
}

std::string format_event(event_type type, std::string_view origin, std::string_view room, std::string_view user,
                         std::string_view body);

// The first four lines of a message event, to which the say script appends "SEQ\nTS\nACK\nJSON".
std::string message_event_head(std::string_view origin, std::string_view room, std::string_view from);

// Who gets the ack of a say, and its `re` (the request's id as JSON text): "WORKER.SESSION.RE".
std::string format_ack_ticket(registry::session_handle sender, std::string_view re);
struct ack_ticket {
    registry::session_handle sender;
    std::string_view re;
};
std::optional<ack_ticket> parse_ack_ticket(std::string_view text);

// A session on the node that names it: "WORKER.SESSION".
std::string format_session(registry::session_handle session);
std::optional<registry::session_handle> parse_session(std::string_view text);

}  // namespace parley::cluster
