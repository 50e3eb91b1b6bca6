#pragma once

#include "protocol/shared_frame.hpp"
#include "rooms/history/room_log.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::rooms {

// How the store's writing goes (all zero for the memory store).
struct history_stats {
    std::uint64_t written = 0;   // messages written to storage since start
    std::uint64_t failures = 0;  // failed batch writes (their messages were kept and retried)
    std::size_t backlog = 0;     // messages accepted and not yet written
    std::uint64_t marker_batches = 0;  // transactions that wrote read markers
};

// Where one user has read up to in one log (a room, or a direct conversation's key).
struct read_marker {
    std::string key;
    std::int64_t seq = 0;
};

// The end of a history read: the whole answer, oldest first, or nullopt when storage could not
// be read (the client is told `unavailable`, never given a page that only looks complete).
using history_done = std::function<void(std::optional<std::vector<protocol::shared_frame>>)>;

// Where room logs live. Logs outlive the rooms that use them: a room that empties and is made
// again continues its seq.
// Thread: every method may be called from any thread.
class history_store {
public:
    virtual ~history_store() = default;
    // The log of a room, made (or read back from storage) on first use. The pointer stays valid
    // for the store's lifetime.
    virtual room_log* open(std::string_view room) = 0;

    // Finishes an answer: one without a stored part calls done at once; one with it is read by
    // read_stored, off the calling thread, and done is called once on a thread of the store
    // (unless stop_reads() came first). done gets the whole answer, oldest first, or nullopt
    // when the stored part could not be read.
    void complete(room_log& log, history_answer answer, history_done done);

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

protected:
    // Reads an answer's stored part and calls done with the whole answer (join_answer). The
    // memory store never makes a stored part, so its answers never come here.
    virtual void read_stored(room_log& log, history_answer answer, history_done done);
};

}  // namespace parley::rooms
