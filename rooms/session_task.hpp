#pragma once

#include "registry/session_handle.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/worker_context.hpp"

#include <utility>

namespace parley::rooms {

// Work for one session, done on the worker that owns it: a dm, an ack, a history reply, a kick.
// The session may end while the task waits in the worker's queue, and its id is then never
// reused for another session (worker_context's ids carry a generation), so the task looks the
// id up again when it runs and does nothing when the session is gone.
//
// act: called as act(chat_session&) at most once, on the owning worker's thread; it must be
// copyable (worker_executor takes a std::function) and own whatever it needs.
// who.worker must name one of the hub's workers (std::out_of_range otherwise).
// Thread: any.

// Queues act behind everything already posted to that worker.
template <typename Act>
void post_to_session(chat_hub& hub, registry::session_handle who, Act act) {
    worker_context& owner = hub.worker(who.worker);
    owner.executor().post([&owner, session = who.session, act = std::move(act)]() mutable {
        if (chat_session* s = owner.find_session(session)) {
            act(*s);
        }
    });
}

// The same, but runs act at once when called on the owning worker's own thread (for a reply
// that must not fall behind a fan-out this thread is about to make to the same worker).
template <typename Act>
void run_on_session(chat_hub& hub, registry::session_handle who, Act act) {
    worker_context& owner = hub.worker(who.worker);
    if (worker_context::current() != &owner) {
        post_to_session(hub, who, std::move(act));
        return;
    }
    if (chat_session* s = owner.find_session(who.session)) {
        act(*s);
    }
}

}  // namespace parley::rooms
