#pragma once

#include "protocol/shared_frame.hpp"
#include "rooms/history/history_store.hpp"

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace parley::rooms {

// The stored direct conversations (token mode): one per pair of users, numbered and kept like a
// room's messages, in the same history store under a key no room can have ("dm:" and both
// names, sorted; ':' is not a name character), so retention, the crash bound and paging are
// the room's own. A conversation's frames are `dm` objects with their seq.
// Thread: every method may be called from any thread.
class direct_conversations {
public:
    explicit direct_conversations(history_store& store) : store_(store) {}

    // The key of the conversation of a and b (either order).
    static std::string key_of(std::string_view a, std::string_view b);
    // The other user of a conversation key, seen from `user`; empty when key is not a
    // conversation of user's.
    static std::string_view other_of(std::string_view key, std::string_view user);
    static bool is_conversation_key(std::string_view key) { return key.substr(0, 3) == "dm:"; }

    struct sent {
        std::int64_t seq = 0;
        protocol::shared_frame frame;
    };
    // Numbers the message from -> to, encodes it once and stores it.
    sent send(std::string_view from, std::string_view to, std::string_view text, std::int64_t ts);

    // A page of the conversation of a and b, as history_store::complete takes it; the log is
    // where the rest of the answer is read, held in memory while the page lives. nullopt when
    // the two never wrote to each other.
    struct page {
        log_handle log;
        std::int64_t epoch = 0;
        history_answer answer;
    };
    std::optional<page> history(std::string_view a, std::string_view b, std::optional<std::int64_t> before,
                                std::optional<std::int64_t> after, std::size_t limit);

    // The same page read wholly from storage, for a store that numbers and keeps conversations
    // elsewhere: a node of a cluster, whose conversations are in Redis and whose logs here hold
    // none of their messages (stream_history_store). A conversation that does not exist reads
    // as empty.
    page stored_page(std::string_view a, std::string_view b, std::optional<std::int64_t> before,
                     std::optional<std::int64_t> after, std::size_t limit);

    // The conversation's last seq (0 when there is none).
    std::int64_t last_seq(std::string_view a, std::string_view b);

private:
    // A room_log is not synchronized: its owner calls it under a lock. Conversations are many
    // and mostly idle, so they share a fixed set of locks (by key) instead of owning one each:
    // this class holds no memory per conversation. Each operation holds a handle to the log for
    // its own length only, so an idle conversation's log may leave memory (history_store's
    // budget) and is read back from the store on the next use.
    std::mutex& lock_of(const std::string& key);
    // The conversation's log; an empty handle, without making one, when `create` is false and
    // the store has nothing under the key.
    log_handle open(const std::string& key, bool create);

    history_store& store_;
    std::array<std::mutex, 64> locks_;
};

}  // namespace parley::rooms
