#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace parley::soak {

// One look at a process from /proc: what the soak compares before and after the hostile phase.
struct process_sample {
    std::uint64_t rss_kb = 0;   // VmRSS: resident memory, what an operator's graph shows
    std::uint64_t anon_kb = 0;  // RssAnon: the heap's share of it (no mapped files)
    std::uint64_t file_kb = 0;  // RssFile: mapped files, mostly the program's and libraries' code
    std::size_t open_fds = 0;   // entries of /proc/PID/fd
};

// nullopt when the process is gone or /proc cannot be read.
std::optional<process_sample> sample_process(pid_t pid);

// The median of each field over samples (each field on its own); zeros for none. A median of
// a few seconds of samples, not one sample, so a single allocation burst of the good clients'
// traffic does not decide the comparison.
process_sample median(std::vector<process_sample> samples);

}  // namespace parley::soak
