#pragma once

#include "config/settings.hpp"
#include "rooms/chat_events.hpp"
#include "rooms/history/history_store.hpp"
#include "rooms/message_bus.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace parley::rooms {

class cluster_link;

class room;
class worker_context;

// What room_directory::tick needs to tell big rooms their member count (room::show_member_count).
struct member_count_settings {
    std::size_t presence_max_members = SIZE_MAX;  // rooms above this many members hear the count
    std::int64_t count_interval_ms = 5000;        // at most this often
};

// The rooms that exist: name -> room, in shards with a mutex each (rooms are made and closed
// far less often than messages flow; a message never touches the directory).
// Thread: every method may be called from any thread.
class room_directory {
public:
    room_directory(history_store& store, message_bus& bus, std::vector<worker_context*> workers);

    std::shared_ptr<room> find(std::string_view name) const;
    std::shared_ptr<room> find_or_create(std::string_view name);

    enum class if_missing { create, skip };
    // Calls act(room&) on the room called name, made first when there is none (or, with
    // if_missing::skip, returns null without calling act). A room closes when its last member
    // leaves, possibly between the lookup and act: act then returns false (room::join's `gone`,
    // set_declared's false, ...) and the lookup is made again, finding or making the room that
    // replaces it. Returns the room act accepted.
    // act runs outside the directory's locks (a room calls erase() under its own lock), and may
    // run more than once.
    template <typename Act>
    std::shared_ptr<room> with_room(std::string_view name, Act&& act, if_missing missing = if_missing::create) {
        for (;;) {
            std::shared_ptr<room> r = missing == if_missing::create ? find_or_create(name) : find(name);
            if (!r || act(*r)) {
                return r;
            }
        }
    }
    // A room that exists even with no members (declared in the configuration).
    void create_permanent(std::string_view name, std::string topic = {});
    // Makes exactly these rooms the declared ones: creates those missing, updates topics and
    // configured roles, and lets rooms no longer declared close once empty. identities: names
    // are identities (token mode), so roles, bans and mutes apply (room::set_identities).
    // Called at start and on every reload.
    void declare(const std::vector<config::permanent_room>& rooms, bool identities = false);

    // The store rooms keep their settings in.
    history_store& store() { return store_; }
    // Where rooms (and sessions) report chat events for webhooks; reports nothing until the
    // server attaches a sink.
    chat_events& events() { return events_; }
    const chat_events& events() const { return events_; }

    // The periodic tick (a worker's housekeeping, about once a second): ends the timed bans and
    // mutes that are over, as events, in the rooms that need it (room::needs_care). A walk over
    // the rooms, which is cheap next to a second of traffic even with a hundred thousand.
    // cluster: the node's, when it belongs to one (room::end_expired_sanctions). Rooms above
    // presence_max_members tell their members their count (room::show_member_count), at most
    // once per count_interval_ms.
    using tick_settings = member_count_settings;
    void tick(std::int64_t now_ms, cluster_link* cluster = nullptr, tick_settings counts = {});
    // Called by a room, under its lock, when its last member left.
    void erase(const room* r);

    // Every room that exists now, in no order.
    std::vector<std::shared_ptr<room>> all() const;

    // Every room with its member count, sorted by name.
    std::vector<std::pair<std::string, std::size_t>> list() const;
    std::size_t size() const;

private:
    struct shard {
        mutable std::mutex mutex;
        std::unordered_map<std::string, std::shared_ptr<room>> rooms;
    };
    shard& shard_for(std::string_view name) const;
    std::shared_ptr<room> make_room(std::string_view name, bool permanent);

    std::mutex declared_mutex_;  // serializes declare() calls; held across room calls
    std::vector<std::string> declared_;
    std::atomic<bool> identities_{false};
    history_store& store_;
    message_bus& bus_;
    chat_events events_;
    std::vector<worker_context*> workers_;
    mutable std::array<shard, 16> shards_;
};

}  // namespace parley::rooms
