#pragma once

#include "rooms/cluster/number_text.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace parley::cluster::said_batch {

// A room's batch of plain says as a node hands it to scripts::says, as the room's stream keeps
// it (the field c of the entry "FIRST-COUNT") and as the room's channel carries it ("Y", the
// entry's id, "\n" and the block). The block is the sending node's "NODE:RUN", then per say "\n"
// and five lines: its NUMBER in the node's run, TS, ACK (the ack ticket; empty for none), FROM
// and TEXT, the text as a JSON string with its quotes.
//
// Only what differs from say to say travels: the rest of a message's JSON (its type, its room,
// the field names) is the same for every say of the room, and each reader writes it back
// (protocol::append_message_before_seq). Redis's work for a say is mostly per byte (its Lua
// hashes every string it is given or makes; the stream and the publication copy them), and the
// whole JSON with its own copy of the time was twice these bytes. Node ids, runs and user names
// hold no newline, and a JSON string holds none either.

// The block's first line.
inline void start(std::string& block, std::string_view node, std::string_view run) {
    block.append(node).append(":").append(run);
}

// One more say.
inline void append(std::string& block, std::uint64_t number, std::int64_t ts, std::string_view ack,
                   std::string_view from, std::string_view text_json) {
    char digits[24];
    block.push_back('\n');
    block.append(digits, std::to_chars(digits, digits + sizeof digits, number).ptr).push_back('\n');
    block.append(digits, std::to_chars(digits, digits + sizeof digits, ts).ptr).push_back('\n');
    block.append(ack).append("\n").append(from).append("\n").append(text_json);
}

struct say {
    std::string_view node;  // the sender's node id (the block's NODE)
    std::string_view said;  // "NODE:RUN" (the block's first line), which with number names the say
    std::string_view number;
    std::int64_t ts = 0;
    std::string_view ack;
    std::string_view from;
    std::string_view text_json;
};

// Reads a block: calls f(const say&) for each say, in order. Returns how many it read, or -1
// when the block is malformed (f has seen the says before the fault). Nothing is copied: the
// says view the block.
template <typename F>
std::int64_t read(std::string_view block, F&& f) {
    const auto next_line = [&block](std::string_view& line) {
        const std::size_t end = block.find('\n');
        line = block.substr(0, end);
        block.remove_prefix(end == std::string_view::npos ? block.size() : end + 1);
    };
    say s;
    next_line(s.said);
    const std::size_t colon = s.said.find(':');
    if (colon == 0 || colon == std::string_view::npos || block.empty()) {
        return -1;
    }
    s.node = s.said.substr(0, colon);
    std::int64_t count = 0;
    while (!block.empty()) {
        std::string_view ts;
        std::int64_t number = 0;
        next_line(s.number);
        next_line(ts);
        next_line(s.ack);
        next_line(s.from);
        next_line(s.text_json);
        if (!parse_unsigned(s.number, number) || !parse_unsigned(ts, s.ts) || s.from.empty() ||
            s.text_json.size() < 2 || s.text_json.front() != '"' || s.text_json.back() != '"') {
            return -1;
        }
        ++count;
        f(static_cast<const say&>(s));
    }
    return count;
}

}  // namespace parley::cluster::said_batch
