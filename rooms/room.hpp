#pragma once

#include "protocol/shared_frame.hpp"
#include "registry/session_handle.hpp"
#include "rooms/history_store.hpp"
#include "rooms/message_bus.hpp"
#include "rooms/session_output.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::rooms {

class room_directory;
class worker_context;

// One chat room: its members, its seq and history (through its room_log), and the fan-out.
//
// Every broadcast is encoded ONCE into a shared frame, then ONE task per worker that has members
// is posted while the room's lock is held, so every worker sees the room's events in order.
// The lock is held only for bookkeeping and posting: never across I/O.
// Thread: every public method may be called from any worker thread.
class room : public std::enable_shared_from_this<room> {
public:
    room(std::string name, room_log& log, message_bus& bus, std::vector<worker_context*> workers,
         room_directory* directory, bool permanent);

    const std::string& name() const { return name_; }
    // Member sessions right now; read without the lock (for `rooms` listings).
    std::size_t member_count() const { return member_count_.load(std::memory_order_relaxed); }

    struct join_result {
        enum class status { joined, full, gone } outcome = status::gone;
        std::int64_t epoch = 0;
        std::vector<std::string> members;
        std::vector<protocol::shared_frame> history;
        std::optional<bool> recovered;
        std::uint64_t joined_event = 0;
        std::string topic;
    };
    struct join_request {
        std::string_view user;
        registry::session_handle who;
        std::optional<std::int64_t> after;
        std::optional<std::int64_t> epoch;
        std::size_t recent = 50;           // messages in `joined` without `after`
        std::size_t recover_limit = 1000;  // at most this many with `after`
        std::size_t max_members = 100000;
        // Above this many members, joins and leaves are not announced (presence storms).
        std::size_t presence_max_members = 1000;
    };
    // Adds the member and tells the others (presence join). `gone` means the room was closed
    // concurrently: look it up again.
    join_result join(const join_request& request);

    // The `joined` reply for a session that is already a member (a client resyncing), with no
    // change to membership and no presence.
    join_result describe(const join_request& request) const;

    // Removes the member; others get presence leave and, when `disconnected`, a system line,
    // unless the room has more than presence_max_members.
    void leave(std::string_view user, registry::session_handle who, bool disconnected,
               std::size_t presence_max_members = SIZE_MAX);

    // Declared in the configuration (exists with no members) or not, and its topic. A room
    // that stops being declared closes when its last member leaves, or now if it is empty.
    // Returns false when the room had already closed (look it up again).
    bool set_declared(bool permanent, std::string topic);

    // Assigns the next seq, encodes the message once, stores it and fans it out. Returns the seq.
    // With ack_to, the sender's `ack` (re: ack_id) is queued first: the sender's own copy of the
    // message may be queued during this call, and the ack is to come before it.
    std::int64_t say(std::string_view from, std::string_view text, std::int64_t ts,
                     session_output* ack_to = nullptr, std::string_view ack_id = {});

    // A `system` line to every member (an announcement; not stored, no seq).
    void announce(std::string_view text);

    // Relays a typing notice to the other members (not stored, no seq).
    void typing(std::string_view user, registry::session_handle who);

    // History query (oldest first): before/after as in protocol v1, else the newest. What memory
    // does not hold is left in the answer's `stored` part, for history_store::complete.
    history_answer history(std::optional<std::int64_t> before, std::optional<std::int64_t> after,
                           std::size_t limit) const;
    room_log& log() const { return log_; }

private:
    // Requires mutex_. Fills epoch, members, history and recovered of a `joined` reply.
    void fill_reply_locked(const join_request& request, join_result& result) const;
    // Requires mutex_. Posts frame to every worker with members; skips `except`. The calling
    // thread's own worker, when its members here are few, is served at once instead (see
    // inline_fanout_limit in room.cpp).
    void broadcast_locked(const protocol::shared_frame& frame, registry::session_handle except, std::int64_t seq = 0);

    const std::string name_;
    room_log& log_;
    message_bus& bus_;
    const std::vector<worker_context*> workers_;
    room_directory* const directory_;

    mutable std::mutex mutex_;
    std::map<std::string, std::uint32_t, std::less<>> members_;  // name -> sessions of that name
    std::vector<std::uint32_t> members_per_worker_;
    // Per worker: delivery tasks posted to it and not yet run. A broadcast made on a worker's
    // own thread reaches that worker's members at once (no task) only while this is zero, so
    // it cannot overtake an earlier broadcast still queued there. Raised under mutex_, lowered
    // by the task on its worker.
    std::unique_ptr<std::atomic<std::uint32_t>[]> undelivered_;
    std::uint64_t event_ = 0;  // counts broadcasts, so a new member skips those it was shown already
    bool closed_ = false;      // removed from the directory: joiners must look again
    bool permanent_;           // declared in the configuration
    std::string topic_;
    std::atomic<std::size_t> member_count_{0};
};

}  // namespace parley::rooms
