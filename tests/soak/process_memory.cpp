#include "process_memory.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

namespace parley::soak {

namespace {

// The number in a /proc/PID/status line "Name:   1234 kB".
std::uint64_t kb_value(const std::string& line) {
    std::uint64_t value = 0;
    for (char c : line) {
        if (c >= '0' && c <= '9') {
            value = value * 10 + static_cast<std::uint64_t>(c - '0');
        }
    }
    return value;
}

template <typename T>
T median_of(std::vector<T> values) {
    if (values.empty()) {
        return T{};
    }
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

}  // namespace

std::optional<process_sample> sample_process(pid_t pid) {
    const std::string dir = "/proc/" + std::to_string(pid);
    std::ifstream status(dir + "/status");
    if (!status) {
        return std::nullopt;
    }
    process_sample s;
    bool found = false;
    for (std::string line; std::getline(status, line);) {
        if (line.starts_with("VmRSS:")) {
            s.rss_kb = kb_value(line);
            found = true;
        } else if (line.starts_with("RssAnon:")) {
            s.anon_kb = kb_value(line);
        } else if (line.starts_with("RssFile:")) {
            s.file_kb = kb_value(line);
        }
    }
    if (!found) {
        return std::nullopt;  // a zombie has no VmRSS line
    }
    std::error_code ec;
    const std::filesystem::directory_iterator end;
    for (auto it = std::filesystem::directory_iterator(dir + "/fd", ec); !ec && it != end; it.increment(ec)) {
        ++s.open_fds;
    }
    if (ec) {
        return std::nullopt;
    }
    return s;
}

process_sample median(std::vector<process_sample> samples) {
    std::vector<std::uint64_t> rss, anon, file;
    std::vector<std::size_t> fds;
    for (const process_sample& s : samples) {
        rss.push_back(s.rss_kb);
        anon.push_back(s.anon_kb);
        file.push_back(s.file_kb);
        fds.push_back(s.open_fds);
    }
    return {median_of(rss), median_of(anon), median_of(file), median_of(fds)};
}

}  // namespace parley::soak
