#pragma once

// Private to parley_history (it includes sqlite_database.hpp, and so sqlite3.h): only the
// library's own .cpp files and its tests include it.

#include "protocol/shared_frame.hpp"
#include "rooms/history/sqlite_chunk_rewrite.hpp"
#include "rooms/history/sqlite_database.hpp"
#include "rooms/history/sqlite_history_store.hpp"
#include "rooms/history/sqlite_marker_table.hpp"
#include "rooms/history/sqlite_setting_table.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace parley::rooms {

class sqlite_room_log;

// The one thread that writes history to the database. Workers queue each message (a mutex and a
// push: no I/O, no waiting on the disk); the thread writes the queue in one transaction every
// flush interval, or sooner when batch_size messages wait, as one chunk row per room (see
// history_chunk), then enforces retention.
//
// Seq reservation: each room's row holds reserved_seq, kept at least `reserve_ahead / 2` above
// the room's highest written seq in the same transaction as its messages. After a crash a room
// continues above reserved_seq, so a seq that was sent to clients but never written is never
// given to another message. A clean stop lowers reserved_seq to the last seq, so a restart
// continues without a gap.
// Revisions (an edited or deleted message, room_log::revise) replace a message that is still in
// the queue there, so its old frame is never written; one already handed to the writer is
// rewritten in its chunk by the next pass, all of that pass's revisions in one transaction of
// their own, after its messages. The file must not keep the old bytes anywhere: the connection
// runs with secure_delete (SQLite zeroes what it frees), and a pass that rewrote chunks ends
// with a checkpoint that empties the write-ahead log, where the old page images still are.
// Logs leave memory through forget(), on this thread between two batches (the store's trim,
// called as `between_batches`), so the writer never holds a log that is gone.
// Thread: enqueue(), revise() and adopt() from any thread; the rest is the writer's own.
class sqlite_history_writer {
public:
    static constexpr std::int64_t reserve_ahead = 100000;

    // between_batches runs on the writer's thread after each pass that wrote (or had nothing
    // to write), except while stopping.
    explicit sqlite_history_writer(const sqlite_history_options& options,
                                   std::function<void()> between_batches = {});
    // Writes everything queued, records the exact last seqs, then stops the thread.
    ~sqlite_history_writer();

    // A log made by the store: retention and the final seqs cover it.
    void adopt(sqlite_room_log* log);
    // Writer thread only (from between_batches). These logs, all written and used by nobody,
    // leave memory: their rooms' reservations come down to the exact last seq, as at a clean
    // stop, so a log read back continues without a gap; then the writer forgets them. Throws
    // sqlite_error (nothing forgotten) when that cannot be written.
    void forget(const std::vector<sqlite_room_log*>& logs);
    void enqueue(sqlite_room_log* log, std::int64_t seq, std::int64_t ts, const protocol::shared_frame& message);
    // A new frame for message seq of log, which enqueue() was given before (any thread, like
    // enqueue: the room's, under its lock). Queued, the message is replaced there; otherwise
    // the next pass rewrites it in the file (and log->count_revisions keeps the log in memory
    // until then).
    void revise(sqlite_room_log* log, std::int64_t seq, const protocol::shared_frame& message);

    // Any thread but the writer's: asks for a pass now (not at the next flush interval) and
    // waits until a pass that starts after this call has ended, between_batches included, or
    // `timeout` went by, or the writer stops. Returns at once, without waiting, while writes are
    // failing: nothing would become evictable, and chat must not slow down for a broken disk.
    void wait_for_pass(std::chrono::milliseconds timeout);

    // Messages queued and not yet written (for metrics and tests).
    std::size_t backlog() const;
    std::uint64_t written() const { return written_.load(std::memory_order_relaxed); }
    std::uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }

    // Read markers, written by this thread after each batch of messages.
    sqlite_marker_table& markers() { return markers_; }
    const sqlite_marker_table& markers() const { return markers_; }
    // Room settings (roles, bans, ...), written by this thread with the markers.
    sqlite_setting_table& settings() { return settings_; }
    const sqlite_setting_table& settings() const { return settings_; }

private:
    struct pending {
        sqlite_room_log* log;
        std::int64_t seq;
        std::int64_t ts;
        protocol::shared_frame message;
    };

    struct revision {
        sqlite_room_log* log;  // stays in memory while counted (sqlite_room_log::all_written)
        std::int64_t seq;
        protocol::shared_frame message;
    };

    void run();
    // ---- revisions (sqlite_history_writer_revise.cpp) ----
    // Applies to the batch (not written yet) the revisions of its messages, and removes them.
    void revise_batch(std::vector<pending>& batch, std::vector<revision>& revisions);
    // Rewrites the chunks of the rest in one transaction, then checkpoints. True when done (the
    // revisions are then cleared); false when the transaction failed (reported, kept).
    bool revise_stored(std::vector<revision>& revisions);
    // Empties the write-ahead log (TRUNCATE); when a reader keeps it busy or it fails, owed
    // for a later pass (see run()).
    void checkpoint_revised();
    // One transaction for the batch; false (batch untouched, nothing published) when it failed.
    bool write(const std::vector<pending>& batch);
    void write_rows(const std::vector<pending>& batch, std::vector<sqlite_room_log*>& touched,
                    std::vector<sqlite_room_log*>& new_rooms);
    void write_chunk(sqlite_room_log& log);
    // Lowest seq of the room's oldest chunk, or none.
    std::int64_t first_stored_seq(std::int64_t room);
    void reserve_seqs(const std::vector<sqlite_room_log*>& touched,
                      std::vector<std::pair<sqlite_room_log*, std::int64_t>>& previous);
    sqlite_room_log* log_of_room(std::int64_t room_id);
    void keep_newest(sqlite_room_log& log);
    // Deletes expired messages, a bounded number per room per pass; true when more remain.
    bool expire_old();
    void record_last_seqs();
    // Writes the markers recorded since the last pass; false (reported, kept for the next pass)
    // when that failed.
    bool flush_markers();
    void report(std::string_view what) const;

    sqlite_history_options options_;
    sqlite_connection db_;
    sqlite_statement insert_chunk_;
    sqlite_statement insert_room_;
    sqlite_statement room_id_;
    sqlite_statement room_ids_;
    sqlite_statement reserve_;
    sqlite_statement retain_from_;
    sqlite_statement count_;
    sqlite_statement oldest_chunks_;
    sqlite_statement delete_through_;
    sqlite_statement first_seq_;

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable passed_;  // a pass ended (wait_for_pass)
    std::vector<pending> queue_;
    std::vector<revision> revisions_;   // of messages not in queue_, in the order they came
    bool urgent_ = false;               // a pass is asked for now
    bool failing_ = false;              // the last pass could not write
    std::uint64_t passes_started_ = 0;  // the pass that took queue_ last
    std::uint64_t passes_ended_ = 0;
    std::unordered_set<sqlite_room_log*> logs_;  // every adopted log not forgotten
    bool stopping_ = false;

    std::unordered_map<std::int64_t, sqlite_room_log*> by_room_;  // writer-only
    std::chrono::steady_clock::time_point next_expiry_{};
    std::atomic<std::uint64_t> written_{0};
    std::atomic<std::uint64_t> failures_{0};
    sqlite_chunk_rewriter rewriter_;  // on db_
    bool checkpoint_owed_ = false;    // writer-only: a revising pass could not empty the log
    sqlite_marker_table markers_;  // on db_
    sqlite_setting_table settings_;  // on db_
    const std::function<void()> between_batches_;
    std::thread thread_;  // last: starts after everything above exists
};

}  // namespace parley::rooms
