#pragma once

#include <cstdint>
#include <optional>

namespace parley::server {

// The daemon's own resource use, as the standard Prometheus `process_*` metrics report it.
// Each field is empty when it could not be read (no /proc, a limit that is unlimited, ...).
struct process_stats {
    std::optional<std::uint64_t> resident_memory_bytes;  // resident set size
    std::optional<double> cpu_seconds;                   // user + system CPU time
    std::optional<std::uint64_t> open_fds;               // file descriptors open now
    std::optional<std::uint64_t> max_fds;                // soft RLIMIT_NOFILE
    std::optional<double> start_time_seconds;            // process start, seconds since the Unix epoch
};

// Reads the current values from /proc/self, getrusage and getrlimit. Any thread; takes no lock
// and never throws: a value that cannot be read is left empty. Costs one directory listing of
// /proc/self/fd, so it grows with the number of open connections (a few ms at 100k).
process_stats read_process_stats();

}  // namespace parley::server
