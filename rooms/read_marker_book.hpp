#pragma once

#include "rooms/history/history_store.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace parley::rooms {

// The read markers of the users logged in here: where each has read up to in each room and
// direct conversation (keyed as the history store keys logs). A user's markers are loaded when
// their first session logs in and dropped when their last one ends, so memory follows the
// users online, and every session of a user sees the same markers.
//
// `stored` (token mode, where a name is an identity): markers are loaded from and saved to the
// history store. Otherwise a marker lives as long as the session that set it and is never
// stored: without tokens a name belongs to whoever takes it next (docs/security.md).
// Thread: every method may be called from any thread.
class read_marker_book {
public:
    explicit read_marker_book(history_store& store) : store_(store) {}

    // A session of user logged in; the first one loads the stored markers (when stored).
    void attach(std::string_view user, bool stored);
    // A session of user ended; the last one drops the user's markers from memory.
    void detach(std::string_view user);

    // Moves user's marker in key to seq if that is forward; returns the new marker then, and
    // nullopt when it did not move (seq at or below it). Saved to the store when stored.
    std::optional<std::int64_t> advance(std::string_view user, std::string_view key, std::int64_t seq);
    // Makes sure user has a marker in key (at 0 when new): a conversation someone started with
    // the user is one of theirs, read or not. Saved when stored.
    void ensure(std::string_view user, std::string_view key);

    // user's marker in key (0: none).
    std::int64_t marker(std::string_view user, std::string_view key) const;
    // Every marker of user.
    std::vector<read_marker> all(std::string_view user) const;

private:
    struct user_markers {
        std::uint32_t sessions = 0;
        bool stored = false;
        std::map<std::string, std::int64_t, std::less<>> seqs;
    };
    struct shard {
        mutable std::mutex mutex;
        std::unordered_map<std::string, user_markers> users;
    };
    shard& shard_for(std::string_view user) const;

    history_store& store_;
    mutable std::array<shard, 16> shards_;
};

}  // namespace parley::rooms
