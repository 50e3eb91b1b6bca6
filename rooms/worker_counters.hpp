#pragma once

#include "protocol/error_code.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace parley::rooms {

// A counter with one writer (its worker thread) and any number of readers (a /metrics scrape
// on another worker). The writer does a relaxed load and store, not a read-modify-write: on
// x86 that is a plain add to memory with no lock prefix, as cheap as an ordinary integer, and
// the reader still sees a whole value (never a torn one). Only correct with ONE writer.
class local_counter {
public:
    void add(std::uint64_t n = 1) { value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
    void sub(std::uint64_t n = 1) { value_.store(value_.load(std::memory_order_relaxed) - n, std::memory_order_relaxed); }
    std::uint64_t get() const { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> value_{0};
};

// Upper bounds, in microseconds, of the fan-out time histogram buckets (+Inf is implied): the
// time from a room posting a broadcast to a worker having queued it on every local member.
inline constexpr std::array<std::uint64_t, 12> fanout_bucket_us = {10,   25,   50,    100,   250,    500,
                                                                   1000, 2500, 5000, 10000, 25000, 100000};

// Everything one worker counts. Written only by that worker's thread; summed over the workers
// when /metrics is scraped, so the per-message path takes no lock and shares no cache line.
struct alignas(64) worker_counters {
    // Connections (WebSocket after the upgrade).
    local_counter connections_open;    // gauge: add at open, sub at close
    local_counter connections_total;   // upgrades accepted
    // (The HTTP side before the upgrade is counted by server/http_counters.hpp.)

    // Traffic.
    local_counter messages_received;   // complete WebSocket text messages from clients
    local_counter frames_sent;         // frames fully written to clients (all kinds)
    local_counter bytes_received;
    local_counter bytes_sent;
    local_counter write_queue_bytes;   // gauge: bytes queued on this worker's connections

    // Chat.
    local_counter says;                // `say` requests accepted (one room message each)
    local_counter fanout_deliveries;   // room broadcast frames queued on members
    std::array<local_counter, protocol::error_code_count> errors;  // error replies by code
    local_counter slow_consumer_closes;
    local_counter idle_closes;         // closed for silence (idle timeout) or no login in time

    // Fan-out time histogram (see fanout_bucket_us): cumulative counts are built at scrape time.
    std::array<local_counter, fanout_bucket_us.size() + 1> fanout_buckets;  // last one: +Inf
    local_counter fanout_count;
    local_counter fanout_sum_us;

    void record_fanout(std::uint64_t us) {
        std::size_t i = 0;
        while (i < fanout_bucket_us.size() && us > fanout_bucket_us[i]) {
            ++i;
        }
        fanout_buckets[i].add();
        fanout_count.add();
        fanout_sum_us.add(us);
    }
};

}  // namespace parley::rooms
