#include "rooms/history/sqlite_marker_table.hpp"

#include <algorithm>

namespace parley::rooms {

sqlite_marker_table::sqlite_marker_table(sqlite_connection& writer_db)
    : db_(writer_db),
      // Forward only in the file too: a marker never goes back, whatever order batches come in.
      upsert_(writer_db.prepare("INSERT INTO markers(user, key, seq) VALUES(?1, ?2, ?3) "
                                "ON CONFLICT(user, key) DO UPDATE SET seq = max(seq, excluded.seq)")) {}

void sqlite_marker_table::merge(marker_map& into, const marker_key& key, std::int64_t seq) {
    auto [it, added] = into.emplace(key, seq);
    if (!added) {
        it->second = std::max(it->second, seq);
    }
}

void sqlite_marker_table::record(std::string_view user, std::string_view key, std::int64_t seq) {
    std::lock_guard lock(mutex_);
    merge(recorded_, {std::string(user), std::string(key)}, seq);
}

std::vector<read_marker> sqlite_marker_table::pending_for(std::string_view user) const {
    std::vector<read_marker> out;
    std::lock_guard lock(mutex_);
    for (const marker_map* map : {&recorded_, &writing_}) {
        for (auto it = map->lower_bound(marker_key{std::string(user), std::string()});
             it != map->end() && it->first.first == user; ++it) {
            out.push_back({it->first.second, it->second});
        }
    }
    return out;
}

bool sqlite_marker_table::idle() const {
    std::lock_guard lock(mutex_);
    return recorded_.empty() && writing_.empty();
}

void sqlite_marker_table::flush() {
    {
        std::lock_guard lock(mutex_);
        if (recorded_.empty()) {
            return;
        }
        // writing_ stays visible to pending_for until the commit, so a read between the swap
        // and the commit still sees these markers.
        writing_.swap(recorded_);
    }
    try {
        db_.exec("BEGIN IMMEDIATE");
        for (const auto& [key, seq] : writing_) {
            upsert_.bind(1, key.first).bind(2, key.second).bind(3, seq).run();
        }
        db_.exec("COMMIT");
    } catch (const sqlite_error&) {
        try {
            db_.exec("ROLLBACK");
        } catch (const sqlite_error&) {
            // Nothing left to roll back.
        }
        std::lock_guard lock(mutex_);
        for (const auto& [key, seq] : writing_) {
            merge(recorded_, key, seq);
        }
        writing_.clear();
        throw;
    }
    batches_.fetch_add(1, std::memory_order_relaxed);
    std::scoped_lock lock(settle_mutex_, mutex_);
    writing_.clear();
}

}  // namespace parley::rooms
