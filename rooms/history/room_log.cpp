#include "rooms/history/room_log.hpp"
#include "rooms/history/unix_clock.hpp"

#include <algorithm>
#include <chrono>

namespace parley::rooms {

using protocol::shared_frame;

namespace {
// What memory_bytes() counts, an estimate of what freeing the log gives back. An empty log: the
// object and its store's entry (about 300 bytes with the store's per-room fields), and the
// deque's index and first block of 512 bytes, which libstdc++ allocates even for no entries.
constexpr std::int64_t empty_log_bytes = 1024;
// A message: its entry in the deque, and its frame (one allocation: reference count, header,
// payload) with the allocator's own overhead.
constexpr std::int64_t entry_overhead_bytes = static_cast<std::int64_t>(sizeof(log_entry)) + 32;

std::int64_t bytes_of(const shared_frame& frame) {
    return entry_overhead_bytes + static_cast<std::int64_t>(frame.size());
}
}  // namespace

room_log::room_log(std::int64_t epoch, std::int64_t last_seq, std::size_t memory_limit, std::int64_t max_age_ms)
    : epoch_(epoch), memory_limit_(memory_limit), max_age_ms_(max_age_ms), last_seq_(last_seq),
      bytes_(empty_log_bytes) {
    publish(last_seq, 0);
}

void room_log::count_bytes(std::int64_t change) {
    bytes_ += change;
    if (held_ != nullptr) {
        held_->fetch_add(change, std::memory_order_relaxed);
    }
}

std::int64_t room_log::first_retained_seq() const {
    return std::min(stored_first_.load(std::memory_order_acquire), memory_first_seq());
}

void room_log::preload(std::int64_t seq, std::int64_t ts, shared_frame message) {
    count_bytes(bytes_of(message));
    entries_.push_back({seq, ts, std::move(message)});
    last_seq_ = std::max(last_seq_, seq);
    publish(last_seq_, ts);
}

void room_log::reset(std::int64_t epoch, std::int64_t last_seq, std::vector<log_entry> newest,
                     std::int64_t stored_first) {
    epoch_ = epoch;
    last_seq_ = last_seq;
    std::int64_t change = 0;
    for (const auto& e : entries_) {
        change -= bytes_of(e.frame);
    }
    entries_.clear();
    for (auto& e : newest) {
        change += bytes_of(e.frame);
        entries_.push_back(std::move(e));
    }
    publish(last_seq, entries_.empty() ? 0 : entries_.back().ts);
    count_bytes(change);
    stored_first_.store(stored_first, std::memory_order_release);
}

void room_log::append(std::int64_t seq, std::int64_t ts, const shared_frame& message) {
    last_seq_ = seq;
    entries_.push_back({seq, ts, message});
    publish(seq, ts);
    stored(seq, ts, message);
    // One atomic add per message for the cache's total, whatever was dropped.
    std::int64_t change = bytes_of(message);
    std::int64_t durable = durable_seq_.load(std::memory_order_acquire);
    while (entries_.size() > memory_limit_ && entries_.front().seq <= durable) {
        change -= drop_oldest();
    }
    if (max_age_ms_ > 0) {
        while (!entries_.empty() && entries_.front().ts < ts - max_age_ms_ && entries_.front().seq <= durable) {
            change -= drop_oldest();
        }
    }
    count_bytes(change);
}

std::int64_t room_log::drop_oldest() {
    // The oldest frame was written a whole history ago and is far from the core. Dropping it
    // frees its memory (unless a queue still holds it), and the allocator hands that same memory
    // to the next frame encoded, whose bytes then go to cold lines: the next atomic operation (a
    // frame's count) waited for those stores, measured at 90 ns per say in 100 rooms of 10.
    // Fetching the freed lines for writing now, and the next oldest frame's count, moves those
    // misses off the message path.
    const char* freed = static_cast<const char*>(entries_.front().frame.identity());
    std::size_t freed_size = entries_.front().frame.size();
    std::int64_t freed_bytes = bytes_of(entries_.front().frame);
    entries_.pop_front();
    for (std::size_t offset = 0; offset < freed_size + 32; offset += 64) {
        __builtin_prefetch(freed - 16 + offset, 1, 3);
    }
    if (!entries_.empty()) {
        const char* oldest = static_cast<const char*>(entries_.front().frame.identity());
        __builtin_prefetch(oldest - 16, 1, 2);
        __builtin_prefetch(oldest, 1, 2);
    }
    return freed_bytes;
}

room_log::iterator room_log::live_begin() const {
    auto begin = entries_.begin();
    if (entries_.size() > memory_limit_) {
        // Beyond the limit only because they were not yet written when the last append came:
        // those written since count as gone from memory (append drops them next time), so a
        // read sees the same as after that append.
        auto excess = static_cast<std::ptrdiff_t>(entries_.size() - memory_limit_);
        std::int64_t durable = durable_seq_.load(std::memory_order_acquire);
        begin = std::upper_bound(begin, begin + excess, durable,
                                 [](std::int64_t seq, const log_entry& e) { return seq < e.seq; });
    }
    if (max_age_ms_ == 0) {
        return begin;
    }
    // Times grow with seq (up to clock steps), so the expired ones are a prefix, and a short one:
    // each append drops those that expired before it.
    std::int64_t cutoff = unix_millis() - max_age_ms_;
    return std::find_if(begin, entries_.end(), [cutoff](const log_entry& e) { return e.ts >= cutoff; });
}

room_log::iterator room_log::first_after(std::int64_t after) const {
    return std::upper_bound(live_begin(), entries_.end(), after,
                            [](std::int64_t seq, const log_entry& e) { return seq < e.seq; });
}

room_log::iterator room_log::find_live(std::int64_t seq) const {
    auto it = std::lower_bound(live_begin(), entries_.end(), seq,
                               [](const log_entry& e, std::int64_t s) { return e.seq < s; });
    return it != entries_.end() && it->seq == seq ? it : entries_.end();
}

std::optional<log_entry> room_log::entry(std::int64_t seq) const {
    auto it = find_live(seq);
    if (it == entries_.end()) {
        return std::nullopt;
    }
    return *it;
}

bool room_log::revise(std::int64_t seq, const shared_frame& frame) {
    auto it = find_live(seq);
    if (it == entries_.end()) {
        return false;
    }
    log_entry& e = entries_[static_cast<std::size_t>(it - entries_.cbegin())];
    std::int64_t change = bytes_of(frame) - bytes_of(e.frame);
    e.frame = frame;
    count_bytes(change);
    revised(e.seq, e.ts, e.frame);
    return true;
}

void room_log::revised(std::int64_t, std::int64_t, const shared_frame&) {}

std::int64_t room_log::memory_first_seq() const {
    auto it = live_begin();
    return it == entries_.end() ? last_seq_ + 1 : it->seq;
}

std::vector<shared_frame> room_log::before(std::int64_t before_seq, std::size_t limit) const {
    auto begin = live_begin();
    auto end = std::lower_bound(begin, entries_.end(), before_seq,
                                [](const log_entry& e, std::int64_t seq) { return e.seq < seq; });
    auto available = static_cast<std::size_t>(end - begin);
    begin = end - static_cast<std::ptrdiff_t>(std::min(limit, available));
    std::vector<shared_frame> out;
    out.reserve(static_cast<std::size_t>(end - begin));
    for (auto it = begin; it != end; ++it) {
        out.push_back(it->frame);
    }
    return out;
}

std::vector<shared_frame> room_log::after(std::int64_t after_seq, std::size_t limit) const {
    auto begin = first_after(after_seq);
    auto available = static_cast<std::size_t>(entries_.end() - begin);
    auto end = begin + static_cast<std::ptrdiff_t>(std::min(limit, available));
    std::vector<shared_frame> out;
    out.reserve(static_cast<std::size_t>(end - begin));
    for (auto it = begin; it != end; ++it) {
        out.push_back(it->frame);
    }
    return out;
}

bool room_log::recovers(std::int64_t after_seq, std::size_t limit) const {
    if (after_seq >= last_seq_) {
        return true;  // nothing after it
    }
    std::int64_t memory_first = memory_first_seq();
    // Compared without `after + 1`: a client may send any non-negative after, even INT64_MAX.
    if (after_seq < memory_first - 1) {
        return false;  // dropped by retention, or only in storage
    }
    return static_cast<std::size_t>(entries_.end() - first_after(after_seq)) <= limit;
}

history_answer room_log::query(std::optional<std::int64_t> before_seq, std::optional<std::int64_t> after_seq,
                               std::size_t limit) const {
    history_answer answer;
    answer.limit = limit;
    std::int64_t memory_first = memory_first_seq();
    std::int64_t stored_first = stored_first_.load(std::memory_order_acquire);
    if (after_seq) {
        answer.messages = after(*after_seq, limit);
        if (stored_first < memory_first && *after_seq < memory_first - 1 && limit > 0) {
            answer.stored = stored_read{*after_seq, memory_first, limit, false};
        }
        return answer;
    }
    std::int64_t below = before_seq ? *before_seq : last_seq_ + 1;
    answer.messages = before(below, limit);
    below = std::min(below, memory_first);
    if (answer.messages.size() < limit && stored_first < below) {
        answer.stored = stored_read{0, below, limit - answer.messages.size(), true};
    }
    return answer;
}

std::vector<shared_frame> join_answer(std::vector<shared_frame> stored, history_answer& answer) {
    if (stored.size() >= answer.limit) {
        stored.erase(stored.begin() + static_cast<std::ptrdiff_t>(answer.limit), stored.end());
        return stored;
    }
    auto take = static_cast<std::ptrdiff_t>(std::min(answer.limit - stored.size(), answer.messages.size()));
    stored.insert(stored.end(), std::make_move_iterator(answer.messages.begin()),
                  std::make_move_iterator(answer.messages.begin() + take));
    return stored;
}

}  // namespace parley::rooms
