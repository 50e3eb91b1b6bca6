#include "rooms/history/sqlite_history_writer.hpp"

#include "protocol/frame_encoder.hpp"
#include "rooms/history/sqlite_room_log.hpp"
#include "rooms/history/unix_clock.hpp"

#include <algorithm>
#include <iterator>

namespace parley::rooms {

namespace {
// Expired chunks deleted per room per pass: a long-stopped daemon with a short age limit deletes
// its backlog over several passes, each between two batches, so no batch waits long for it.
constexpr std::int64_t expire_chunks_per_pass = 500;
// A room's chunk is inserted when it reaches either size, so a read decodes little it does
// not need and a row stays a few pages long.
constexpr std::size_t chunk_max_messages = 256;
constexpr std::size_t chunk_max_bytes = 64 * 1024;
// Failed writes of the final batch at stop before giving up on it (and saying so).
constexpr int stop_attempts = 3;

std::chrono::milliseconds expiry_period(std::int64_t max_age_ms) {
    // A hundredth of the age limit, between one second and a minute: old messages outlive the
    // limit by at most about 1%, and a short limit (tests) is still honoured promptly.
    return std::chrono::milliseconds(std::clamp<std::int64_t>(max_age_ms / 100, 1000, 60000));
}
}  // namespace

void sqlite_room_log::stored(std::int64_t seq, std::int64_t ts, const protocol::shared_frame& message) {
    writer_.enqueue(this, seq, ts, message);
}
// sqlite_room_log::revised is in sqlite_history_writer_revise.cpp, with the writer's revise().

sqlite_history_writer::sqlite_history_writer(const sqlite_history_options& options,
                                             std::function<void()> between_batches)
    : options_(options),
      db_(options.path, false),
      insert_chunk_(db_.prepare("INSERT INTO chunks(room_id, first_seq, last_seq, last_ts, count, data) "
                                "VALUES(?1, ?2, ?3, ?4, ?5, ?6)")),
      insert_room_(db_.prepare("INSERT INTO rooms(name, reserved_seq) VALUES(?1, ?2) ON CONFLICT(name) DO NOTHING")),
      room_id_(db_.prepare("SELECT id FROM rooms WHERE name = ?1")),
      room_ids_(db_.prepare("SELECT id FROM rooms")),
      reserve_(db_.prepare("UPDATE rooms SET reserved_seq = ?2 WHERE id = ?1")),
      retain_from_(db_.prepare("UPDATE rooms SET first_seq = ?2 WHERE id = ?1")),
      count_(db_.prepare("SELECT coalesce(sum(count), 0) FROM chunks WHERE room_id = ?1")),
      oldest_chunks_(db_.prepare("SELECT first_seq, last_seq, count, last_ts FROM chunks WHERE room_id = ?1 "
                                 "ORDER BY last_seq LIMIT ?2")),
      delete_through_(db_.prepare("DELETE FROM chunks WHERE room_id = ?1 AND last_seq <= ?2")),
      first_seq_(db_.prepare("SELECT first_seq FROM chunks WHERE room_id = ?1 ORDER BY last_seq LIMIT 1")),
      rewriter_(db_),
      markers_(db_),
      settings_(db_),
      between_batches_(std::move(between_batches)) {
    // WAL with NORMAL sync: a commit is in the log file when COMMIT returns, so a killed daemon
    // loses nothing committed; only a power cut can lose the commits since the last checkpoint.
    db_.exec("PRAGMA synchronous = NORMAL");
    // The writer touches the right edge of the chunk table and its index, and the oldest pages
    // when retention deletes: 16 pages of 64 KiB hold that; older pages come from the operating
    // system's cache. (SQLite's default, 2 MiB per connection, only grows the daemon.)
    db_.limit_cache(1024);
    // What SQLite frees (a revised message's old chunk, the cells and pages it leaves, deleted
    // rows) it overwrites with zeros: a deleted message must leave the file, not only the table.
    // The cost: retention's deletes write the pages they free.
    db_.exec("PRAGMA secure_delete = ON");
    thread_ = std::thread([this] { run(); });
}

sqlite_history_writer::~sqlite_history_writer() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_one();
    passed_.notify_all();
    thread_.join();
}

void sqlite_history_writer::adopt(sqlite_room_log* log) {
    std::lock_guard lock(mutex_);
    logs_.insert(log);
}

void sqlite_history_writer::forget(const std::vector<sqlite_room_log*>& logs) {
    bool lower = std::any_of(logs.begin(), logs.end(),
                             [](const sqlite_room_log* log) { return log->written_last_ > 0 && log->room_id() >= 0; });
    if (lower) {
        db_.transaction([&] {
            for (const sqlite_room_log* log : logs) {
                if (log->written_last_ > 0 && log->room_id() >= 0) {
                    reserve_.bind(1, log->room_id()).bind(2, log->written_last_).run();
                }
            }
        });
    }
    for (sqlite_room_log* log : logs) {
        if (log->room_id() >= 0) {
            by_room_.erase(log->room_id());
        }
    }
    std::lock_guard lock(mutex_);
    for (sqlite_room_log* log : logs) {
        logs_.erase(log);
    }
}

void sqlite_history_writer::enqueue(sqlite_room_log* log, std::int64_t seq, std::int64_t ts,
                                    const protocol::shared_frame& message) {
    std::lock_guard lock(mutex_);
    queue_.push_back({log, seq, ts, message});
    if (queue_.size() == options_.batch_size) {
        wake_.notify_one();
    }
}

void sqlite_history_writer::wait_for_pass(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (failing_ || stopping_) {
        return;
    }
    const std::uint64_t target = passes_started_ + 1;
    urgent_ = true;
    wake_.notify_one();
    passed_.wait_for(lock, timeout, [&] { return passes_ended_ >= target || stopping_ || failing_; });
}

std::size_t sqlite_history_writer::backlog() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
}

void sqlite_history_writer::report(std::string_view what) const {
    if (options_.report) {
        options_.report(what);
    }
}

namespace {
// Entries of 32 bytes: 128 KiB per queue.
constexpr std::size_t quiet_queue_capacity = 4096;
}  // namespace

void sqlite_history_writer::run() {
    using clock = std::chrono::steady_clock;
    auto next_flush = clock::now() + options_.flush_interval;
    int failed_at_stop = 0;
    int marker_failures_at_stop = 0;
    int revision_failures_at_stop = 0;
    bool everything_written = true;
    // Swapped with queue_ on every pass, so both keep their capacity instead of regrowing.
    std::vector<pending> batch;
    std::vector<revision> revising;
    for (;;) {
        batch.clear();
        revising.clear();
        bool stopping = false;
        std::uint64_t pass = 0;
        {
            std::unique_lock lock(mutex_);
            wake_.wait_until(lock, next_flush,
                             [&] { return stopping_ || urgent_ || queue_.size() >= options_.batch_size; });
            stopping = stopping_;
            urgent_ = false;
            pass = ++passes_started_;
            batch.swap(queue_);
            revising.swap(revisions_);
        }
        // Tells those waiting in wait_for_pass that this pass is over.
        auto end_pass = [&](bool failed) {
            {
                std::lock_guard lock(mutex_);
                passes_ended_ = pass;
                failing_ = failed;
            }
            passed_.notify_all();
        };
        auto now = clock::now();
        if (now >= next_flush) {
            next_flush = now + options_.flush_interval;
        }
        const bool idle_pass = batch.empty() && revising.empty();
        if (!revising.empty() && !batch.empty()) {
            revise_batch(batch, revising);  // what is not written yet is written as revised
        }
        if (!batch.empty() && !write(batch)) {
            // Kept, in order, ahead of what came since: the next pass writes them again.
            std::lock_guard lock(mutex_);
            batch.insert(batch.end(), std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
            queue_.swap(batch);
            revising.insert(revising.end(), std::make_move_iterator(revisions_.begin()),
                            std::make_move_iterator(revisions_.end()));
            revisions_.swap(revising);
            if (stopping && ++failed_at_stop >= stop_attempts) {
                report("stopping with " + std::to_string(queue_.size()) + " messages that could not be written");
                everything_written = false;
                break;
            }
            next_flush = now + std::max<clock::duration>(options_.flush_interval, std::chrono::seconds(1));
            end_pass(true);
            continue;
        }
        if (!revising.empty() && !revise_stored(revising)) {
            // Kept ahead of those that came since; their logs stay in memory meanwhile.
            std::lock_guard lock(mutex_);
            revising.insert(revising.end(), std::make_move_iterator(revisions_.begin()),
                            std::make_move_iterator(revisions_.end()));
            revisions_.swap(revising);
            if (stopping && ++revision_failures_at_stop >= stop_attempts) {
                report("stopping with " + std::to_string(revisions_.size()) +
                       " revised messages whose old text could not be replaced in the file");
                revisions_.clear();
            }
        } else if (idle_pass && checkpoint_owed_) {
            checkpoint_revised();
        }
        if (!flush_markers() && stopping && ++marker_failures_at_stop >= stop_attempts) {
            report("stopping with read markers or room settings that could not be written");
            break;
        }
        if (options_.max_age_ms > 0 && now >= next_expiry_) {
            bool more = false;
            try {
                more = expire_old();
            } catch (const sqlite_error& e) {
                report(std::string("deleting expired messages failed: ") + e.what());
            }
            next_expiry_ = more ? now : now + expiry_period(options_.max_age_ms);
        }
        if (between_batches_ && !stopping) {
            between_batches_();
        }
        end_pass(false);
        // A burst's capacity goes back once the queue is small again (a flood of new rooms
        // must not leave the writer's two queues at its size).
        if (batch.size() < batch.capacity() / 8 && batch.capacity() > quiet_queue_capacity) {
            std::vector<pending>().swap(batch);
            std::lock_guard lock(mutex_);
            if (queue_.capacity() > quiet_queue_capacity && queue_.size() < quiet_queue_capacity) {
                std::vector<pending> smaller;
                smaller.reserve(queue_.size());
                smaller.insert(smaller.end(), std::make_move_iterator(queue_.begin()),
                               std::make_move_iterator(queue_.end()));
                queue_.swap(smaller);
            }
        }
        if (stopping) {
            std::lock_guard lock(mutex_);
            if (queue_.empty() && revisions_.empty() && markers_.idle() && settings_.idle()) {
                break;
            }
        }
    }
    if (everything_written) {
        try {
            record_last_seqs();
        } catch (const sqlite_error& e) {
            report(std::string("recording the last seqs failed: ") + e.what());
        }
    }
}

bool sqlite_history_writer::flush_markers() {
    try {
        markers_.flush();
        settings_.flush();
        return true;
    } catch (const sqlite_error& e) {
        failures_.fetch_add(1, std::memory_order_relaxed);
        report(std::string("writing read markers or room settings failed (kept, retrying): ") + e.what());
        return false;
    }
}

bool sqlite_history_writer::write(const std::vector<pending>& batch) {
    std::vector<sqlite_room_log*> touched;
    std::vector<sqlite_room_log*> new_rooms;
    std::vector<std::pair<sqlite_room_log*, std::int64_t>> previous_reserved;
    try {
        db_.exec("BEGIN IMMEDIATE");
        write_rows(batch, touched, new_rooms);
        reserve_seqs(touched, previous_reserved);
        db_.exec("COMMIT");
    } catch (const sqlite_error& e) {
        try {
            db_.exec("ROLLBACK");
        } catch (const sqlite_error&) {
            // No transaction left to roll back (SQLite already did).
        }
        for (sqlite_room_log* log : new_rooms) {
            by_room_.erase(log->room_id());
            log->set_room_id(-1);
        }
        for (auto [log, reserved] : previous_reserved) {
            log->reserved_ = reserved;
        }
        for (sqlite_room_log* log : touched) {
            log->batch_first_ = log->batch_last_ = log->batch_count_ = 0;
            log->chunk_.clear();
        }
        failures_.fetch_add(1, std::memory_order_relaxed);
        report(std::string("writing ") + std::to_string(batch.size()) + " messages failed (kept, retrying): " +
               e.what());
        return false;
    }
    // Committed: memory may now let these go, and reads may look for them in the file.
    for (sqlite_room_log* log : touched) {
        if (log->stored_first() == sqlite_room_log::no_seq) {
            log->set_stored_first(log->batch_first_);
        }
        if (log->stored_count_ >= 0) {
            log->stored_count_ += log->batch_count_;
        }
        log->written_last_ = log->batch_last_;
        log->set_durable(log->batch_last_);
        log->batch_first_ = log->batch_last_ = log->batch_count_ = 0;
    }
    written_.fetch_add(batch.size(), std::memory_order_relaxed);
    for (sqlite_room_log* log : touched) {
        try {
            keep_newest(*log);
        } catch (const sqlite_error& e) {
            report(std::string("deleting old messages of '") + log->name() + "' failed: " + e.what());
        }
    }
    return true;
}

void sqlite_history_writer::write_rows(const std::vector<pending>& batch, std::vector<sqlite_room_log*>& touched,
                                       std::vector<sqlite_room_log*>& new_rooms) {
    for (const pending& p : batch) {
        sqlite_room_log& log = *p.log;
        if (log.room_id() < 0) {
            insert_room_.bind(1, log.name()).bind(2, log.reserved_).run();
            room_id_.bind(1, log.name());
            if (!room_id_.step()) {
                room_id_.reset();
                throw sqlite_error(db_.path() + ": the row of room '" + log.name() + "' vanished");
            }
            std::int64_t room = room_id_.integer(0);
            room_id_.reset();
            log.set_room_id(room);
            by_room_[room] = &log;
            new_rooms.push_back(&log);
        }
        if (log.batch_last_ == 0) {
            touched.push_back(&log);
            log.batch_first_ = p.seq;
        }
        log.batch_last_ = p.seq;
        ++log.batch_count_;
        log.chunk_.add(p.seq, p.ts, protocol::frame_payload(p.message.view()));
        if (log.chunk_.count() >= chunk_max_messages || log.chunk_.size_bytes() >= chunk_max_bytes) {
            write_chunk(log);
        }
    }
    for (sqlite_room_log* log : touched) {
        if (!log->chunk_.empty()) {
            write_chunk(*log);
        }
    }
}

void sqlite_history_writer::write_chunk(sqlite_room_log& log) {
    const history_chunk& c = log.chunk_;
    insert_chunk_.bind(1, log.room_id())
        .bind(2, c.first_seq())
        .bind(3, c.last_seq())
        .bind(4, c.last_ts())
        .bind(5, static_cast<std::int64_t>(c.count()))
        .bind_blob(6, c.bytes());
    insert_chunk_.run();
    // A room in use keeps its buffer for the next batch: built again from nothing it would be
    // reallocated and copied a dozen times per batch (measured: about 7 % of fan-out into 100
    // rooms, performance.md). An idle room's log keeps no batch-sized buffer.
    if (log.in_use()) {
        log.chunk_.clear();
    } else {
        log.chunk_.release();
    }
}

std::int64_t sqlite_history_writer::first_stored_seq(std::int64_t room) {
    first_seq_.bind(1, room);
    std::int64_t first = first_seq_.step() ? first_seq_.integer(0) : sqlite_room_log::no_seq;
    first_seq_.reset();
    return first;
}

void sqlite_history_writer::reserve_seqs(const std::vector<sqlite_room_log*>& touched,
                                         std::vector<std::pair<sqlite_room_log*, std::int64_t>>& previous) {
    for (sqlite_room_log* log : touched) {
        if (log->batch_last_ > log->reserved_ - reserve_ahead / 2) {
            previous.emplace_back(log, log->reserved_);
            log->reserved_ = log->batch_last_ + reserve_ahead;
            reserve_.bind(1, log->room_id()).bind(2, log->reserved_).run();
        }
    }
}

void sqlite_history_writer::keep_newest(sqlite_room_log& log) {
    if (options_.retain_messages == 0) {
        return;
    }
    std::int64_t room = log.room_id();
    std::int64_t first = log.stored_first();
    if (log.stored_count_ < 0) {
        // Every message of the chunks, less those of the oldest chunk below the first retained.
        count_.bind(1, room);
        log.stored_count_ = count_.step() ? count_.integer(0) : 0;
        count_.reset();
        std::int64_t oldest = first_stored_seq(room);
        if (oldest != sqlite_room_log::no_seq && first != sqlite_room_log::no_seq && first > oldest) {
            log.stored_count_ -= first - oldest;
        }
    }
    std::int64_t excess = log.stored_count_ - static_cast<std::int64_t>(options_.retain_messages);
    if (excess <= 0) {
        return;
    }
    // The first seq to keep: walk the oldest chunks, counting only messages at or above the
    // current first (seqs within a chunk are consecutive: one run wrote them in one pass). Whole
    // chunks below it are deleted; one cut in the middle stays, its older part hidden by the
    // first retained seq.
    std::int64_t left = excess;
    std::int64_t keep_from = first;
    std::int64_t delete_through = 0;
    oldest_chunks_.bind(1, room).bind(2, 1024);
    while (left > 0 && oldest_chunks_.step()) {
        std::int64_t chunk_first = std::max(oldest_chunks_.integer(0), first);
        std::int64_t chunk_last = oldest_chunks_.integer(1);
        if (chunk_last < chunk_first) {
            delete_through = chunk_last;
            continue;
        }
        std::int64_t live = chunk_last - chunk_first + 1;
        if (live <= left) {
            left -= live;
            delete_through = chunk_last;
            keep_from = chunk_last + 1;
        } else {
            keep_from = chunk_first + left;
            left = 0;
        }
    }
    oldest_chunks_.reset();
    if (delete_through > 0) {
        delete_through_.bind(1, room).bind(2, delete_through).run();
    }
    log.stored_count_ -= excess - left;
    if (left > 0) {
        log.stored_count_ = -1;  // fewer than counted: count again next time
    }
    std::int64_t oldest = first_stored_seq(room);
    std::int64_t new_first = oldest == sqlite_room_log::no_seq ? oldest : std::max(keep_from, oldest);
    if (new_first != sqlite_room_log::no_seq && new_first > oldest) {
        // Part of the oldest chunk is gone: the room's row remembers where retention begins.
        retain_from_.bind(1, room).bind(2, new_first).run();
    }
    log.set_stored_first(new_first);
}

sqlite_room_log* sqlite_history_writer::log_of_room(std::int64_t room_id) {
    if (auto it = by_room_.find(room_id); it != by_room_.end()) {
        return it->second;
    }
    std::lock_guard lock(mutex_);
    for (sqlite_room_log* log : logs_) {
        if (log->room_id() == room_id) {
            by_room_[room_id] = log;
            return log;
        }
    }
    return nullptr;
}

bool sqlite_history_writer::expire_old() {
    std::int64_t cutoff = unix_millis() - options_.max_age_ms;
    std::vector<std::int64_t> rooms;
    while (room_ids_.step()) {
        rooms.push_back(room_ids_.integer(0));
    }
    room_ids_.reset();
    bool more = false;
    db_.transaction([&] {
        for (std::int64_t room : rooms) {
            // Chunks go oldest first and times grow with seq, so the expired chunks (every
            // message older than the cutoff) are a prefix. A chunk only partly expired stays;
            // reads skip its expired messages.
            oldest_chunks_.bind(1, room).bind(2, expire_chunks_per_pass + 1);
            std::int64_t last_expired = -1;
            std::int64_t expired = 0;
            while (oldest_chunks_.step()) {
                if (oldest_chunks_.integer(3) >= cutoff) {
                    break;
                }
                if (expired == expire_chunks_per_pass) {
                    more = true;
                    break;
                }
                last_expired = oldest_chunks_.integer(1);
                ++expired;
            }
            oldest_chunks_.reset();
            if (expired == 0) {
                continue;
            }
            delete_through_.bind(1, room).bind(2, last_expired).run();
            if (sqlite_room_log* log = log_of_room(room)) {
                log->stored_count_ = -1;
                std::int64_t first = first_stored_seq(room);
                log->set_stored_first(first == sqlite_room_log::no_seq ? first : std::max(first, log->stored_first()));
            }
        }
    });
    return more;
}

void sqlite_history_writer::record_last_seqs() {
    std::lock_guard lock(mutex_);
    db_.exec("BEGIN IMMEDIATE");
    for (sqlite_room_log* log : logs_) {
        if (log->written_last_ > 0 && log->room_id() >= 0) {
            reserve_.bind(1, log->room_id()).bind(2, log->written_last_).run();
        }
    }
    db_.exec("COMMIT");
    db_.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

}  // namespace parley::rooms
