#include "sysinfo.hpp"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace parley::load {

std::uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::optional<double> process_cpu_seconds(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!in || !std::getline(in, line)) {
        return std::nullopt;
    }
    // The command name is in parentheses and may hold spaces: fields count from the last ')'.
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos) {
        return std::nullopt;
    }
    std::istringstream rest(line.substr(close + 1));
    std::string field;
    unsigned long long utime = 0;
    unsigned long long stime = 0;
    // Field 3 (state) is the first after ')'; utime and stime are fields 14 and 15.
    for (int i = 3; i <= 15 && (rest >> field); ++i) {
        if (i == 14) {
            utime = std::strtoull(field.c_str(), nullptr, 10);
        } else if (i == 15) {
            stime = std::strtoull(field.c_str(), nullptr, 10);
            const long ticks = sysconf(_SC_CLK_TCK);
            return static_cast<double>(utime + stime) / static_cast<double>(ticks > 0 ? ticks : 100);
        }
    }
    return std::nullopt;
}

std::optional<std::uint64_t> process_rss_kib(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    // Bounded by the file: /proc/<pid>/status has a few dozen lines.
    while (in && std::getline(in, line)) {
        if (line.rfind("VmRSS:", 0) == 0) {
            return std::strtoull(line.c_str() + 6, nullptr, 10);
        }
    }
    return std::nullopt;
}

double self_cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
    return secs(ru.ru_utime) + secs(ru.ru_stime);
}

std::vector<core_times> read_core_times() {
    std::vector<core_times> cores;
    std::ifstream in("/proc/stat");
    std::string line;
    // Bounded by the file: one line per core plus a few totals.
    while (in && std::getline(in, line)) {
        if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') {
            continue;
        }
        std::istringstream fields(line);
        std::string name;
        fields >> name;
        core_times t;
        unsigned long long v = 0;
        // user nice system idle iowait irq softirq steal (guest times are already in user)
        for (int i = 0; i < 8 && (fields >> v); ++i) {
            t.total += v;
            if (i != 3 && i != 4) {
                t.busy += v;
            }
            if (i == 6) {
                t.softirq = v;
            }
        }
        cores.push_back(t);
    }
    return cores;
}

std::vector<double> core_busy(const std::vector<core_times>& before, const std::vector<core_times>& after) {
    std::vector<double> busy;
    for (std::size_t i = 0; i < before.size() && i < after.size(); ++i) {
        const std::uint64_t total = after[i].total - before[i].total;
        busy.push_back(total == 0 ? 0.0 : static_cast<double>(after[i].busy - before[i].busy) / static_cast<double>(total));
    }
    return busy;
}

std::uint64_t raise_fd_limit(std::uint64_t cap) {
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        return 1024;
    }
    const rlim_t want = std::min<rlim_t>(rl.rlim_max, static_cast<rlim_t>(cap));
    if (rl.rlim_cur < want) {
        rl.rlim_cur = want;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    return std::min<std::uint64_t>(rl.rlim_cur, cap);
}

}  // namespace parley::load
