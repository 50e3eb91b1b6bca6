#pragma once

#include "config/settings.hpp"
#include "registry/user_registry.hpp"
#include "rooms/cluster_link.hpp"
#include "rooms/direct_conversations.hpp"
#include "rooms/history/history_store.hpp"
#include "rooms/message_bus.hpp"
#include "rooms/read_marker_book.hpp"
#include "rooms/room_directory.hpp"

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
    mutable std::mutex settings_mutex_;
    std::shared_ptr<const config::settings> settings_;
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
