#pragma once

#include "protocol/shared_frame.hpp"

#include <cstdint>
#include <memory>
#include <string_view>

namespace parley::rooms {

// What happened in a room, for the other nodes of a cluster. Messages are not among them: in a
// cluster a say is sequenced by the cluster first (cluster_link::submit_say) and comes back to
// every node's room through room::apply_message.
enum class room_event : std::uint8_t {
    join,                // user's first session entered the room
    leave,               // user's last session left it
    leave_disconnected,  // the same, because the connection ended ("user disconnected")
    typing,
    system,              // an announcement to the room
};

// Where a room's events go beyond this node: the seam for clustering. A single node uses the
// local bus, which sends nothing anywhere. The cluster bus (Redis) implements the same interface:
// one publish per event, carrying the frame that was encoded once for the local members, so
// other nodes never re-encode it.
// Thread: publish() is called by rooms from any worker, under the room's lock: it must only
// queue, never block or do I/O in place.
class message_bus {
public:
    virtual ~message_bus() = default;
    // user: who joined, left or typed (empty for system); frame: what local members were sent.
    virtual void publish(room_event event, std::string_view room, std::string_view user,
                         const protocol::shared_frame& frame) = 0;
};

// The single-node bus: publishes nowhere.
std::unique_ptr<message_bus> make_local_bus();

}  // namespace parley::rooms
