#pragma once

#include "rooms/cluster/redis_reply.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// Redis's wire protocol (RESP2), without sockets: commands written into a buffer, replies read
// out of the bytes received. server/cluster/redis_connection moves the bytes.
namespace parley::cluster::resp {

// Appends one command as a RESP array of bulk strings: binary-safe, any argument may be empty.
void append_command(std::string& out, std::span<const std::string_view> argv);

// A message that a subscribed connection receives, as views into the bytes read (valid until
// the reader's buffer changes): no allocation per message.
struct pubsub_message {
    bool sharded = false;  // "smessage" (SSUBSCRIBE) rather than "message"
    std::string_view channel;
    std::string_view payload;
};

// Finds where complete replies end in a stream of bytes that arrives in pieces. It keeps its
// place inside an unfinished reply, so a large reply arriving in many reads is scanned once in
// all (never from its start again).
//
// Contract: call scan() with the unread bytes, which start at the reply being scanned and only
// ever grow at their end between calls until scan() reports a complete reply; then the caller
// consumes that many bytes, and the next call starts at the next reply. Nesting deeper than
// max_depth, a length out of range or a byte that is not RESP makes the stream malformed: the
// connection must be dropped (nothing after it can be trusted).
class reply_scanner {
public:
    static constexpr std::size_t max_depth = 32;
    // A bulk string or an array may not announce more than this (Redis's own limit is 512 MB).
    static constexpr long long max_length = 1LL << 30;

    enum class status { incomplete, complete, malformed };
    // complete: `length` is the byte length of the first reply in `input`.
    status scan(std::string_view input, std::size_t& length);

private:
    std::size_t position_ = 0;              // bytes of the current reply scanned so far
    std::vector<long long> remaining_;      // per open array: elements still to come
};

// Reads one complete reply (as reply_scanner found it) into an owned tree.
redis_reply parse_reply(std::string_view complete);

// When the complete reply is a pub/sub message (["message"|"smessage", channel, payload]),
// fills `out` with views into `complete` and returns true; no allocation.
bool as_message(std::string_view complete, pubsub_message& out);

}  // namespace parley::cluster::resp
