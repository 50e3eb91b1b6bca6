#pragma once

#include "rooms/history/history_store.hpp"

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace parley::rooms {

// Room settings on their way somewhere, or kept in memory only: (room, kind, subject) -> value,
// where a value of nullopt is a removal not yet written. The memory store and a cluster node's
// store keep their settings here; the SQLite store keeps what its writer has not written yet.
// Thread: every method may be called from any thread.
class room_setting_book {
public:
    using key = std::tuple<std::string, std::string, std::string>;  // room, kind, subject
    using entries = std::map<key, std::optional<std::string>, std::less<>>;

    void put(std::string_view room, const room_setting& setting);
    // Applies what the book holds for room over `stored` (what storage had): values replace,
    // removals remove.
    void overlay(std::string_view room, std::vector<room_setting>& stored) const;
    // Everything held for room, for a store that keeps its settings here alone.
    std::vector<room_setting> of(std::string_view room) const {
        std::vector<room_setting> out;
        overlay(room, out);
        return out;
    }
    // Takes everything recorded, for one write (one writer at a time). Reads keep seeing it
    // until written() says it is stored, or give_back() returns it after a failed write (where
    // nothing newer was recorded for the same key meanwhile).
    entries take();
    void written();
    void give_back(entries failed);
    bool empty() const;
    // Drops everything held for room (a store that keeps settings only here, when the room's log
    // leaves memory: memory held by settings follows the logs held).
    void forget(std::string_view room);

private:
    mutable std::mutex mutex_;
    entries entries_;  // under mutex_
    // What take() handed out and is not yet known to be written: reads still see it.
    entries in_flight_;
};

}  // namespace parley::rooms
