#pragma once

#include <chrono>
#include <cstdint>

namespace parley::server {

// Gives the heap that evicted room logs leave behind back to the kernel.
//
// glibc returns freed memory to the system only from the top of a heap; the logs of a burst of
// rooms are freed all over it, so after clients invented many rooms resident memory would stay
// at the burst's peak although the logs are gone. malloc_trim(0) releases the free pages inside
// every arena. It walks each arena under that arena's lock (milliseconds for tens of megabytes),
// so it runs only when evicted logs freed at least `min_freed_bytes` since the last trim (or
// `quiet_freed_bytes` and no eviction since the previous tick: the burst is over), and at most
// once per `min_interval`. (Counting what was freed, not a fall of the total below its peak:
// under the budget the total stays at the budget while logs come and go.)
// Thread: one (worker 0's housekeeping tick).
class heap_return {
public:
    static constexpr std::uint64_t min_freed_bytes = 4 * 1024 * 1024;
    static constexpr std::uint64_t quiet_freed_bytes = 256 * 1024;
    static constexpr std::chrono::seconds min_interval{1};

    // Called with the bytes evicted logs held, summed since start (history_stats::
    // evicted_bytes); true when it trimmed.
    bool tick(std::uint64_t evicted_bytes, std::chrono::steady_clock::time_point now);

private:
    std::uint64_t trimmed_at_ = 0;    // evicted_bytes at the last trim
    std::uint64_t previous_tick_ = 0; // evicted_bytes at the previous tick
    std::chrono::steady_clock::time_point last_{};
};

}  // namespace parley::server
