#pragma once

// Private to parley_history: it brings sqlite3.h, so only the library's own .cpp files and
// private headers, and its tests, include it (tests/unit/history/private_headers.cmake checks).

#include "rooms/history/sqlite_history_store.hpp"

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace parley::rooms {

// One prepared statement. Bind, step, read columns, reset: the statement is reused for every
// row, so the SQL is parsed once per connection.
// Thread: that of its connection.
class sqlite_statement {
public:
    sqlite_statement(sqlite3* db, std::string_view sql, const std::string& path);
    ~sqlite_statement();
    sqlite_statement(const sqlite_statement&) = delete;
    sqlite_statement& operator=(const sqlite_statement&) = delete;

    sqlite_statement& bind(int index, std::int64_t value);
    sqlite_statement& bind(int index, std::string_view text);
    sqlite_statement& bind_blob(int index, std::string_view bytes);
    // True while a row is ready; false when done. Throws sqlite_error on failure.
    bool step();
    // Runs a statement that returns no rows, then resets it.
    void run();
    void reset();

    std::int64_t integer(int column) const { return sqlite3_column_int64(statement_, column); }
    std::string_view text(int column) const;
    std::string_view blob(int column) const;
    bool is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

private:
    [[noreturn]] void fail(int code, std::string_view doing) const;

    sqlite3* db_;
    sqlite3_stmt* statement_ = nullptr;
    const std::string& path_;
};

// An open database file. Opening checks that the file is a database SQLite can read (a
// corrupt or foreign file fails here, not at the first write).
// Thread: one thread at a time (each thread of the store opens its own connection).
class sqlite_connection {
public:
    // How long a statement waits for a lock another connection holds before failing.
    static constexpr int busy_timeout_ms = 5000;

    // read_only: the file must exist. Otherwise it is created when missing.
    sqlite_connection(std::string path, bool read_only);
    ~sqlite_connection();
    sqlite_connection(const sqlite_connection&) = delete;
    sqlite_connection& operator=(const sqlite_connection&) = delete;

    // Runs one or more statements that return no rows.
    void exec(std::string_view sql);
    sqlite_statement prepare(std::string_view sql) { return sqlite_statement(db_, sql, path_); }
    // Runs body() in one write transaction: committed when it returns, rolled back when it
    // throws sqlite_error (which then propagates).
    template <typename Body>
    void transaction(Body&& body) {
        exec("BEGIN IMMEDIATE");
        try {
            body();
            exec("COMMIT");
        } catch (const sqlite_error&) {
            try {
                exec("ROLLBACK");
            } catch (const sqlite_error&) {
                // Nothing left to roll back (SQLite already did).
            }
            throw;
        }
    }
    // Caps this connection's page cache at about kib KiB; returns *this (for initializer lists).
    sqlite_connection& limit_cache(int kib) {
        exec("PRAGMA cache_size = -" + std::to_string(kib));
        return *this;
    }
    const std::string& path() const { return path_; }
    sqlite3* handle() { return db_; }

private:
    std::string path_;
    sqlite3* db_ = nullptr;
};

}  // namespace parley::rooms
