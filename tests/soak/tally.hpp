#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace parley::soak {

// Counts of what each hostile behaviour did and what the server answered, keyed
// "behaviour outcome" ("bad_frames close_1002"). Thread: any; a mutex guards the map (hostile
// rounds count a few hundred times a second at most).
class tally {
public:
    void add(std::string_view behaviour, std::string_view outcome, std::uint64_t n = 1);
    std::uint64_t get(std::string_view behaviour, std::string_view outcome) const;
    // Sum over every outcome of behaviour whose name starts with prefix.
    std::uint64_t sum(std::string_view behaviour, std::string_view prefix) const;
    std::map<std::string, std::uint64_t, std::less<>> snapshot() const;

    // Keeps the first text noted for behaviour (the first exception of a round, say), so the
    // report can show why without logging every repetition.
    void note_first(std::string_view behaviour, std::string_view text);
    std::map<std::string, std::string, std::less<>> notes() const;

private:
    static std::string key(std::string_view behaviour, std::string_view outcome);

    mutable std::mutex mutex_;
    std::map<std::string, std::uint64_t, std::less<>> counts_;
    std::map<std::string, std::string, std::less<>> notes_;
};

}  // namespace parley::soak
