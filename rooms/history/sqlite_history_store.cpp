#include "rooms/history/sqlite_history_store.hpp"

#include "rooms/history/history_chunk_reader.hpp"
#include "rooms/history/sqlite_database.hpp"
#include "rooms/history/sqlite_history_writer.hpp"
#include "rooms/history/sqlite_room_log.hpp"
#include "rooms/history/unix_clock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace parley::rooms {
namespace {

using protocol::shared_frame;

// "PRLY": marks the file as parley's, so a daemon pointed at another program's database
// refuses it instead of adding tables to it.
constexpr std::int64_t application_id = 0x50524c59;
// 2 added the markers table (read markers of token-mode users), 3 the room_settings table
// (roles, bans, mutes, topic and slow mode of rooms).
constexpr std::int64_t schema_version = 3;

constexpr const char* schema = R"sql(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS rooms (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    reserved_seq INTEGER NOT NULL,
    first_seq INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    room_id INTEGER NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    last_ts INTEGER NOT NULL,
    count INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_room ON chunks (room_id, last_seq);
CREATE TABLE IF NOT EXISTS markers (
    user TEXT NOT NULL,
    key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (user, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS room_settings (
    room TEXT NOT NULL,
    kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (room, kind, subject)
) WITHOUT ROWID;
)sql";

[[noreturn]] void refuse(const std::string& path, std::string_view reason) {
    std::string text = path;
    text += ": ";
    text += reason;
    throw sqlite_error(text);
}

// SQLite's own words for a missing directory or a read-only file are vague ("unable to open
// database file"); these checks name the cause first.
void check_location(const std::string& path) {
    if (path.empty()) {
        throw sqlite_error("history.path is empty");
    }
    std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
    if (dir.empty()) {
        dir = "/";
    }
    struct stat info {};
    if (::stat(dir.c_str(), &info) != 0) {
        refuse(path, "the directory " + dir + " cannot be used: " + std::strerror(errno));
    }
    if (!S_ISDIR(info.st_mode)) {
        refuse(path, dir + " is not a directory");
    }
    // The write-ahead log and its index are files next to the database: the directory must be
    // writable even when the database file is.
    if (::access(dir.c_str(), W_OK | X_OK) != 0) {
        refuse(path, "the directory " + dir + " is not writable: " + std::strerror(errno));
    }
    if (::stat(path.c_str(), &info) == 0) {
        if (!S_ISREG(info.st_mode)) {
            refuse(path, "not a regular file");
        }
        if (::access(path.c_str(), R_OK | W_OK) != 0) {
            refuse(path, std::string("cannot be read and written: ") + std::strerror(errno));
        }
    }
}

// SQLite's page-cache slots (see open_sqlite_history_store): enough for the loader's, the
// reader's and the writer's caches (256 + 1024 + 1024 KiB) and a few pages more. Untouched
// slots take no memory; used ones count against the log budget (outside_bytes).
int page_slot_bytes = 0;
constexpr int page_slots = 40;

std::int64_t pragma_integer(sqlite_connection& db, std::string_view pragma) {
    std::string sql = "PRAGMA ";
    sql += pragma;
    auto statement = db.prepare(sql);
    return statement.step() ? statement.integer(0) : 0;
}

// Makes or checks the schema; returns the database's epoch (made with the file, so clients'
// seqs stay valid across restarts).
std::int64_t prepare_schema(sqlite_connection& db) {
    // Only takes effect on a new file (before its first write, which the WAL switch below is).
    // Large pages: the writer appends chunks of a few kilobytes per room, and every page is a
    // frame written to the log and later copied into the file; 64 KiB pages cut those system
    // calls, which were most of the writer's time, several-fold (performance.md).
    db.exec("PRAGMA page_size = 65536");
    {
        auto mode = db.prepare("PRAGMA journal_mode = WAL");
        std::string got = mode.step() ? std::string(mode.text(0)) : std::string();
        if (got != "wal") {
            refuse(db.path(), "cannot switch to write-ahead logging (journal mode is '" + got + "')");
        }
    }
    std::int64_t app = pragma_integer(db, "application_id");
    std::int64_t version = pragma_integer(db, "user_version");
    std::int64_t tables = 0;
    {
        auto count = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'");
        tables = count.step() ? count.integer(0) : 0;
    }
    if (tables > 0 && app != application_id) {
        refuse(db.path(), "not a parley history database (it holds other tables)");
    }
    if (version > schema_version) {
        refuse(db.path(), "made by a newer parley (schema " + std::to_string(version) + ", this one knows " +
                              std::to_string(schema_version) + ")");
    }
    db.exec("BEGIN IMMEDIATE");
    db.exec(schema);
    db.exec("PRAGMA application_id = " + std::to_string(application_id));
    db.exec("PRAGMA user_version = " + std::to_string(schema_version));
    db.prepare("INSERT OR IGNORE INTO meta(key, value) VALUES('epoch', ?1)").bind(1, unix_millis()).run();
    db.exec("COMMIT");
    auto epoch = db.prepare("SELECT value FROM meta WHERE key = 'epoch'");
    if (!epoch.step()) {
        refuse(db.path(), "the epoch row is missing");
    }
    // Reads every page once: a damaged file is refused now rather than failing writes later.
    auto check = db.prepare("PRAGMA quick_check");
    std::string verdict = check.step() ? std::string(check.text(0)) : std::string();
    if (verdict != "ok") {
        refuse(db.path(), "the database is damaged: " + verdict);
    }
    return epoch.integer(0);
}

// Two daemons writing one file would give the same seqs to different messages. The store holds
// an exclusive lock on PATH.lock for its lifetime (the kernel drops it when the process dies,
// however it dies), and a second daemon on the same file is refused at start.
class owner_lock {
public:
    explicit owner_lock(const std::string& path) : lock_path_(path + ".lock") {
        fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
        if (fd_ < 0) {
            refuse(path, "cannot make the lock file " + lock_path_ + ": " + std::strerror(errno));
        }
        if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
            int error = errno;
            ::close(fd_);
            fd_ = -1;
            if (error == EWOULDBLOCK) {
                refuse(path, "in use by another parleyd (it holds the lock on " + lock_path_ + ")");
            }
            refuse(path, "cannot lock " + lock_path_ + ": " + std::strerror(error));
        }
    }
    ~owner_lock() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    owner_lock(const owner_lock&) = delete;
    owner_lock& operator=(const owner_lock&) = delete;

private:
    std::string lock_path_;
    int fd_ = -1;
};

class sqlite_history_store final : public history_store, private log_cache::policy {
public:
    explicit sqlite_history_store(const sqlite_history_options& options)
        : options_(options),
          lock_(options.path),
          setup_(options.path, false),
          epoch_(prepare_schema(setup_)),
          find_room_(setup_.prepare("SELECT id, reserved_seq, first_seq FROM rooms WHERE name = ?1")),
          last_seq_(setup_.prepare("SELECT max(last_seq) FROM chunks WHERE room_id = ?1")),
          first_seq_(setup_.prepare("SELECT first_seq FROM chunks WHERE room_id = ?1 ORDER BY last_seq LIMIT 1")),
          markers_of_(setup_.prepare("SELECT key, seq FROM markers WHERE user = ?1")),
          settings_of_(setup_.prepare("SELECT kind, subject, value FROM room_settings WHERE room = ?1")),
          newest_chunk_(setup_.prepare("SELECT c.last_seq, c.last_ts FROM rooms r JOIN chunks c ON c.room_id = r.id "
                                       "WHERE r.name = ?1 ORDER BY c.last_seq DESC LIMIT 1")),
          loader_(setup_.limit_cache(256)),
          logs_(*this, options.memory_budget_bytes, false),
          writer_(options, [this] { trim_idle(); }),
          reader_db_(options.path, true),
          chunks_(reader_db_.limit_cache(1024)),
          reader_([this] { read_loop(); }) {}

    ~sqlite_history_store() override {
        stop_reads();
        // writer_ is destroyed before logs_ (declared after it): its last batch still uses them.
    }

    log_handle open(std::string_view room) override {
        if (behind_budget() && !logs_.contains(room)) {
            // Backpressure on making logs. An idle log leaves memory only once the file holds
            // all of it, and the writer writes new rooms at a finite rate (a row and a chunk
            // each): clients inventing rooms faster would pile up unwritten idle logs without
            // bound. Handing their messages to the writer in a smaller form only shrinks the
            // pile, and refusing the join would fail a valid request. So a log is not made while the idle logs
            // exceed the slack and all logs the budget plus the slack: the opener asks the
            // writer for a pass at once and waits for it (a pass writes everything queued, and
            // its trim evicts what that made evictable). Only the making of new logs waits,
            // bounded by one pass and by `wait_limit`; logs in memory open without waiting, and
            // while writes fail nothing waits (the messages stay in memory, as before).
            writer_.wait_for_pass(wait_limit);
        }
        return logs_.open(room);
    }

protected:
    void read_stored(const log_handle& log, history_answer answer, history_done done) override {
        {
            std::lock_guard lock(read_mutex_);
            if (reads_stopped_) {
                return;
            }
            reads_.push_back({log, std::move(answer), std::move(done)});
        }
        read_wake_.notify_one();
    }

public:
    void stop_reads() override {
        {
            std::lock_guard lock(read_mutex_);
            reads_stopped_ = true;
            reads_.clear();
        }
        read_wake_.notify_one();
        if (reader_.joinable()) {
            reader_.join();
        }
    }

    history_stats stats() const override {
        const std::int64_t logs = logs_.held_bytes();
        return {writer_.written(), writer_.failures(), writer_.backlog(), writer_.markers().batches(),
                logs + outside_bytes(), logs_.evictions(), logs_.evicted_bytes(), logs};
    }

    std::vector<read_marker> read_markers(std::string_view user) override {
        std::vector<read_marker> out;
        std::unique_lock settled = writer_.markers().hold_settled();
        {
            std::lock_guard lock(setup_mutex_);
            markers_of_.bind(1, user);
            while (markers_of_.step()) {
                out.push_back({std::string(markers_of_.text(0)), markers_of_.integer(1)});
            }
            markers_of_.reset();
        }
        // Those not written yet win where they are ahead (a marker only moves forward).
        for (read_marker& pending : writer_.markers().pending_for(user)) {
            auto it = std::find_if(out.begin(), out.end(), [&](const read_marker& m) { return m.key == pending.key; });
            if (it == out.end()) {
                out.push_back(std::move(pending));
            } else {
                it->seq = std::max(it->seq, pending.seq);
            }
        }
        return out;
    }

    void save_marker(std::string_view user, std::string_view key, std::int64_t seq) override {
        writer_.markers().record(user, key, seq);
    }

    std::vector<room_setting> room_settings(std::string_view room) override {
        std::vector<room_setting> out;
        std::unique_lock settled = writer_.settings().hold_settled();
        {
            std::lock_guard lock(setup_mutex_);
            settings_of_.bind(1, room);
            while (settings_of_.step()) {
                out.push_back({std::string(settings_of_.text(0)), std::string(settings_of_.text(1)),
                               std::string(settings_of_.text(2))});
            }
            settings_of_.reset();
        }
        writer_.settings().overlay(room, out);
        return out;
    }

    void save_room_setting(std::string_view room, const room_setting& setting) override {
        writer_.settings().record(room, setting);
    }

    log_activity activity(std::string_view key) override {
        if (std::optional<log_activity> in_memory = logs_.activity(key)) {
            return *in_memory;
        }
        // Not in memory (never opened since the start, or evicted, which only a log the file
        // holds wholly may be): the file has everything it holds.
        std::lock_guard lock(setup_mutex_);
        log_activity found;
        newest_chunk_.bind(1, key);
        if (newest_chunk_.step()) {
            found = {newest_chunk_.integer(0), newest_chunk_.integer(1)};
        }
        newest_chunk_.reset();
        return found;
    }

private:
    struct read_job {
        log_handle log;  // held until the answer is given: the log stays in memory
        history_answer answer;
        history_done done;
    };

    // ---- log_cache::policy, under the cache's lock ----
    // SQLite's memory (its heap: statements, schema; and the page-cache slots in use) is
    // memory the store holds for its logs: it counts against the same budget, so logs plus
    // SQLite stay within it.
    std::int64_t outside_bytes() const override {
        sqlite3_int64 used = 0;
        sqlite3_int64 high = 0;
        sqlite3_status64(SQLITE_STATUS_PAGECACHE_USED, &used, &high, 0);
        return sqlite3_memory_used() + used * page_slot_bytes;
    }

    std::unique_ptr<room_log> make(std::string_view room) override {
        std::unique_ptr<sqlite_room_log> log;
        {
            std::lock_guard lock(setup_mutex_);
            log = load(room);
        }
        writer_.adopt(log.get());
        return log;
    }
    // An idle log goes only when the file has all of it: memory never loses a message.
    bool ready(const room_log& log) override { return static_cast<const sqlite_room_log&>(log).all_written(); }
    // Only ever called from trim_idle(), on the writer's thread between batches.
    void evicting(const std::vector<room_log*>& logs) override {
        std::vector<sqlite_room_log*> leaving;
        leaving.reserve(logs.size());
        for (room_log* log : logs) {
            leaving.push_back(static_cast<sqlite_room_log*>(log));
        }
        writer_.forget(leaving);
    }

    // The writer's thread, between batches: idle logs whose messages it wrote may go now, as
    // many as it takes to come within the budget (trim() evicts a bounded number at a time).
    void trim_idle() {
        try {
            while (logs_.trim() > 0) {
            }
        } catch (const sqlite_error& e) {
            if (options_.report) {
                options_.report(std::string("evicting idle room logs failed (kept, retrying): ") + e.what());
            }
        }
    }

    // What the logs in memory may hold beyond the budget while new logs are made: a sixteenth
    // of the budget, at least 256 KiB. Held bytes stay within max(budget, logs in use) plus
    // this (plus at most one log per thread opening at the same moment).
    std::int64_t slack() const { return std::max<std::int64_t>(logs_.budget_bytes() / 16, 256 * 1024); }
    // Whether making a log now would leave idle logs that are not yet written beyond the bound.
    bool behind_budget() const {
        return logs_.idle_bytes() > slack() && logs_.held_bytes() + outside_bytes() - slack() > logs_.budget_bytes();
    }
    static constexpr std::chrono::milliseconds wait_limit{2000};

    std::int64_t cutoff() const { return options_.max_age_ms > 0 ? unix_millis() - options_.max_age_ms : 0; }

    // A room's log as the file has it: its seq continues after the highest seq it ever gave
    // (stored or reserved), and memory starts with its newest messages.
    std::unique_ptr<sqlite_room_log> load(std::string_view room) {
        std::size_t memory = options_.memory_per_room;
        if (options_.retain_messages > 0) {
            memory = std::min(memory, options_.retain_messages);
        }
        std::string name(room);
        find_room_.bind(1, name);
        if (!find_room_.step()) {
            find_room_.reset();
            return std::make_unique<sqlite_room_log>(writer_, name, -1, epoch_, 0, memory, options_.max_age_ms);
        }
        std::int64_t id = find_room_.integer(0);
        std::int64_t reserved = find_room_.integer(1);
        std::int64_t retained_from = find_room_.integer(2);  // retention by count may cut a chunk
        find_room_.reset();

        last_seq_.bind(1, id);
        std::int64_t last = last_seq_.step() && !last_seq_.is_null(0) ? last_seq_.integer(0) : 0;
        last_seq_.reset();
        first_seq_.bind(1, id);
        std::int64_t first = first_seq_.step() ? std::max(first_seq_.integer(0), retained_from)
                                               : sqlite_room_log::no_seq;
        first_seq_.reset();

        auto log = std::make_unique<sqlite_room_log>(writer_, name, id, epoch_, std::max(reserved, last), memory,
                                                     options_.max_age_ms);
        log->set_stored_first(first);
        chunk_query newest{id, 0, std::numeric_limits<std::int64_t>::max(), memory, first, cutoff()};
        for (stored_message& m : loader_.newest(newest)) {
            log->load(m.seq, m.ts, std::move(m.frame));
        }
        return log;
    }

    void read_loop() {
        for (;;) {
            read_job job;
            {
                std::unique_lock lock(read_mutex_);
                read_wake_.wait(lock, [&] { return reads_stopped_ || !reads_.empty(); });
                if (reads_stopped_) {
                    return;
                }
                job = std::move(reads_.front());
                reads_.pop_front();
            }
            std::vector<shared_frame> stored;
            try {
                stored = read(static_cast<sqlite_room_log&>(*job.log), *job.answer.stored);
            } catch (const sqlite_error& e) {
                // Memory alone would be a page with a hole that looks whole: the client is told
                // the history is unavailable and may ask again.
                if (options_.report) {
                    options_.report(std::string("reading history failed: ") + e.what());
                }
                job.done(std::nullopt);
                continue;
            }
            job.done(join_answer(std::move(stored), job.answer));
        }
    }

    std::vector<shared_frame> read(sqlite_room_log& log, const stored_read& what) {
        std::vector<shared_frame> out;
        std::int64_t room = log.room_id();
        std::int64_t first = log.stored_first();
        if (room < 0 || what.limit == 0 || first == sqlite_room_log::no_seq) {
            return out;
        }
        chunk_query q{room, what.after, what.below, what.limit, first, cutoff()};
        auto found = what.newest_first ? chunks_.newest(q) : chunks_.oldest(q);
        out.reserve(found.size());
        for (stored_message& m : found) {
            out.push_back(std::move(m.frame));
        }
        return out;
    }

    sqlite_history_options options_;
    owner_lock lock_;          // before the connections: nothing touches the file without it
    // The setup connection and its statements: logs read back (make(), under the cache's lock,
    // which is taken first), markers and activity read from the file.
    std::mutex setup_mutex_;
    sqlite_connection setup_;
    std::int64_t epoch_;
    sqlite_statement find_room_;
    sqlite_statement last_seq_;
    sqlite_statement first_seq_;
    sqlite_statement markers_of_;
    sqlite_statement settings_of_;
    sqlite_statement newest_chunk_;
    history_chunk_reader loader_;  // on setup_
    log_cache logs_;
    sqlite_history_writer writer_;

    sqlite_connection reader_db_;
    history_chunk_reader chunks_;  // on reader_db_, for the reader thread
    std::mutex read_mutex_;
    std::condition_variable read_wake_;
    std::deque<read_job> reads_;
    bool reads_stopped_ = false;
    std::thread reader_;
};

}  // namespace

std::unique_ptr<history_store> open_sqlite_history_store(const sqlite_history_options& options) {
    static std::once_flag configured;
    std::call_once(configured, [] {
        // SQLite's own memory (page caches, statements, schema) is counted in the log budget
        // (outside_bytes), which needs its statistics: Debian's build leaves them off. They take
        // a mutex per allocation, uncontended but for the writer, reader and loader threads.
        // Only possible before SQLite initializes, hence once, before the first open.
        sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 1);
        // The connections' page caches (64 KiB pages) come from one block of slots set aside
        // for them: pages taken and given back from the heap would leave holes between the
        // room logs that the allocator cannot return. Pages beyond the slots (another page
        // size, a cache over its limit in a long write) come from the heap as before.
        int header = 0;
        sqlite3_config(SQLITE_CONFIG_PCACHE_HDRSZ, &header);
        page_slot_bytes = 65536 + ((header + 7) / 8) * 8;
        static std::unique_ptr<char[]> slots(new char[static_cast<std::size_t>(page_slot_bytes) * page_slots]);
        sqlite3_config(SQLITE_CONFIG_PAGECACHE, slots.get(), page_slot_bytes, page_slots);
    });
    check_location(options.path);
    return std::make_unique<sqlite_history_store>(options);
}

}  // namespace parley::rooms
