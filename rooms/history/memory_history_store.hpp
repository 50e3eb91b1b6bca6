#pragma once

#include "rooms/history/history_store.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace parley::rooms {

// Keeps each room's newest `per_room` messages (and none older than max_age_ms, 0: no limit) in
// memory; epoch is fixed per store instance (the daemon's start), so a restart tells clients
// their `after` cannot be recovered.
std::unique_ptr<history_store> make_memory_history_store(std::size_t per_room, std::int64_t epoch,
                                                         std::int64_t max_age_ms = 0);

}  // namespace parley::rooms
