#pragma once

// Private to parley_history: the SQLite store's log, shared by its .cpp files only.

#include "rooms/history/history_chunk.hpp"
#include "rooms/history/room_log.hpp"

#include <atomic>
#include <cstdint>
#include <limits>
#include <string>

namespace parley::rooms {

class sqlite_history_writer;

// A room's log whose messages the writer thread puts in the database.
// Thread: as room_log; the fields marked writer-only belong to the writer thread.
class sqlite_room_log final : public room_log {
public:
    sqlite_room_log(sqlite_history_writer& writer, std::string name, std::int64_t room_id, std::int64_t epoch,
                    std::int64_t last_seq, std::size_t memory_limit, std::int64_t max_age_ms)
        : room_log(epoch, last_seq, memory_limit, max_age_ms), reserved_(last_seq), writer_(writer),
          name_(std::move(name)), room_id_(room_id) {
        durable_seq_.store(last_seq, std::memory_order_relaxed);
        stored_first_.store(no_seq, std::memory_order_relaxed);
        // The fields below, and the writer's entries for the log (its set of logs, its map by
        // row id), with the allocator's overhead.
        count_state_bytes(static_cast<std::int64_t>(sizeof(sqlite_room_log) - sizeof(room_log) + name_.size()) + 128);
    }

    static constexpr std::int64_t no_seq = std::numeric_limits<std::int64_t>::max();

    const std::string& name() const { return name_; }
    // The room's row id, or -1 until the writer has made its row.
    std::int64_t room_id() const { return room_id_.load(std::memory_order_acquire); }
    void set_room_id(std::int64_t id) { room_id_.store(id, std::memory_order_release); }

    // Read back from the file at open (oldest first), before any append.
    void load(std::int64_t seq, std::int64_t ts, protocol::shared_frame frame) {
        preload(seq, ts, std::move(frame));
    }
    void set_stored_first(std::int64_t seq) { stored_first_.store(seq, std::memory_order_release); }
    std::int64_t stored_first() const { return stored_first_.load(std::memory_order_acquire); }
    // Everything up to seq is in the file: memory may let it go.
    void set_durable(std::int64_t seq) { durable_seq_.store(seq, std::memory_order_release); }
    // Every message of the log is in the file as memory has it, no revision waiting for the
    // writer (the log may leave memory when idle). A log read back before its revision reached
    // the file would bring the old frame back, and the writer's revisions point at their log.
    bool all_written() const {
        return durable_seq_.load(std::memory_order_acquire) >= last_seq() &&
               revisions_waiting_.load(std::memory_order_acquire) == 0;
    }
    // Revisions the writer holds for this log: counted up by revised() (the room's thread),
    // down by the writer once it has applied or dropped them.
    void count_revisions(std::int64_t change) { revisions_waiting_.fetch_add(change, std::memory_order_acq_rel); }

    // Writer-only.
    std::int64_t reserved_;          // seqs up to this are reserved in the file (see the writer)
    std::int64_t written_last_ = 0;  // highest seq written by this run; 0: none yet
    std::int64_t stored_count_ = -1; // retained messages in the file; -1: not counted yet
    std::int64_t batch_first_ = 0;   // of the batch being written
    std::int64_t batch_last_ = 0;    //   (0: not in this batch)
    std::int64_t batch_count_ = 0;
    history_chunk chunk_;            // this room's messages of the batch, not yet inserted

private:
    void stored(std::int64_t seq, std::int64_t ts, const protocol::shared_frame& message) override;
    void revised(std::int64_t seq, std::int64_t ts, const protocol::shared_frame& frame) override;

    sqlite_history_writer& writer_;
    const std::string name_;
    std::atomic<std::int64_t> room_id_;
    std::atomic<std::int64_t> revisions_waiting_{0};
};

}  // namespace parley::rooms
