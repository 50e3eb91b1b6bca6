#pragma once

#include "rooms/cluster/number_text.hpp"

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace parley::cluster::said_batch {

// A room's batch of plain says as a node hands it to scripts::says, as the room's stream keeps
// it (the field c of the entry "FIRST-COUNT") and as the room's channel carries it (after the
// header "Y" and the entry's id). The block's first line is "NODE:RUN:NUMBER0:TS0": the sending
// node, its run, and the first say's number and time. Then per say "\n" and five lines: its
// NUMBER in the node's run less NUMBER0, its TS less TS0 (milliseconds; either may be
// negative), ACK (the ack ticket; empty for none), FROM and TEXT, the text as a JSON string with
// its quotes. A block an earlier version wrote starts "NODE:RUN" and gives each NUMBER and TS
// whole; read() takes both.
//
// Only what differs from say to say travels: the rest of a message's JSON (its type, its room,
// the field names) is the same for every say of the room, and each reader writes it back
// (protocol::append_message_before_seq); a say's number and time, which its neighbours nearly
// share, take a digit or two instead of six and thirteen. Redis's work for a say is mostly per
// byte (its Lua copies every string it is given; the stream and the publication copy them
// again), and the whole JSON with its own copy of the time was twice these bytes. Node ids,
// runs and user names hold no newline and no ':', and a JSON string holds no newline either.

// What a block's says are counted from (its first line).
struct origin {
    std::uint64_t number = 0;
    std::int64_t ts = 0;
};

// The block's first line, for says counted from the first one's number and time.
inline origin start(std::string& block, std::string_view node, std::string_view run, std::uint64_t first_number,
                    std::int64_t first_ts) {
    char digits[24];
    block.append(node).append(":").append(run).push_back(':');
    block.append(digits, std::to_chars(digits, digits + sizeof digits, first_number).ptr).push_back(':');
    block.append(digits, std::to_chars(digits, digits + sizeof digits, first_ts).ptr);
    return {first_number, first_ts};
}

// One more say.
inline void append(std::string& block, const origin& from_origin, std::uint64_t number, std::int64_t ts,
                   std::string_view ack, std::string_view from, std::string_view text_json) {
    char digits[24];
    const auto number_offset = static_cast<std::int64_t>(number - from_origin.number);
    block.push_back('\n');
    block.append(digits, std::to_chars(digits, digits + sizeof digits, number_offset).ptr).push_back('\n');
    block.append(digits, std::to_chars(digits, digits + sizeof digits, ts - from_origin.ts).ptr).push_back('\n');
    block.append(ack).append("\n").append(from).append("\n").append(text_json);
}

struct say {
    std::string_view node;  // the sender's node id (the block's NODE)
    std::string_view said;  // "NODE:RUN", which with number names the say
    std::uint64_t number = 0;
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
    std::string_view first;
    next_line(first);
    const std::size_t colon = first.find(':');
    const std::size_t run_end = colon == std::string_view::npos ? colon : first.find(':', colon + 1);
    if (colon == 0 || colon == std::string_view::npos || run_end == colon + 1 || block.empty()) {
        return -1;
    }
    s.node = first.substr(0, colon);
    s.said = first.substr(0, run_end);
    // With an origin the lines are offsets from it (signed); without, whole numbers.
    const bool offsets = run_end != std::string_view::npos;
    origin base;
    if (offsets) {
        const std::string_view rest = first.substr(run_end + 1);
        const std::size_t split = rest.find(':');
        if (split == std::string_view::npos || !parse_unsigned(rest.substr(0, split), base.number) ||
            !parse_unsigned(rest.substr(split + 1), base.ts)) {
            return -1;
        }
    }
    std::int64_t count = 0;
    while (!block.empty()) {
        std::string_view number;
        std::string_view ts;
        std::int64_t number_value = 0;
        std::int64_t ts_value = 0;
        next_line(number);
        next_line(ts);
        next_line(s.ack);
        next_line(s.from);
        next_line(s.text_json);
        const bool numbers_read = offsets ? parse_number(number, number_value) && parse_number(ts, ts_value)
                                          : parse_unsigned(number, number_value) && parse_unsigned(ts, ts_value);
        if (!numbers_read || s.from.empty() || s.text_json.size() < 2 || s.text_json.front() != '"' ||
            s.text_json.back() != '"') {
            return -1;
        }
        s.number = base.number + static_cast<std::uint64_t>(number_value);
        s.ts = base.ts + ts_value;
        ++count;
        f(static_cast<const say&>(s));
    }
    return count;
}

}  // namespace parley::cluster::said_batch
