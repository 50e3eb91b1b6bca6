#pragma once

#include "config/settings.hpp"
#include "protocol/token_keys.hpp"
#include "registry/user_registry.hpp"
#include "rooms/cluster_link.hpp"
#include "rooms/direct_conversations.hpp"
#include "rooms/history/history_store.hpp"
#include "rooms/message_bus.hpp"
#include "rooms/read_marker_book.hpp"
#include "rooms/room_directory.hpp"

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace parley::rooms {

class worker_context;

// What every session shares: the registry, the rooms and their history, the list of workers
// (to post dms and broadcasts to), and the current settings. Built once before the workers run.
// Thread: every method may be called from any thread; the objects returned say how they sync.
class chat_hub {
public:
    // Copies the settings and hands each worker its snapshot; declares the permanent rooms.
    // bus: where room events go beyond this node; the local bus (nowhere) when null.
    chat_hub(const config::settings& settings, std::unique_ptr<history_store> store,
             std::vector<worker_context*> workers, std::unique_ptr<message_bus> bus = nullptr);

    // The settings in force (the latest reload).
    std::shared_ptr<const config::settings> settings() const;
    // A reload: every worker gets the new snapshot by a posted task (a worker applies it between
    // two events, so a limit changes for the next message, never in the middle of one), and the
    // declared rooms are brought in line.
    void update_settings(const config::settings& next);
    // The public keys login tokens may be signed with (auth.public_keys, read by the server at
    // start, on a reload and when a JWK Set is fetched again); null: none. Workers check tokens
    // with these and the settings' HS256 secret, handed to them as with update_settings.
    void update_public_keys(std::shared_ptr<const protocol::token_keys> keys);
    // A login named a key ("kid") that none of the keys has: whoever reads the keys (the
    // server) reads them again, at a bounded rate and off the workers. Thread: any; the callback
    // is set before the workers run.
    void keys_wanted() const {
        if (keys_wanted_) {
            keys_wanted_();
        }
    }
    void on_keys_wanted(std::function<void()> f) { keys_wanted_ = std::move(f); }

    // The cluster this node belongs to; null for a single node. Set before the workers run.
    cluster_link* cluster() const { return cluster_; }
    void set_cluster(cluster_link* link) { cluster_ = link; }

    registry::user_registry& users() { return users_; }
    room_directory& rooms() { return rooms_; }
    history_store& history() { return *store_; }
    direct_conversations& conversations() { return conversations_; }
    read_marker_book& markers() { return markers_; }
    worker_context& worker(std::uint32_t index) { return *workers_.at(index); }
    std::size_t worker_count() const { return workers_.size(); }
    const std::vector<worker_context*>& workers() const { return workers_; }

private:
    // The secret of s and public_keys_ in one set (under settings_mutex_ once workers run).
    std::shared_ptr<const protocol::token_keys> token_keys_of(const config::settings& s) const;
    void hand_out_token_keys(std::shared_ptr<const protocol::token_keys> keys);

    mutable std::mutex settings_mutex_;
    std::shared_ptr<const config::settings> settings_;
    std::shared_ptr<const protocol::token_keys> public_keys_;
    std::function<void()> keys_wanted_;
    std::unique_ptr<history_store> store_;
    std::vector<worker_context*> workers_;
    std::unique_ptr<message_bus> bus_;
    cluster_link* cluster_ = nullptr;
    registry::user_registry users_;
    room_directory rooms_;
    direct_conversations conversations_;
    read_marker_book markers_;
};

}  // namespace parley::rooms
