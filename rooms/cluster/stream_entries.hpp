#pragma once

#include "rooms/cluster/number_text.hpp"
#include "rooms/cluster/redis_reply.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace parley::cluster {

// A message as a room's stream gives it: the entry ["SEQ-1", [field, value, ...]] of one message,
// as scripts::read_log answers (it splits a batch's entry into its says) and a dm's stream
// holds. Three layouts: a say of a batch (scripts::says) has only y, a block of one say
// (said_batch.hpp), from which the message's JSON is written back with the room's name and the
// entry's seq; a say of a batch an earlier version stored has only x: "OFFSET\nTS\nACK\n
// NODE:RUN:NUMBER\n" then the JSON with the seq's digits left out at OFFSET; anything else
// (scripts::say, a dm, a revised message) has j: the JSON, t: its time, n: "NODE:RUN:NUMBER",
// a: the ack ticket.
struct stream_entry {
    std::int64_t seq = 0;
    std::int64_t ts = 0;
    std::string json;
    std::string origin;  // the node that took the say
    std::string ack;
};

// The entries of an XRANGE or XREVRANGE reply of `room`'s stream (a conversation's: any room,
// its entries have no y), in the reply's order; entries that are not a message (no id, no JSON)
// are left out.
std::vector<stream_entry> parse_stream(const redis_reply& reply, std::string_view room);

// A member of a node's rooms hash: "ROOM\nUSER" (neither holds a newline).
std::string membership_field(std::string_view room, std::string_view user);

}  // namespace parley::cluster
