#pragma once

#include "protocol/shared_frame.hpp"
#include "protocol/webhook_events.hpp"

#include <atomic>
#include <cstdint>
#include <string_view>

namespace parley::rooms {

// Where chat events go when someone outside the daemon listens (webhooks, docs/webhooks.md).
// The server implements it: a bounded queue per receiver, sent from the main loop.
// Thread: publish() is called by rooms and sessions from any worker, often under a room's lock
// (so one room's events are published in the room's order): it must only queue, never block on
// a receiver or do I/O.
class event_sink {
public:
    virtual ~event_sink() = default;
    // room, user: empty when the event has none. frame: the event as the room's members (or a
    // dm's users) were sent it, shared and not copied; empty for the events without one
    // (user_connected, user_disconnected, room_occupied, room_vacated). ts_ms: when it happened.
    virtual void publish(protocol::webhook_event kind, std::string_view room, std::string_view user,
                         const protocol::shared_frame& frame, std::int64_t ts_ms) = 0;
};

// The emitters' side: which kinds anyone wants (one relaxed load, so an event nobody asked for
// costs a branch) and the sink they go to. Set by the server at start and on a reload.
// Thread: any; the sink outlives every emitter (it is detached only after the workers stop).
class chat_events {
public:
    bool wants(protocol::webhook_event kind) const {
        return (wanted_.load(std::memory_order_relaxed) & protocol::bit_of(kind)) != 0;
    }
    void emit(protocol::webhook_event kind, std::string_view room, std::string_view user,
              const protocol::shared_frame& frame, std::int64_t ts_ms) const {
        if (event_sink* sink = sink_.load(std::memory_order_acquire); sink != nullptr && wants(kind)) {
            sink->publish(kind, room, user, frame, ts_ms);
        }
    }
    void attach(event_sink* sink) { sink_.store(sink, std::memory_order_release); }
    void set_wanted(protocol::webhook_event_mask kinds) { wanted_.store(kinds, std::memory_order_relaxed); }

private:
    std::atomic<protocol::webhook_event_mask> wanted_{0};
    std::atomic<event_sink*> sink_{nullptr};
};

}  // namespace parley::rooms
