#pragma once

#include "protocol/shared_frame.hpp"

#include <cstdint>
#include <memory>
#include <string_view>

namespace parley::rooms {

// Where a room's events go beyond this node: the seam for clustering. A single node uses the
// local bus, which sends nothing anywhere. A cluster bus (Redis) implements the same interface:
// one publish per event, carrying the frame that was encoded once for the local members, so
// nodes never re-encode per member.
// Thread: publish() is called by rooms from any worker, under the room's lock: it must only
// queue, never block or do I/O in place.
class message_bus {
public:
    virtual ~message_bus() = default;
    // seq is the message's room seq, or 0 for events without one (presence, typing, system).
    virtual void publish(std::string_view room, std::int64_t seq, const protocol::shared_frame& frame) = 0;
};

// The single-node bus: publishes nowhere.
std::unique_ptr<message_bus> make_local_bus();

}  // namespace parley::rooms
