#pragma once

// Private to parley_history (it includes sqlite_database.hpp, and so sqlite3.h).

#include "rooms/history/history_store.hpp"
#include "rooms/history/sqlite_database.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::rooms {

// Read markers on their way to the `markers` table. A `read` request only records the new seq
// here (a mutex and a map entry); the history writer's thread writes everything recorded in one
// transaction per pass, so a client moving its marker on every message costs one row per pass,
// not one disk write per request. A marker written twice between passes is written once.
// Thread: record() and pending_for() from any thread; flush() on the writer's thread only.
class sqlite_marker_table {
public:
    // Statements on the writer's connection (the table exists: see the store's schema).
    explicit sqlite_marker_table(sqlite_connection& writer_db);

    // Moves user's marker in key to seq, never back.
    void record(std::string_view user, std::string_view key, std::int64_t seq);
    // Markers recorded and not yet written, for reads that must see them.
    std::vector<read_marker> pending_for(std::string_view user) const;
    // Held by a reader across its read of the file and its pending_for: a batch that commits
    // meanwhile leaves the pending view only after the reader is done, so the reader finds
    // every marker in one or the other (without it, a commit between the two reads hid it).
    std::unique_lock<std::mutex> hold_settled() const { return std::unique_lock(settle_mutex_); }
    bool idle() const;
    // Transactions that wrote markers so far.
    std::uint64_t batches() const { return batches_.load(std::memory_order_relaxed); }

    // Writes what was recorded; on failure keeps it for the next pass and rethrows. Runs its
    // own transaction: call between two of the writer's.
    void flush();

private:
    using marker_key = std::pair<std::string, std::string>;  // user, log key
    using marker_map = std::map<marker_key, std::int64_t, std::less<>>;
    static void merge(marker_map& into, const marker_key& key, std::int64_t seq);

    sqlite_connection& db_;
    sqlite_statement upsert_;
    mutable std::mutex settle_mutex_;  // see hold_settled(); taken before mutex_
    mutable std::mutex mutex_;
    marker_map recorded_;  // under mutex_
    marker_map writing_;   // the writer's: taken from recorded_ for one flush
    std::atomic<std::uint64_t> batches_{0};
};

}  // namespace parley::rooms
