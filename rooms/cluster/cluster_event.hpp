#pragma once

#include "registry/session_handle.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace parley::cluster {

// What nodes tell each other through the cluster's one Redis channel. One channel, so every node
// sees every event in the one order Redis executed them in.
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
};

// Reads an event; nothing when the text is not one (another program publishing on the channel).
// batch_seq: the seq a batch of says gave the event (for_each_published), whose text then holds
// the seq's place in the JSON instead of the seq; 0 for any other event.
std::optional<cluster_event> parse_event(std::string_view payload, std::int64_t batch_seq = 0);

// One publication on the channel holds one event, or a batch:
// - "B", then per event "\n", its length in decimal, "\n", the event (scripts::say);
// - "S", the seqs of a batch of says separated by ",", then its events as in "B", each a
//   message whose seq line holds the offset of the seq's digits in its JSON (scripts::says).
// Calls f(event text, seq) for each, in order, with the seq an "S" batch gave it (else 0);
// returns false when a batch is cut short or malformed (f has seen the events before the
// fault).
template <typename F>
bool for_each_published(std::string_view payload, F&& f) {
    if (payload.size() < 2 || (payload[0] != 'B' && payload[0] != 'S')) {
        f(payload, std::int64_t{0});
        return true;
    }
    const bool numbered = payload[0] == 'S';
    std::string_view seqs;
    if (numbered) {
        const std::size_t end = payload.find('\n');
        if (end == std::string_view::npos) {
            return false;
        }
        seqs = payload.substr(1, end - 1);
        payload.remove_prefix(end);
    } else {
        payload.remove_prefix(1);
    }
    while (!payload.empty()) {
        if (payload[0] != '\n') {
            return false;
        }
        payload.remove_prefix(1);
        std::size_t length = 0;
        std::size_t digits = 0;
        while (digits < payload.size() && digits < 10 && payload[digits] >= '0' && payload[digits] <= '9') {
            length = length * 10 + static_cast<std::size_t>(payload[digits] - '0');
            ++digits;
        }
        if (digits == 0 || digits >= payload.size() || payload[digits] != '\n' ||
            payload.size() - digits - 1 < length) {
            return false;
        }
        std::int64_t seq = 0;
        if (numbered) {
            // The next seq of the list, one per event.
            const std::size_t comma = seqs.find(',');
            const std::string_view number = seqs.substr(0, comma);
            seq = 0;
            for (const char c : number) {
                if (c < '0' || c > '9' || seq > (INT64_MAX - 9) / 10) {
                    return false;
                }
                seq = seq * 10 + (c - '0');
            }
            if (number.empty() || seq <= 0) {
                return false;
            }
            seqs = comma == std::string_view::npos ? std::string_view() : seqs.substr(comma + 1);
        }
        f(payload.substr(digits + 1, length), seq);
        payload.remove_prefix(digits + 1 + length);
    }
    return true;
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
