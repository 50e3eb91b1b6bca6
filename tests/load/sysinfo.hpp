#pragma once

// Process figures the load generator reports: a server's CPU time and resident memory from /proc,
// its own CPU time, and a monotonic clock.

#include <cstdint>
#include <optional>
#include <vector>

namespace parley::load {

// Nanoseconds on CLOCK_MONOTONIC.
std::uint64_t monotonic_ns();

// utime + stime of every thread of process pid, in seconds (from /proc/<pid>/stat).
std::optional<double> process_cpu_seconds(int pid);

// VmRSS of process pid in KiB (from /proc/<pid>/status).
std::optional<std::uint64_t> process_rss_kib(int pid);

// This process's user + system CPU seconds, all threads (getrusage).
double self_cpu_seconds();

// Per-core jiffies from /proc/stat: busy (everything but idle and iowait) and total.
struct core_times {
    std::uint64_t busy = 0;
    std::uint64_t softirq = 0;
    std::uint64_t total = 0;
};
std::vector<core_times> read_core_times();

// Fraction of each core that was busy between two readings (any process, interrupts included).
std::vector<double> core_busy(const std::vector<core_times>& before, const std::vector<core_times>& after);

// Raises the soft open-file limit as far as allowed (at most cap) and returns it.
std::uint64_t raise_fd_limit(std::uint64_t cap);

}  // namespace parley::load
