#include "rooms/direct_conversations.hpp"

#include "protocol/server_messages.hpp"

#include <functional>

namespace parley::rooms {

std::string direct_conversations::key_of(std::string_view a, std::string_view b) {
    if (b < a) {
        std::swap(a, b);
    }
    std::string key = "dm:";
    key.append(a).append(":").append(b);
    return key;
}

std::string_view direct_conversations::other_of(std::string_view key, std::string_view user) {
    if (!is_conversation_key(key)) {
        return {};
    }
    std::string_view pair = key.substr(3);
    std::size_t colon = pair.find(':');
    if (colon == std::string_view::npos) {
        return {};
    }
    std::string_view first = pair.substr(0, colon);
    std::string_view second = pair.substr(colon + 1);
    if (first == user) {
        return second;
    }
    return second == user ? first : std::string_view{};
}

direct_conversations::conversation* direct_conversations::find(const std::string& key, bool create) {
    shard& s = shards_[std::hash<std::string>{}(key) % shards_.size()];
    std::lock_guard lock(s.mutex);
    auto it = s.conversations.find(key);
    if (it != s.conversations.end()) {
        return it->second.get();
    }
    // A name nobody wrote to must not make a log (and memory) just by being asked about.
    if (!create && store_.activity(key).last_seq == 0) {
        return nullptr;
    }
    auto made = std::make_unique<conversation>();
    made->log = store_.open(key);
    return s.conversations.emplace(key, std::move(made)).first->second.get();
}

direct_conversations::sent direct_conversations::send(std::string_view from, std::string_view to,
                                                      std::string_view text, std::int64_t ts) {
    conversation& c = *find(key_of(from, to), true);
    std::lock_guard lock(c.mutex);
    std::int64_t seq = c.log->last_seq() + 1;
    protocol::shared_frame frame = protocol::encode_dm(from, to, text, ts, seq);
    c.log->append(seq, ts, frame);
    return {seq, std::move(frame)};
}

std::optional<direct_conversations::page> direct_conversations::history(std::string_view a, std::string_view b,
                                                                       std::optional<std::int64_t> before,
                                                                       std::optional<std::int64_t> after,
                                                                       std::size_t limit) {
    conversation* c = find(key_of(a, b), false);
    if (c == nullptr) {
        return std::nullopt;
    }
    std::lock_guard lock(c->mutex);
    return page{c->log, c->log->query(before, after, limit)};
}

std::int64_t direct_conversations::last_seq(std::string_view a, std::string_view b) {
    conversation* c = find(key_of(a, b), false);
    if (c == nullptr) {
        return 0;
    }
    std::lock_guard lock(c->mutex);
    return c->log->last_seq();
}

}  // namespace parley::rooms
