#pragma once

#include "rooms/history/room_log.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace parley::rooms {

// A use of a room's log, as history_store::open() hands it out: while any handle to a log lives
// (a room, a history read in flight, a direct-message conversation), the log stays in memory as
// it is. When the last one goes, the log is idle and its cache may evict it (log_cache).
// Copies share the use, like a shared_ptr. A handle must not outlive the store it came from.
// Thread: a handle is one object of one thread at a time; different handles to the same log may
// be copied and dropped on different threads. The log itself is as thread-safe as room_log.
class log_handle {
public:
    log_handle() noexcept = default;
    log_handle(const log_handle& other) noexcept : cache_(other.cache_), log_(other.log_) {
        if (log_ != nullptr) {
            // Another use is held, so the log is not idle and the cache is not looking at it.
            log_->uses_.fetch_add(1, std::memory_order_relaxed);
        }
    }
    log_handle(log_handle&& other) noexcept : cache_(other.cache_), log_(other.log_) {
        other.cache_ = nullptr;
        other.log_ = nullptr;
    }
    log_handle& operator=(log_handle other) noexcept {
        std::swap(cache_, other.cache_);
        std::swap(log_, other.log_);
        return *this;
    }
    ~log_handle() { reset(); }

    // Gives the use back (the log becomes idle when it was the last).
    void reset() noexcept;

    room_log* get() const noexcept { return log_; }
    room_log& operator*() const noexcept { return *log_; }
    room_log* operator->() const noexcept { return log_; }
    explicit operator bool() const noexcept { return log_ != nullptr; }

private:
    friend class log_cache;
    // Takes over a use the cache counted already.
    log_handle(log_cache* cache, room_log* log) noexcept : cache_(cache), log_(log) {}

    log_cache* cache_ = nullptr;
    room_log* log_ = nullptr;
};

// A store's logs in memory, by room name: those in use (some handle lives) and the idle ones,
// least recently used first. Idle logs stay while all logs together hold at most
// `budget_bytes` (room_log::memory_bytes(), an estimate, plus the store's outside_bytes());
// above it, the least recently used idle ones the store says are ready leave memory and are
// freed, down to low_mark(). A later open() makes the log
// again through the store (read back from its storage, or new). Logs in use are never evicted,
// however much they hold.
//
// The store decides, through its policy, how a log is made, when an idle log may go (the SQLite
// store: once everything it holds is written) and what it must do first. The memory store trims
// as logs become idle; the SQLite store trims from its writer thread (trim_when_idle false).
// Thread: every method from any thread; one mutex guards the map and the idle list, never held
// per message (appends only add to an atomic total).
class log_cache {
public:
    class policy {
    public:
        // Makes the log of a room that is not in memory: new, or read back from storage. Called
        // under the cache's lock; an exception propagates out of open().
        virtual std::unique_ptr<room_log> make(std::string_view name) = 0;
        // A log in memory is opened again (under the lock).
        virtual void reopened(room_log& /*log*/) {}
        // Whether an idle log may leave memory now (under the lock).
        virtual bool ready(const room_log& /*log*/) { return true; }
        // These idle logs leave memory when this returns (under the lock, least recently used
        // first); an exception keeps them all and propagates out of trim().
        virtual void evicting(const std::vector<room_log*>& /*logs*/) {}
        // Bytes the store holds for its logs outside them, counted against the same budget (the
        // SQLite store: SQLite's own heap, its page caches and statements). Any thread.
        virtual std::int64_t outside_bytes() const { return 0; }

    protected:
        ~policy() = default;
    };

    static constexpr std::size_t unlimited = static_cast<std::size_t>(-1);

    log_cache(policy& store, std::size_t budget_bytes, bool trim_when_idle);
    // Frees every log; no handle may be left.
    ~log_cache();
    log_cache(const log_cache&) = delete;
    log_cache& operator=(const log_cache&) = delete;

    // The room's log, made through the policy when it is not in memory.
    log_handle open(std::string_view name);

    // When the total is over the budget, evicts idle logs, least recently used first, until it
    // is at the low mark or no idle log is ready (at most 4096 at a time). Returns how many went.
    std::size_t trim();
    bool over_budget() const { return held_bytes() + policy_.outside_bytes() > budget_; }

    // Bytes all logs in memory hold (room_log::memory_bytes summed), and logs evicted so far.
    std::int64_t held_bytes() const { return held_.load(std::memory_order_relaxed); }
    // Of those, the bytes of idle logs (as they were when they became idle).
    std::int64_t idle_bytes() const { return idle_held_.load(std::memory_order_relaxed); }
    std::int64_t budget_bytes() const { return budget_; }
    // Where a trim stops once the total went over the budget: an eighth below it. The budget
    // bounds the memory the logs take from the system, and that is more than their bytes: the
    // allocator cannot give back pages that a surviving log shares with evicted ones, so after
    // many rooms came and went the heap holds about a tenth more than the logs (measured,
    // performance.md). Evicting in batches also keeps the least recently used order from being
    // walked for every new log.
    std::int64_t low_mark() const { return budget_ - budget_ / 8; }
    // Whether the room's log is in memory now (it may leave or come right after).
    bool contains(std::string_view name) const;
    std::uint64_t evictions() const { return evictions_.load(std::memory_order_relaxed); }
    // What the evicted logs held, summed since start.
    std::uint64_t evicted_bytes() const { return evicted_bytes_.load(std::memory_order_relaxed); }
    // Logs in memory, in use or idle.
    std::size_t size() const;
    // The activity of a log in memory, without opening it (an idle log stays where it is in the
    // least-recently-used order); nullopt when the log is not in memory.
    std::optional<log_activity> activity(std::string_view name) const;

private:
    friend class log_handle;
    struct name_hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
    };

    void release(room_log* log) noexcept;
    std::size_t trim_locked();
    void unlink_idle(room_log* log);

    policy& policy_;
    const std::int64_t budget_;
    const bool trim_when_idle_;
    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::unique_ptr<room_log>, name_hash, std::equal_to<>> logs_;
    room_log* idle_oldest_ = nullptr;
    room_log* idle_newest_ = nullptr;
    std::atomic<std::int64_t> held_{0};
    std::atomic<std::int64_t> idle_held_{0};  // written under mutex_, read without it
    std::atomic<std::uint64_t> evictions_{0};
    std::atomic<std::uint64_t> evicted_bytes_{0};
};

inline void log_handle::reset() noexcept {
    if (log_ != nullptr) {
        cache_->release(log_);
        log_ = nullptr;
        cache_ = nullptr;
    }
}

}  // namespace parley::rooms
