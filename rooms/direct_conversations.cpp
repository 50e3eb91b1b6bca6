#include "rooms/direct_conversations.hpp"

#include "protocol/server_messages.hpp"

#include <functional>
#include <limits>

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

std::mutex& direct_conversations::lock_of(const std::string& key) {
    return locks_[std::hash<std::string>{}(key) % locks_.size()];
}

log_handle direct_conversations::open(const std::string& key, bool create) {
    // A name nobody wrote to must not make a log (and memory) just by being asked about.
    if (!create && store_.activity(key).last_seq == 0) {
        return {};
    }
    return store_.open(key);
}

direct_conversations::sent direct_conversations::send(std::string_view from, std::string_view to,
                                                      std::string_view text, std::int64_t ts) {
    const std::string key = key_of(from, to);
    std::lock_guard lock(lock_of(key));
    log_handle handle = open(key, true);
    room_log& log = *handle;
    std::int64_t seq = log.last_seq() + 1;
    protocol::shared_frame frame = protocol::encode_dm(from, to, text, ts, seq);
    log.append(seq, ts, frame);
    return {seq, std::move(frame)};
}

std::optional<direct_conversations::page> direct_conversations::history(std::string_view a, std::string_view b,
                                                                       std::optional<std::int64_t> before,
                                                                       std::optional<std::int64_t> after,
                                                                       std::size_t limit) {
    const std::string key = key_of(a, b);
    std::lock_guard lock(lock_of(key));
    log_handle log = open(key, false);
    if (!log) {
        return std::nullopt;
    }
    std::int64_t epoch = log->epoch();
    history_answer answer = log->query(before, after, limit);
    return page{std::move(log), epoch, std::move(answer)};
}

direct_conversations::page direct_conversations::stored_page(std::string_view a, std::string_view b,
                                                             std::optional<std::int64_t> before,
                                                             std::optional<std::int64_t> after, std::size_t limit) {
    constexpr std::int64_t open_end = std::numeric_limits<std::int64_t>::max();
    page p;
    // Only the name matters to such a store's reads; its log holds nothing, so no lock either.
    p.log = store_.open(key_of(a, b));
    p.epoch = p.log->epoch();
    p.answer.limit = limit;
    p.answer.stored = after ? stored_read{*after, open_end, limit, false}
                            : stored_read{0, before.value_or(open_end), limit, true};
    return p;
}

std::int64_t direct_conversations::last_seq(std::string_view a, std::string_view b) {
    const std::string key = key_of(a, b);
    std::lock_guard lock(lock_of(key));
    log_handle log = open(key, false);
    return log ? log->last_seq() : 0;
}

}  // namespace parley::rooms
