#include "rooms/read_marker_book.hpp"

#include <functional>

namespace parley::rooms {

read_marker_book::shard& read_marker_book::shard_for(std::string_view user) const {
    return shards_[std::hash<std::string_view>{}(user) % shards_.size()];
}

void read_marker_book::attach(std::string_view user, bool stored) {
    shard& s = shard_for(user);
    {
        std::lock_guard lock(s.mutex);
        auto it = s.users.find(std::string(user));
        if (it != s.users.end()) {
            ++it->second.sessions;
            return;
        }
    }
    // Read outside the lock (it may touch the disk); two first sessions racing both read, and
    // the second merges into what the first put.
    std::vector<read_marker> loaded;
    if (stored) {
        loaded = store_.read_markers(user);
    }
    std::lock_guard lock(s.mutex);
    user_markers& u = s.users[std::string(user)];
    ++u.sessions;
    u.stored = stored;
    for (read_marker& m : loaded) {
        auto [it, added] = u.seqs.emplace(std::move(m.key), m.seq);
        if (!added && it->second < m.seq) {
            it->second = m.seq;
        }
    }
}

void read_marker_book::detach(std::string_view user) {
    shard& s = shard_for(user);
    std::lock_guard lock(s.mutex);
    auto it = s.users.find(std::string(user));
    if (it != s.users.end() && --it->second.sessions == 0) {
        s.users.erase(it);
    }
}

std::optional<std::int64_t> read_marker_book::advance(std::string_view user, std::string_view key, std::int64_t seq) {
    shard& s = shard_for(user);
    std::lock_guard lock(s.mutex);
    auto it = s.users.find(std::string(user));
    if (it == s.users.end()) {
        return std::nullopt;  // no session of user is logged in here
    }
    user_markers& u = it->second;
    auto [marker, added] = u.seqs.emplace(std::string(key), seq);
    if (!added) {
        if (marker->second >= seq) {
            return std::nullopt;
        }
        marker->second = seq;
    }
    if (u.stored) {
        store_.save_marker(user, key, seq);
    }
    return seq;
}

void read_marker_book::ensure(std::string_view user, std::string_view key) {
    shard& s = shard_for(user);
    {
        std::lock_guard lock(s.mutex);
        if (auto it = s.users.find(std::string(user)); it != s.users.end()) {
            if (!it->second.seqs.emplace(std::string(key), 0).second) {
                return;  // known, so stored already
            }
        }
    }
    // Whether or not the user is online here: the store keeps the conversation for their next
    // login (callers only ensure in stored mode).
    store_.save_marker(user, key, 0);
}

std::int64_t read_marker_book::marker(std::string_view user, std::string_view key) const {
    shard& s = shard_for(user);
    std::lock_guard lock(s.mutex);
    auto it = s.users.find(std::string(user));
    if (it == s.users.end()) {
        return 0;
    }
    auto found = it->second.seqs.find(key);
    return found == it->second.seqs.end() ? 0 : found->second;
}

std::vector<read_marker> read_marker_book::all(std::string_view user) const {
    std::vector<read_marker> out;
    shard& s = shard_for(user);
    std::lock_guard lock(s.mutex);
    if (auto it = s.users.find(std::string(user)); it != s.users.end()) {
        out.reserve(it->second.seqs.size());
        for (const auto& [key, seq] : it->second.seqs) {
            out.push_back({key, seq});
        }
    }
    return out;
}

}  // namespace parley::rooms
