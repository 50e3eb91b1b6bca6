// The history writer's side of revisions (an edited or deleted message): where a new frame goes
// depending on how far its message got, and emptying the write-ahead log afterwards. See the
// class comment in sqlite_history_writer.hpp; the chunks themselves are rewritten by
// sqlite_chunk_rewriter.

#include "rooms/history/sqlite_history_writer.hpp"

#include "rooms/history/sqlite_room_log.hpp"

#include <algorithm>
#include <iterator>
#include <string>

namespace parley::rooms {

namespace {
// How long the checkpoint after revisions waits for readers (see checkpoint_revised).
constexpr int checkpoint_wait_ms = 200;
}  // namespace

void sqlite_room_log::revised(std::int64_t seq, std::int64_t /*ts*/, const protocol::shared_frame& frame) {
    writer_.revise(this, seq, frame);
}

void sqlite_history_writer::revise(sqlite_room_log* log, std::int64_t seq, const protocol::shared_frame& message) {
    std::lock_guard lock(mutex_);
    // Newest first: a revised message is nearly always a recent one, and a log's seqs grow
    // along the queue, so its first older entry ends the search.
    for (auto it = queue_.rbegin(); it != queue_.rend(); ++it) {
        if (it->log != log) {
            continue;
        }
        if (it->seq < seq) {
            break;
        }
        if (it->seq == seq) {
            it->message = message;
            // An earlier revision of the same message, kept from a pass whose batch failed and
            // came back to the queue, would otherwise be applied over this one.
            auto stale = std::remove_if(revisions_.begin(), revisions_.end(),
                                        [&](const revision& r) { return r.log == log && r.seq == seq; });
            log->count_revisions(-static_cast<std::int64_t>(std::distance(stale, revisions_.end())));
            revisions_.erase(stale, revisions_.end());
            return;
        }
    }
    // Written, or in the pass under way: the next pass finds it in the file (or, when that pass
    // failed and put its batch back, in its batch).
    log->count_revisions(1);
    revisions_.push_back({log, seq, message});
}

void sqlite_history_writer::revise_batch(std::vector<pending>& batch, std::vector<revision>& revisions) {
    auto applied = std::remove_if(revisions.begin(), revisions.end(), [&](const revision& r) {
        for (auto it = batch.rbegin(); it != batch.rend(); ++it) {
            if (it->log == r.log && it->seq == r.seq) {
                it->message = r.message;
                // Not written yet, so not evictable yet either: the count may come down now.
                r.log->count_revisions(-1);
                return true;
            }
        }
        return false;
    });
    revisions.erase(applied, revisions.end());
}

bool sqlite_history_writer::revise_stored(std::vector<revision>& revisions) {
    std::vector<chunk_revision> stored;
    stored.reserve(revisions.size());
    for (const revision& r : revisions) {
        // A log without a row has nothing in the file: its message was in no batch that
        // committed, so there is nothing to replace.
        if (std::int64_t room = r.log->room_id(); room >= 0) {
            stored.push_back({room, r.seq, r.message});
        }
    }
    std::size_t replaced = 0;
    try {
        if (!stored.empty()) {
            db_.transaction([&] { replaced = rewriter_.apply(std::move(stored)); });
        }
    } catch (const sqlite_error& e) {
        failures_.fetch_add(1, std::memory_order_relaxed);
        report(std::string("rewriting ") + std::to_string(revisions.size()) +
               " revised messages failed (kept, retrying): " + e.what());
        return false;
    }
    for (const revision& r : revisions) {
        r.log->count_revisions(-1);
    }
    revisions.clear();
    if (replaced > 0 || checkpoint_owed_) {
        checkpoint_revised();
    }
    return true;
}

void sqlite_history_writer::checkpoint_revised() {
    // The committed rewrite is in the write-ahead log; the old chunk's page images before it are
    // still there until a checkpoint copies the new ones into the file and the log is emptied.
    // TRUNCATE waits for readers on an older snapshot, here briefly (the store's reads take
    // milliseconds) rather than the connection's busy timeout of seconds, since messages wait
    // meanwhile. When a reader outlasts it, or the checkpoint fails, it is owed: run() tries
    // again after the next pass with nothing else to do, or with the next revising pass,
    // whichever comes first. Not at every pass: each try may wait, and a busy writer's passes
    // would pay that in a row.
    sqlite3_busy_timeout(db_.handle(), checkpoint_wait_ms);
    try {
        auto statement = db_.prepare("PRAGMA wal_checkpoint(TRUNCATE)");
        // One row: busy (1 when it could not finish), frames in the log, frames checkpointed.
        checkpoint_owed_ = !statement.step() || statement.integer(0) != 0;
    } catch (const sqlite_error& e) {
        checkpoint_owed_ = true;
        report(std::string("emptying the write-ahead log after revisions failed (retrying later): ") + e.what());
    }
    sqlite3_busy_timeout(db_.handle(), sqlite_connection::busy_timeout_ms);
}

}  // namespace parley::rooms
