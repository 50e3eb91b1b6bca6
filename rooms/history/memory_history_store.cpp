#include "rooms/history/memory_history_store.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace parley::rooms {
namespace {

// Memory is the whole history: nothing to store, every message may leave memory at once
// (durable_seq_ keeps its default, the highest seq).
class memory_room_log final : public room_log {
public:
    using room_log::room_log;

private:
    void stored(std::int64_t, std::int64_t, const protocol::shared_frame&) override {}
};

class memory_history_store final : public history_store {
public:
    memory_history_store(std::size_t per_room, std::int64_t epoch, std::int64_t max_age_ms)
        : per_room_(per_room), epoch_(epoch), max_age_ms_(max_age_ms) {}

    room_log* open(std::string_view room) override {
        std::lock_guard lock(mutex_);
        auto it = logs_.find(std::string(room));
        if (it == logs_.end()) {
            auto log = std::make_unique<memory_room_log>(epoch_, 0, per_room_, max_age_ms_);
            it = logs_.emplace(std::string(room), std::move(log)).first;
        }
        return it->second.get();
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

    log_activity activity(std::string_view key) override {
        std::lock_guard lock(mutex_);
        auto it = logs_.find(std::string(key));
        return it == logs_.end() ? log_activity{} : it->second->activity();
    }

private:
    std::size_t per_room_;
    std::int64_t epoch_;
    std::int64_t max_age_ms_;
    std::mutex mutex_;
    std::unordered_map<std::string, std::unique_ptr<memory_room_log>> logs_;
    // user -> log key -> seq; memory is the whole store, so they last the daemon's lifetime.
    std::map<std::string, std::map<std::string, std::int64_t, std::less<>>, std::less<>> markers_;
};

}  // namespace

std::unique_ptr<history_store> make_memory_history_store(std::size_t per_room, std::int64_t epoch,
                                                         std::int64_t max_age_ms) {
    return std::make_unique<memory_history_store>(per_room, epoch, max_age_ms);
}

}  // namespace parley::rooms
