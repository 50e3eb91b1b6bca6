#pragma once

#include "rooms/history/history_store.hpp"
#include "rooms/history/log_cache.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace parley::rooms {

// Keeps each room's newest `per_room` messages (and none older than max_age_ms, 0: no limit) in
// memory; epoch is fixed per store instance (the daemon's start), so a restart tells clients
// their `after` cannot be recovered.
// Idle logs (no room, no read holds them) stay while all logs hold at most memory_budget_bytes;
// above it the least recently used go, messages and all. Once any has gone, every log made
// starts an epoch of its own (the time, and above every epoch given before), since a room made
// again must not give out its old seqs for other messages.
std::unique_ptr<history_store> make_memory_history_store(std::size_t per_room, std::int64_t epoch,
                                                         std::int64_t max_age_ms = 0,
                                                         std::size_t memory_budget_bytes = log_cache::unlimited);

}  // namespace parley::rooms
