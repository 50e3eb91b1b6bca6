#pragma once

#include "config/settings.hpp"
#include "registry/user_registry.hpp"
#include "rooms/history_store.hpp"
#include "rooms/message_bus.hpp"
#include "rooms/room_directory.hpp"

#include <memory>
#include <vector>

namespace parley::rooms {

class worker_context;

// What every session shares: settings, the user registry, the rooms and their history, and the
// list of workers (to post dms and broadcasts to). Built once before the workers start.
// Thread: the accessors may be used from any thread; the objects they return say how they sync.
class chat_hub {
public:
    // bus: where room events go beyond this node; the local bus (nowhere) when null.
    chat_hub(const config::settings& settings, std::unique_ptr<history_store> store,
             std::vector<worker_context*> workers, std::unique_ptr<message_bus> bus = nullptr);

    const config::settings& settings() const { return settings_; }
    registry::user_registry& users() { return users_; }
    room_directory& rooms() { return rooms_; }
    worker_context& worker(std::uint32_t index) { return *workers_.at(index); }
    std::size_t worker_count() const { return workers_.size(); }

private:
    const config::settings& settings_;
    std::unique_ptr<history_store> store_;
    std::vector<worker_context*> workers_;
    std::unique_ptr<message_bus> bus_;
    registry::user_registry users_;
    room_directory rooms_;
};

}  // namespace parley::rooms
