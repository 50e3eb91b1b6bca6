#pragma once

#include "protocol/shared_frame.hpp"
#include "rooms/history/log_cache.hpp"
#include "rooms/history/room_log.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::rooms {

// How the store's writing goes (zero for the memory store), and its logs' memory.
struct history_stats {
    std::uint64_t written = 0;   // messages written to storage since start
    std::uint64_t failures = 0;  // failed batch writes (their messages were kept and retried)
    std::size_t backlog = 0;     // messages accepted and not yet written
    std::uint64_t marker_batches = 0;  // transactions that wrote read markers
    std::int64_t memory_bytes = 0;   // what the logs in memory and the store's engine hold
    std::uint64_t evictions = 0;     // idle logs evicted from memory since start
    std::uint64_t evicted_bytes = 0; // what they held, summed
    std::int64_t log_bytes = 0;      // of memory_bytes, the logs' part (log_cache::held_bytes)
};

// Where one user has read up to in one log (a room, or a direct conversation's key).
struct read_marker {
    std::string key;
    std::int64_t seq = 0;
};

// One stored setting of a room: who holds a role, a ban or a mute, the topic, the slow mode. The
// store keeps them as opaque text keyed by (kind, subject); rooms/room_settings.cpp says what
// they mean. Kinds are short words ("role", "ban", ...), subject a user name or empty.
struct room_setting {
    std::string kind;
    std::string subject;
    std::string value;  // empty in save_room_setting: the setting is removed
};

// The end of a history read: the whole answer, oldest first, or nullopt when storage could not
// be read (the client is told `unavailable`, never given a page that only looks complete).
using history_done = std::function<void(std::optional<std::vector<protocol::shared_frame>>)>;

// Where room logs live. A log stays in memory while a handle to it lives; an idle one stays while
// the store's memory budget allows (log_cache), so a room that empties and is made again soon
// continues from memory. Evicted, it is read back from storage on the next open(): its seq
// continues. The memory store has nothing to read back: an evicted log is gone, and the log made
// in its place starts a new epoch, so no client takes its seqs for the old ones.
// Thread: every method may be called from any thread.
class history_store {
public:
    virtual ~history_store() = default;
    // The log of a room, made (or read back from storage) when it is not in memory. The log
    // stays in memory, the same object, while the handle or a copy of it lives; handles must be
    // gone before the store is destroyed. Throws when storage cannot be read (sqlite_error).
    // The SQLite store may make the caller wait for one pass of its writer (at most 2 s) before
    // making a log, when unwritten idle logs are past its budget (sqlite_history_store.cpp).
    virtual log_handle open(std::string_view room) = 0;

    // Finishes an answer: one without a stored part calls done at once; one with it is read by
    // read_stored, off the calling thread, and done is called once on a thread of the store
    // (unless stop_reads() came first). done gets the whole answer, oldest first, or nullopt
    // when the stored part could not be read. The read holds a copy of the handle.
    void complete(const log_handle& log, history_answer answer, history_done done);

    // Stops calling `done`: reads still queued are dropped. Called before the threads that the
    // callbacks post to go away; messages keep being written.
    virtual void stop_reads() {}

    virtual history_stats stats() const { return {}; }

    // ---- read markers and activity: state that belongs to identities (token mode) ----

    // Every marker stored for user, in no order (what a later save_marker gave included).
    virtual std::vector<read_marker> read_markers(std::string_view user) = 0;
    // Moves user's marker in log `key` to seq, never back (a lower seq changes nothing). A
    // durable store writes markers in batches, never one write per call.
    virtual void save_marker(std::string_view user, std::string_view key, std::int64_t seq) = 0;
    // The last seq and its time of the log called key, without loading its messages; zeros when
    // there is no such log.
    virtual log_activity activity(std::string_view key) = 0;

    // ---- room settings (roles, bans, mutes, topic, slow mode) ----

    // Every setting stored for room, in no order (what a later save_room_setting gave included).
    // Read when a room is made; throws sqlite_error when the file cannot be read.
    virtual std::vector<room_setting> room_settings(std::string_view room) = 0;
    // Stores (or, with an empty value, removes) one setting. A durable store writes it on its
    // writer's next pass, never on the caller's thread.
    virtual void save_room_setting(std::string_view room, const room_setting& setting) = 0;

protected:
    // Reads an answer's stored part and calls done with the whole answer (join_answer). The
    // memory store never makes a stored part, so its answers never come here.
    virtual void read_stored(const log_handle& log, history_answer answer, history_done done);
};

}  // namespace parley::rooms
