#pragma once

#include "rooms/history/history_store.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace parley::rooms {

// A failed SQLite call or an unusable history file; what() names the file and the reason.
// Declared here, not beside the SQLite wrapper, so that callers of the store can catch it
// without seeing sqlite3.h.
class sqlite_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct sqlite_history_options {
    std::string path;                    // the database file; made when missing
    std::size_t memory_per_room = 1000;  // newest messages per room also kept in memory
    std::chrono::milliseconds flush_interval{50};  // longest a message waits to be written
    std::size_t batch_size = 10000;      // this many waiting messages are written at once
    std::size_t retain_messages = 0;     // per room in the file; 0: no limit
    std::int64_t max_age_ms = 0;         // older messages are deleted; 0: no limit
    // Idle logs stay in memory while all logs hold at most this (see log_cache); the least
    // recently used beyond it leave once their messages are written, and are read back on use.
    // Logs are not made while unwritten idle ones are past it by a sixteenth (open() waits for
    // a pass of the writer instead), so what the logs hold stays bounded.
    std::size_t memory_budget_bytes = static_cast<std::size_t>(-1);
    // Told of write failures (the messages are kept and written again) and other trouble.
    std::function<void(std::string_view)> report;
};

// History in an SQLite file (WAL), written in batches by one thread of its own, read back by
// another: a worker only appends to a queue. Seq and the epoch survive restarts.
// Throws sqlite_error naming the file and the reason when it cannot be opened or written, or
// is not a parley history database.
std::unique_ptr<history_store> open_sqlite_history_store(const sqlite_history_options& options);

}  // namespace parley::rooms
