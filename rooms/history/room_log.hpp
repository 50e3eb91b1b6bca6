#pragma once

#include "protocol/shared_frame.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

namespace parley::rooms {

class log_cache;
class log_handle;

// Part of a history answer that lives only in storage (older than what memory holds): the
// messages with after < seq < below, the newest `limit` of them when newest_first, else the
// oldest. Expired messages (older than the age limit) are not returned.
struct stored_read {
    std::int64_t after = 0;
    std::int64_t below = 0;
    std::size_t limit = 0;
    bool newest_first = false;
};

// The answer to a `history` request as far as memory can give it. When `stored` is set, the
// stored messages come first (they are older), then `messages`, and of the whole only the first
// `limit` are the answer (history_store::complete does that).
struct history_answer {
    std::vector<protocol::shared_frame> messages;  // oldest first
    std::optional<stored_read> stored;
    std::size_t limit = 0;
};

// The newest message of a log: its seq and time (zeros: no message yet).
struct log_activity {
    std::int64_t last_seq = 0;
    std::int64_t last_ts = 0;
};

// One message as a log holds it.
struct log_entry {
    std::int64_t seq = 0;
    std::int64_t ts = 0;  // unix ms
    protocol::shared_frame frame;
};

// One room's message log: seq numbering and, in memory, the newest messages (complete `message`
// frames), which serve `joined` replies and most `history` requests without touching storage.
//
// Seqs grow by one per message; they may jump (never go back) when a durable store restarts
// after a crash, so nothing here assumes they are contiguous.
// Thread: not synchronized; the owning room calls it under its own lock. The store's threads
// touch only the atomics. Its store's log_cache decides when it leaves memory (log_cache.hpp).
class room_log {
public:
    // memory_limit: messages kept in memory; max_age_ms: older messages are dropped (0: no limit).
    room_log(std::int64_t epoch, std::int64_t last_seq, std::size_t memory_limit, std::int64_t max_age_ms);
    virtual ~room_log() = default;
    room_log(const room_log&) = delete;
    room_log& operator=(const room_log&) = delete;

    // Identifies this log's history: a client's `after` from another epoch cannot be recovered.
    std::int64_t epoch() const { return epoch_; }
    std::int64_t last_seq() const { return last_seq_; }
    // last_seq() and the newest message's time, readable from any thread without the owner's
    // lock (for `welcome`'s conversations): a copy kept in atomics, stored on every append.
    log_activity activity() const {
        return {published_seq_.load(std::memory_order_acquire), published_ts_.load(std::memory_order_acquire)};
    }
    // Lowest seq still retained, in memory or in storage (last_seq() + 1 when there is none).
    std::int64_t first_retained_seq() const;

    // Records a message: seq > last_seq(), ts its time (unix ms), message its complete frame.
    void append(std::int64_t seq, std::int64_t ts, const protocol::shared_frame& message);

    // The message with this seq from memory, or nullopt when memory does not hold it (never
    // had it, it left memory, or it expired by age).
    std::optional<log_entry> entry(std::int64_t seq) const;

    // Replaces the frame of message `seq` in memory by `frame` (its seq and time stay), and
    // tells the store (revised()) so that storage holds the new frame instead of the old one:
    // an edited or deleted chat message. False, and nothing changed, when memory does not hold
    // seq (entry() is nullopt); a message only in storage cannot be revised here.
    bool revise(std::int64_t seq, const protocol::shared_frame& frame);

    // From memory, oldest first: the newest `limit` messages with seq < before.
    std::vector<protocol::shared_frame> before(std::int64_t before, std::size_t limit) const;
    // From memory, oldest first: the oldest `limit` messages with seq > after.
    std::vector<protocol::shared_frame> after(std::int64_t after, std::size_t limit) const;

    // True when every retained message with seq > after is in memory and there are at most
    // limit of them: what a reconnecting client's `joined` can report as recovered.
    bool recovers(std::int64_t after, std::size_t limit) const;

    // A history request (protocol v1): `after` wins over `before`; neither means the newest.
    history_answer query(std::optional<std::int64_t> before, std::optional<std::int64_t> after,
                         std::size_t limit) const;

    std::size_t memory_size() const { return entries_.size(); }
    // What this log holds in memory, in bytes: an estimate (see room_log.cpp), counted into its
    // cache's total as it changes.
    std::int64_t memory_bytes() const { return bytes_; }
    // The name its store knows it by (a room's name, a conversation's key), once cached.
    std::string_view key() const { return cache_key_; }
    // Whether some log_handle to it lives (a room, a read in flight); a hint from any thread.
    bool in_use() const { return uses_.load(std::memory_order_relaxed) > 0; }

    // Every message in memory, oldest first (expired ones included until the next append).
    std::vector<log_entry> newest_entries() const { return {entries_.begin(), entries_.end()}; }

    // Starts the log over as a copy of another's (a cluster's shared history): this epoch, this
    // last seq, and in memory these newest messages (oldest first, seqs at most last_seq).
    // Everything older counts as stored elsewhere (stored_first), for history_store::complete.
    void reset(std::int64_t epoch, std::int64_t last_seq, std::vector<log_entry> newest, std::int64_t stored_first);

protected:
    // The store learns of each message here (under the room's lock). The memory store does
    // nothing; a durable store queues it for writing.
    virtual void stored(std::int64_t seq, std::int64_t ts, const protocol::shared_frame& message) = 0;

    // The store learns of each revise() here, after memory holds the new frame (under the
    // room's lock, as stored()). The default does nothing: right for a store whose storage is
    // memory itself, or is written by someone else.
    virtual void revised(std::int64_t seq, std::int64_t ts, const protocol::shared_frame& frame);

    // A subclass's own state per log, counted in memory_bytes() (before the log is cached).
    void count_state_bytes(std::int64_t bytes) { bytes_ += bytes; }

    // Loads messages read back from storage, oldest first, before any append.
    void preload(std::int64_t seq, std::int64_t ts, protocol::shared_frame message);

    // Messages with seq <= durable_seq_ are safe in storage and may leave memory; newer ones stay
    // however many there are, so storage plus memory always hold everything retained.
    std::atomic<std::int64_t> durable_seq_{std::numeric_limits<std::int64_t>::max()};
    // Lowest seq in storage, or max() when storage holds nothing older than memory.
    std::atomic<std::int64_t> stored_first_{std::numeric_limits<std::int64_t>::max()};

private:
    using iterator = std::deque<log_entry>::const_iterator;

    // First entry not expired by age, and first entry with seq > after (or >= below).
    iterator live_begin() const;
    iterator first_after(std::int64_t after) const;
    // The entry with this seq among those not expired, or entries_.end().
    iterator find_live(std::int64_t seq) const;
    // Seq of the oldest message in memory that is not expired (last_seq_ + 1 when none).
    std::int64_t memory_first_seq() const;
    // Drops the oldest message; returns the bytes it was counted as.
    std::int64_t drop_oldest();
    // Adds change to this log's bytes and to its cache's total.
    void count_bytes(std::int64_t change);

    friend class log_cache;
    friend class log_handle;

    std::int64_t epoch_;  // changes only in reset()
    const std::size_t memory_limit_;
    const std::int64_t max_age_ms_;
    std::int64_t last_seq_;
    std::deque<log_entry> entries_;
    std::atomic<std::int64_t> published_seq_{0};
    std::atomic<std::int64_t> published_ts_{0};
    void publish(std::int64_t seq, std::int64_t ts) {
        published_ts_.store(ts, std::memory_order_relaxed);
        published_seq_.store(seq, std::memory_order_release);
    }
    std::int64_t bytes_;  // memory_bytes()

    // Kept by log_cache (under its lock, except that handles copy a held use without it).
    std::atomic<std::uint32_t> uses_{0};            // live log_handles
    std::atomic<std::int64_t>* held_ = nullptr;     // the cache's total of bytes_, once cached
    std::string_view cache_key_;                    // the cache's key for this log
    room_log* idle_older_ = nullptr;                // the idle list, while uses_ is 0
    room_log* idle_newer_ = nullptr;
    std::int64_t idle_counted_ = 0;                 // what it added to the cache's idle total
    bool idle_ = false;
};

// The whole answer: the messages read from storage (oldest first), then memory's, of which the
// first `answer.limit` are kept.
std::vector<protocol::shared_frame> join_answer(std::vector<protocol::shared_frame> stored, history_answer& answer);

}  // namespace parley::rooms
