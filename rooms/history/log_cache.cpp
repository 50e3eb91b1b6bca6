#include "rooms/history/log_cache.hpp"

#include <algorithm>

namespace parley::rooms {

namespace {
// Logs evicted under one hold of the lock: the SQLite store writes each one's final seq in that
// time, and opens of other rooms wait for it. More wait for the next trim.
constexpr std::size_t evictions_per_trim = 4096;
// A cache entry's own cost beside the log's: the map node and its bucket, and the name.
constexpr std::int64_t entry_bytes = 64;
}  // namespace

log_cache::log_cache(policy& store, std::size_t budget_bytes, bool trim_when_idle)
    : policy_(store),
      budget_(static_cast<std::int64_t>(std::min<std::size_t>(budget_bytes, INT64_MAX))),
      trim_when_idle_(trim_when_idle) {}

log_cache::~log_cache() {
    for (auto& [name, log] : logs_) {
        log->held_ = nullptr;
    }
}

std::size_t log_cache::size() const {
    std::lock_guard lock(mutex_);
    return logs_.size();
}

bool log_cache::contains(std::string_view name) const {
    std::lock_guard lock(mutex_);
    return logs_.find(name) != logs_.end();
}

std::optional<log_activity> log_cache::activity(std::string_view name) const {
    std::lock_guard lock(mutex_);
    auto it = logs_.find(name);
    if (it == logs_.end()) {
        return std::nullopt;
    }
    return it->second->activity();
}

log_handle log_cache::open(std::string_view name) {
    std::lock_guard lock(mutex_);
    if (auto it = logs_.find(name); it != logs_.end()) {
        room_log* log = it->second.get();
        if (log->idle_) {
            unlink_idle(log);
        }
        log->uses_.fetch_add(1, std::memory_order_relaxed);
        policy_.reopened(*log);
        return log_handle(this, log);
    }
    std::unique_ptr<room_log> made = policy_.make(name);
    room_log* log = made.get();
    auto it = logs_.emplace(std::string(name), std::move(made)).first;
    log->cache_key_ = it->first;
    log->uses_.store(1, std::memory_order_relaxed);
    log->bytes_ += entry_bytes + static_cast<std::int64_t>(name.size());
    log->held_ = &held_;
    held_.fetch_add(log->bytes_, std::memory_order_relaxed);
    log_handle handle(this, log);
    if (trim_when_idle_ && over_budget()) {
        try {
            trim_locked();
        } catch (...) {
            // As in release(): the policy kept them.
        }
    }
    return handle;
}

void log_cache::release(room_log* log) noexcept {
    // Uses above one go without the lock. The last one is given back under it, where open()
    // takes the first: a log is idle, and may be evicted, only while the lock says so.
    std::uint32_t uses = log->uses_.load(std::memory_order_relaxed);
    while (uses > 1) {
        if (log->uses_.compare_exchange_weak(uses, uses - 1, std::memory_order_acq_rel, std::memory_order_relaxed)) {
            return;
        }
    }
    std::lock_guard lock(mutex_);
    if (log->uses_.fetch_sub(1, std::memory_order_acq_rel) != 1) {
        return;  // copied meanwhile
    }
    log->idle_ = true;
    log->idle_counted_ = log->bytes_;
    idle_held_.fetch_add(log->idle_counted_, std::memory_order_relaxed);
    log->idle_older_ = idle_newest_;
    log->idle_newer_ = nullptr;
    if (idle_newest_ != nullptr) {
        idle_newest_->idle_newer_ = log;
    } else {
        idle_oldest_ = log;
    }
    idle_newest_ = log;
    if (trim_when_idle_ && over_budget()) {
        try {
            trim_locked();
        } catch (...) {
            // The policy kept them; the next trim tries again.
        }
    }
}

void log_cache::unlink_idle(room_log* log) {
    (log->idle_older_ != nullptr ? log->idle_older_->idle_newer_ : idle_oldest_) = log->idle_newer_;
    (log->idle_newer_ != nullptr ? log->idle_newer_->idle_older_ : idle_newest_) = log->idle_older_;
    log->idle_older_ = log->idle_newer_ = nullptr;
    log->idle_ = false;
    idle_held_.fetch_sub(log->idle_counted_, std::memory_order_relaxed);
    log->idle_counted_ = 0;
}

std::size_t log_cache::trim() {
    if (!over_budget()) {
        return 0;
    }
    std::lock_guard lock(mutex_);
    return trim_locked();
}

std::size_t log_cache::trim_locked() {
    std::vector<room_log*> leaving;
    // Down to the low mark, not just under the budget (see low_mark()).
    std::int64_t excess = held_bytes() + policy_.outside_bytes() - low_mark();
    for (room_log* log = idle_oldest_; log != nullptr && excess > 0 && leaving.size() < evictions_per_trim;
         log = log->idle_newer_) {
        if (policy_.ready(*log)) {
            leaving.push_back(log);
            excess -= log->bytes_;
        }
    }
    if (leaving.empty()) {
        return 0;
    }
    policy_.evicting(leaving);
    for (room_log* log : leaving) {
        unlink_idle(log);
        held_.fetch_sub(log->bytes_, std::memory_order_relaxed);
        evicted_bytes_.fetch_add(static_cast<std::uint64_t>(log->bytes_), std::memory_order_relaxed);
        log->held_ = nullptr;
        logs_.erase(logs_.find(log->cache_key_));  // frees the log
    }
    evictions_.fetch_add(leaving.size(), std::memory_order_relaxed);
    return leaving.size();
}

}  // namespace parley::rooms
