#include "rooms/history/stream_history_store.hpp"

#include "rooms/history/room_setting_book.hpp"

#include <atomic>
#include <memory>
#include <string>

namespace parley::rooms {

namespace {

using protocol::shared_frame;

// A room's log on a node of a cluster: the newest messages in memory, everything from seq 1 in
// the room's stream (as far as its length keeps it).
class stream_room_log final : public room_log {
public:
    stream_room_log(std::string name, std::int64_t epoch, std::size_t memory_limit)
        : room_log(epoch, 0, memory_limit, 0), name_(std::move(name)) {
        stored_first_.store(1, std::memory_order_release);
    }
    const std::string& name() const { return name_; }

private:
    // The cluster stored it before this node saw it.
    void stored(std::int64_t, std::int64_t, const shared_frame&) override {}
    // revised(): the default (nothing). This store never writes the stream (the cluster does,
    // before this node sees a message), so rewriting a message there is the cluster's part
    // too; room_log::revise has already replaced this node's copy in memory.
    std::string name_;
};

class stream_history_store final : public history_store, private log_cache::policy {
public:
    stream_history_store(std::size_t per_room, std::function<std::int64_t()> epoch, stream_reader read)
        : per_room_(per_room), epoch_(std::move(epoch)), read_(std::move(read)) {}

    log_handle open(std::string_view room) override { return logs_.open(room); }

    void stop_reads() override { stopped_->store(true, std::memory_order_relaxed); }

    // A node of a cluster keeps no state of its own for identities: the cluster keeps a user's
    // markers and direct conversations in Redis, and the chat logic reaches them through its
    // cluster_link. (A conversation's log here only names its stream for dm_history's reads.)
    std::vector<read_marker> read_markers(std::string_view) override { return {}; }
    void save_marker(std::string_view, std::string_view, std::int64_t) override {}

    // Room settings: kept by this node for as long as it runs. Sharing them through Redis, so
    // that every node and a restart see them, is the cluster's part (docs/cluster.md).
    std::vector<room_setting> room_settings(std::string_view room) override { return settings_.of(room); }
    void save_room_setting(std::string_view room, const room_setting& setting) override {
        settings_.put(room, setting);
    }

    log_activity activity(std::string_view key) override {
        return logs_.activity(key).value_or(log_activity{});
    }

    history_stats stats() const override {
        history_stats s;
        s.memory_bytes = s.log_bytes = logs_.held_bytes();
        return s;
    }

protected:
    void read_stored(const log_handle& log, history_answer answer, history_done done) override {
        const std::string& room = static_cast<stream_room_log&>(*log).name();
        stored_read what = *answer.stored;
        read_(room, what,
              [stopped = stopped_, answer = std::move(answer),
               done = std::move(done)](std::optional<std::vector<log_entry>> entries) mutable {
                  if (stopped->load(std::memory_order_relaxed)) {
                      return;  // the workers the answer would go to are gone
                  }
                  if (!entries) {
                      done(std::nullopt);
                      return;
                  }
                  std::vector<shared_frame> frames;
                  frames.reserve(entries->size());
                  for (auto& e : *entries) {
                      frames.push_back(std::move(e.frame));
                  }
                  done(join_answer(std::move(frames), answer));
              });
    }

private:
    // Under the cache's lock.
    std::unique_ptr<room_log> make(std::string_view room) override {
        return std::make_unique<stream_room_log>(std::string(room), epoch_(), per_room_);
    }
    void reopened(room_log& log) override {
        std::int64_t epoch = epoch_();
        if (log.last_seq() == 0 && log.epoch() != epoch) {
            // Made before this node knew the cluster's epoch, and never used: no room holds it
            // now (a room opens its log once, when it is made), so it may start over.
            log.reset(epoch, 0, {}, 1);
        }
    }
    // A log made again would start at seq 0 in the cluster's epoch, as if the room had no
    // messages, until the cluster rebased it: a node keeps every log it has (unlimited budget,
    // and never ready).
    bool ready(const room_log&) override { return false; }

    const std::size_t per_room_;
    const std::function<std::int64_t()> epoch_;
    const stream_reader read_;
    // Shared with the reads in flight, which may answer after the store is gone.
    std::shared_ptr<std::atomic<bool>> stopped_ = std::make_shared<std::atomic<bool>>(false);
    log_cache logs_{*this, log_cache::unlimited, false};
    room_setting_book settings_;
};

}  // namespace

std::unique_ptr<history_store> make_stream_history_store(std::size_t per_room, std::function<std::int64_t()> epoch,
                                                         stream_reader read) {
    return std::make_unique<stream_history_store>(per_room, std::move(epoch), std::move(read));
}

}  // namespace parley::rooms
