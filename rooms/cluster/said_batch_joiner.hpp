#pragma once

#include "rooms/cluster/cluster_event.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace parley::cluster {

// Puts a room's batch of says back together as one publication (is_said_batch). scripts::says
// publishes a batch as two: its header "Y<first>-<count>" and then the block (said_batch.hpp)
// exactly as the node gave it, so that Redis sends the block on without copying it into a new
// string (its Lua would copy and hash the header and the block joined). The two are adjacent on
// the subscriber's connection: a script runs alone, and what it publishes reaches each
// subscriber in order. So a block is the publication right after its header on the same
// channel, and a header that anything else follows lost its block with the connection that was
// carrying it (the node catches the room up after that, as after any lost connection).
//
// Thread: the one reading a subscriber connection; one joiner per connection. The publication
// handed on views the joiner's buffer (reused, so no allocation per batch once it has grown) or
// the payload, until the next take().
class said_batch_joiner {
public:
    // A publication as the connection received it. Calls deliver(channel, publication) for each
    // whole one: an event, a batch published in one piece (an earlier version's), or a header
    // and its block joined by "\n". Holds a header until the next publication.
    template <typename F>
    void take(std::string_view channel, std::string_view payload, F&& deliver) {
        if (holding_) {
            holding_ = false;
            if (channel == channel_ && is_block(payload)) {
                joined_.resize(header_size_);
                joined_.push_back('\n');
                joined_.append(payload);
                deliver(std::string_view(channel_), std::string_view(joined_));
                return;
            }
            ++orphaned_;
        }
        if (is_said_header(payload)) {
            holding_ = true;
            channel_.assign(channel);
            joined_.assign(payload);
            header_size_ = payload.size();
            return;
        }
        deliver(channel, payload);
    }

    // Headers whose block did not follow (dropped: their says are fetched from the stream).
    std::uint64_t orphaned() const { return orphaned_; }

private:
    // A block's first line is "NODE:RUN:NUMBER0:TS0" (said_batch.hpp); an event's is its type
    // letter alone.
    static bool is_block(std::string_view payload) {
        const std::string_view first_line = payload.substr(0, payload.find('\n'));
        return first_line.find(':') != std::string_view::npos;
    }

    bool holding_ = false;
    std::string channel_;
    std::string joined_;  // the header, then (once its block came) "\n" and the block
    std::size_t header_size_ = 0;
    std::uint64_t orphaned_ = 0;
};

}  // namespace parley::cluster
