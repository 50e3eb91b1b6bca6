#pragma once

#include "rooms/history/history_store.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace parley::rooms {

// Reads stored messages of one room from wherever the cluster keeps them. done runs exactly
// once, on any thread: with the messages oldest first, or with nullopt when they could not be
// read (the store's answer is then "unavailable", never an empty page that looks complete).
using stream_reader = std::function<void(std::string room, stored_read what,
                                         std::function<void(std::optional<std::vector<log_entry>>)> done)>;

// The history of a node of a cluster: each room's newest `per_room` messages in memory, and
// everything from seq 1 in the cluster's shared storage (a Redis stream per room), read through
// `read`. Messages are stored by the cluster before a node sees them, so the logs write nothing.
// `epoch` is the epoch a log made now starts in: the cluster's once the node has read it.
// Thread: as history_store (any); `read` and `epoch` are called from any thread.
std::unique_ptr<history_store> make_stream_history_store(std::size_t per_room, std::function<std::int64_t()> epoch,
                                                         stream_reader read);

}  // namespace parley::rooms
