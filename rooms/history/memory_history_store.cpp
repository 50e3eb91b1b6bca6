#include "rooms/history/memory_history_store.hpp"

#include "rooms/history/room_setting_book.hpp"
#include "rooms/history/unix_clock.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

namespace parley::rooms {
namespace {

// Memory is the whole history: nothing to store, every message may leave memory at once
// (durable_seq_ keeps its default, the highest seq).
class memory_room_log final : public room_log {
public:
    using room_log::room_log;

private:
    void stored(std::int64_t, std::int64_t, const protocol::shared_frame&) override {}
    // revised(): the default (nothing). room_log::revise replaced the frame in memory, and
    // memory is all there is: the old frame is gone once no queue of a session holds it.
};

class memory_history_store final : public history_store, private log_cache::policy {
public:
    memory_history_store(std::size_t per_room, std::int64_t epoch, std::int64_t max_age_ms, std::size_t budget)
        : per_room_(per_room), epoch_(epoch), max_age_ms_(max_age_ms), latest_epoch_(epoch),
          logs_(*this, budget, true) {}

    log_handle open(std::string_view room) override { return logs_.open(room); }

    history_stats stats() const override {
        history_stats s;
        s.memory_bytes = s.log_bytes = logs_.held_bytes();
        s.evictions = logs_.evictions();
        s.evicted_bytes = logs_.evicted_bytes();
        return s;
    }

    // Room settings live as long as the process, as messages do here.
    std::vector<room_setting> room_settings(std::string_view room) override { return settings_.of(room); }
    void save_room_setting(std::string_view room, const room_setting& setting) override {
        settings_.put(room, setting);
    }

    std::vector<read_marker> read_markers(std::string_view user) override {
        std::vector<read_marker> out;
        std::lock_guard lock(mutex_);
        if (auto it = markers_.find(user); it != markers_.end()) {
            for (const auto& [key, seq] : it->second) {
                out.push_back({key, seq});
            }
        }
        return out;
    }

    void save_marker(std::string_view user, std::string_view key, std::int64_t seq) override {
        std::lock_guard lock(mutex_);
        auto user_it = markers_.find(user);
        if (user_it == markers_.end()) {
            user_it = markers_.emplace(std::string(user), std::map<std::string, std::int64_t, std::less<>>{}).first;
        }
        auto& markers = user_it->second;
        auto it = markers.find(key);
        if (it == markers.end()) {
            markers.emplace(std::string(key), seq);
        } else {
            it->second = std::max(it->second, seq);
        }
    }

    // An evicted log is gone with its messages: its key has no activity until it is made again
    // (in a new epoch), so a marker in it lists no last seq and nothing unread.
    log_activity activity(std::string_view key) override { return logs_.activity(key).value_or(log_activity{}); }

private:
    // Under the cache's lock, as is evicting(): evicted_ and latest_epoch_ need no other.
    std::unique_ptr<room_log> make(std::string_view) override {
        std::int64_t epoch = epoch_;
        if (evicted_) {
            // This room may have been evicted: its clients' seqs must not match new messages.
            latest_epoch_ = std::max(unix_millis(), latest_epoch_ + 1);
            epoch = latest_epoch_;
        }
        return std::make_unique<memory_room_log>(epoch, 0, per_room_, max_age_ms_);
    }
    void evicting(const std::vector<room_log*>& logs) override {
        evicted_ = true;
        // The room starts over (a new epoch): its settings go with its messages, so what they
        // hold stays within what the logs in memory hold.
        for (const room_log* log : logs) {
            settings_.forget(log->key());
        }
    }

    const std::size_t per_room_;
    const std::int64_t epoch_;
    const std::int64_t max_age_ms_;
    bool evicted_ = false;
    std::int64_t latest_epoch_;  // the highest epoch given to a log
    std::mutex mutex_;           // markers_
    room_setting_book settings_;
    // user -> log key -> seq; memory is the whole store, so they last the daemon's lifetime.
    std::map<std::string, std::map<std::string, std::int64_t, std::less<>>, std::less<>> markers_;
    log_cache logs_;             // last: its logs go before the rest
};

}  // namespace

std::unique_ptr<history_store> make_memory_history_store(std::size_t per_room, std::int64_t epoch,
                                                         std::int64_t max_age_ms, std::size_t memory_budget_bytes) {
    return std::make_unique<memory_history_store>(per_room, epoch, max_age_ms, memory_budget_bytes);
}

}  // namespace parley::rooms
