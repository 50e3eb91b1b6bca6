#pragma once

// Private to parley_history (it includes sqlite_database.hpp, and so sqlite3.h).

#include "rooms/history/room_setting_book.hpp"
#include "rooms/history/sqlite_database.hpp"

#include <mutex>

namespace parley::rooms {

// Room settings on their way to the `room_settings` table. A moderation action only records
// the change here; the history writer's thread writes everything recorded in one transaction
// per pass, as it does read markers, so no worker waits for the disk.
// Thread: record() and overlay() from any thread; flush() on the writer's thread only.
class sqlite_setting_table {
public:
    // Statements on the writer's connection (the table exists: see the store's schema).
    explicit sqlite_setting_table(sqlite_connection& writer_db);

    void record(std::string_view room, const room_setting& setting) { book_.put(room, setting); }
    // Applies what is recorded and not yet written to what the file gave.
    void overlay(std::string_view room, std::vector<room_setting>& stored) const { book_.overlay(room, stored); }
    bool idle() const { return book_.empty(); }
    // Held by a reader across its read of the file and its overlay, as
    // sqlite_marker_table::hold_settled: what commits meanwhile stays in the overlay until the
    // reader is done.
    std::unique_lock<std::mutex> hold_settled() const { return std::unique_lock(settle_mutex_); }

    // Writes what was recorded; on failure keeps it for the next pass and rethrows. Runs its
    // own transaction: call between two of the writer's.
    void flush();

private:
    sqlite_connection& db_;
    sqlite_statement upsert_;
    sqlite_statement remove_;
    room_setting_book book_;
    mutable std::mutex settle_mutex_;
};

}  // namespace parley::rooms
