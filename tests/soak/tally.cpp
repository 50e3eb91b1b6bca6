#include "tally.hpp"

namespace parley::soak {

std::string tally::key(std::string_view behaviour, std::string_view outcome) {
    std::string k(behaviour);
    k.push_back(' ');
    k.append(outcome);
    return k;
}

void tally::add(std::string_view behaviour, std::string_view outcome, std::uint64_t n) {
    const std::string k = key(behaviour, outcome);
    std::lock_guard lock(mutex_);
    counts_[k] += n;
}

std::uint64_t tally::get(std::string_view behaviour, std::string_view outcome) const {
    const std::string k = key(behaviour, outcome);
    std::lock_guard lock(mutex_);
    auto it = counts_.find(k);
    return it == counts_.end() ? 0 : it->second;
}

std::uint64_t tally::sum(std::string_view behaviour, std::string_view prefix) const {
    const std::string first = key(behaviour, prefix);
    std::lock_guard lock(mutex_);
    std::uint64_t total = 0;
    for (auto it = counts_.lower_bound(first); it != counts_.end() && it->first.starts_with(first); ++it) {
        total += it->second;
    }
    return total;
}

std::map<std::string, std::uint64_t, std::less<>> tally::snapshot() const {
    std::lock_guard lock(mutex_);
    return counts_;
}

void tally::note_first(std::string_view behaviour, std::string_view text) {
    std::lock_guard lock(mutex_);
    notes_.try_emplace(std::string(behaviour), text);
}

std::map<std::string, std::string, std::less<>> tally::notes() const {
    std::lock_guard lock(mutex_);
    return notes_;
}

}  // namespace parley::soak
