#include "server/process_stats.hpp"

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace parley::server {
namespace {

// Taken when the program is loaded: the start time when /proc cannot tell it.
const double load_time_seconds =
    std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();

// /proc files report a size of 0, so read until end of file rather than by length.
std::optional<std::string> read_file(const char* path) {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return std::nullopt;
    }
    std::string text;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            ::close(fd);
            return std::nullopt;
        }
        if (n == 0) {
            break;
        }
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return text;
}

template <typename T>
std::optional<T> parse_number(std::string_view s) {
    T value{};
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc{} || end == s.data()) {
        return std::nullopt;
    }
    return value;
}

// The n-th (0-based) space-separated token of s.
std::string_view token(std::string_view s, std::size_t n) {
    std::size_t pos = 0;
    for (;;) {
        pos = s.find_first_not_of(' ', pos);
        if (pos == std::string_view::npos) {
            return {};
        }
        std::size_t end = s.find(' ', pos);
        if (end == std::string_view::npos) {
            end = s.size();
        }
        if (n == 0) {
            return s.substr(pos, end - pos);
        }
        --n;
        pos = end;
    }
}

std::optional<std::uint64_t> resident_memory() {
    // statm: size resident shared text lib data dt, in pages.
    auto statm = read_file("/proc/self/statm");
    long page = ::sysconf(_SC_PAGESIZE);
    if (!statm || page <= 0) {
        return std::nullopt;
    }
    auto pages = parse_number<std::uint64_t>(token(*statm, 1));
    if (!pages) {
        return std::nullopt;
    }
    return *pages * static_cast<std::uint64_t>(page);
}

std::optional<double> cpu_seconds() {
    rusage usage{};
    if (::getrusage(RUSAGE_SELF, &usage) != 0) {
        return std::nullopt;
    }
    auto seconds = [](const timeval& tv) {
        return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

std::optional<std::uint64_t> open_fds() {
    DIR* dir = ::opendir("/proc/self/fd");
    if (dir == nullptr) {
        return std::nullopt;
    }
    // The listing holds a descriptor of its own; it is not one of the daemon's.
    std::string own = std::to_string(::dirfd(dir));
    std::uint64_t count = 0;
    while (const dirent* entry = ::readdir(dir)) {
        std::string_view name = entry->d_name;
        if (name == "." || name == ".." || name == own) {
            continue;
        }
        ++count;
    }
    ::closedir(dir);
    return count;
}

std::optional<std::uint64_t> max_fds() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(limit.rlim_cur);
}

// starttime (field 22 of /proc/self/stat, clock ticks after boot) plus btime from /proc/stat.
std::optional<double> start_time_from_proc() {
    auto stat = read_file("/proc/self/stat");
    auto system = read_file("/proc/stat");
    long ticks_per_second = ::sysconf(_SC_CLK_TCK);
    if (!stat || !system || ticks_per_second <= 0) {
        return std::nullopt;
    }
    // Field 2 is the command name in parentheses and may itself hold spaces or ')'; the fields
    // after the last ')' start with field 3.
    std::size_t close = stat->rfind(')');
    if (close == std::string::npos) {
        return std::nullopt;
    }
    auto start_ticks = parse_number<std::uint64_t>(token(std::string_view(*stat).substr(close + 1), 22 - 3));
    std::size_t btime_at = system->find("\nbtime ");
    if (!start_ticks || btime_at == std::string::npos) {
        return std::nullopt;
    }
    auto boot = parse_number<std::uint64_t>(token(std::string_view(*system).substr(btime_at + 7), 0));
    if (!boot) {
        return std::nullopt;
    }
    return static_cast<double>(*boot) + static_cast<double>(*start_ticks) / static_cast<double>(ticks_per_second);
}

}  // namespace

process_stats read_process_stats() {
    process_stats s;
    s.resident_memory_bytes = resident_memory();
    s.cpu_seconds = cpu_seconds();
    s.open_fds = open_fds();
    s.max_fds = max_fds();
    s.start_time_seconds = start_time_from_proc();
    if (!s.start_time_seconds) {
        s.start_time_seconds = load_time_seconds;
    }
    return s;
}

}  // namespace parley::server
