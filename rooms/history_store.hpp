#pragma once

#include "protocol/shared_frame.hpp"

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace parley::rooms {

// One room's message log: seq numbering and the retained messages (complete `message` frames).
// Thread: not synchronized; the owning room calls it under its own lock.
class room_log {
public:
    virtual ~room_log() = default;
    // Identifies this log's history: a client's `after` from another epoch cannot be recovered.
    virtual std::int64_t epoch() const = 0;
    virtual std::int64_t last_seq() const = 0;
    // Lowest seq still retained (last_seq() + 1 when empty).
    virtual std::int64_t first_retained_seq() const = 0;
    // Records the message with seq == last_seq() + 1.
    virtual void append(std::int64_t seq, const protocol::shared_frame& message) = 0;
    // Oldest first: the newest `limit` messages with seq < before.
    virtual std::vector<protocol::shared_frame> before(std::int64_t before, std::size_t limit) const = 0;
    // Oldest first: the oldest `limit` messages with seq > after.
    virtual std::vector<protocol::shared_frame> after(std::int64_t after, std::size_t limit) const = 0;
};

// Where room logs live. Logs outlive the rooms that use them: a room that empties and is made
// again continues its seq. Later stores (SQLite, Redis) implement the same seam.
// Thread: open() may be called from any thread.
class history_store {
public:
    virtual ~history_store() = default;
    // The log of a room, made on first use. The pointer stays valid for the store's lifetime.
    virtual room_log* open(std::string_view room) = 0;
};

// Keeps each room's newest `per_room` messages in memory; epoch is fixed per store instance
// (the daemon's start), so a restart tells clients their `after` cannot be recovered.
std::unique_ptr<history_store> make_memory_history_store(std::size_t per_room, std::int64_t epoch);

}  // namespace parley::rooms
