#include "redis_shards.hpp"

#include <algorithm>
#include <cstdlib>

namespace parley::integration {

std::uint32_t partition_of(std::string_view room) {
    std::uint64_t hash = 14695981039346656037ULL;
    for (const unsigned char c : room) {
        hash ^= c;
        hash *= 1099511628211ULL;
    }
    return static_cast<std::uint32_t>(hash % 128);
}

std::uint32_t shard_of(std::uint32_t partition, std::uint32_t servers) {
    std::uint64_t key = partition;
    std::int64_t bucket = -1;
    std::int64_t next = 0;
    while (next < static_cast<std::int64_t>(servers)) {
        bucket = next;
        key = key * 2862933555777941757ULL + 1;
        next = static_cast<std::int64_t>(static_cast<double>(bucket + 1) *
                                         (static_cast<double>(1LL << 31) / static_cast<double>((key >> 33) + 1)));
    }
    return static_cast<std::uint32_t>(bucket < 0 ? 0 : bucket);
}

std::string room_key(const std::string& room, const std::string& suffix) {
    return "parley:{p" + std::to_string(partition_of(room)) + "}:room:" + room + suffix;
}

std::string room_on_shard(const std::string& stem, std::uint32_t shard, std::uint32_t servers) {
    for (int n = 0;; ++n) {
        std::string name = stem + "-" + std::to_string(n);
        if (shard_of(partition_of(name), servers) == shard) {
            return name;
        }
    }
}

redis_shards::redis_shards(redis_process::persistence kept) {
    std::size_t count = 1;
    if (const char* wanted = std::getenv("PARLEY_TEST_REDIS_SHARDS"); wanted != nullptr) {
        count = std::max<std::size_t>(1, std::strtoul(wanted, nullptr, 10));
    }
    for (std::size_t i = 0; i < count; ++i) {
        servers_.push_back(std::make_unique<redis_process>(kept));
    }
}

std::string redis_shards::config_value() const {
    const auto url = [](const redis_process& r) { return "\"redis://127.0.0.1:" + std::to_string(r.port()) + "\""; };
    if (servers_.size() == 1) {
        return url(*servers_.front());
    }
    std::string list = "[";
    for (std::size_t i = 0; i < servers_.size(); ++i) {
        list += (i == 0 ? "" : ", ") + url(*servers_[i]);
    }
    return list + "]";
}

redis_process& redis_shards::holding(const std::string& key) {
    constexpr std::string_view start = "parley:{p";
    const std::size_t close = key.find("}:room:");
    if (servers_.size() == 1 || !key.starts_with(start) || close == std::string::npos) {
        return first();
    }
    const auto partition = static_cast<std::uint32_t>(std::stoul(key.substr(start.size(), close - start.size())));
    return *servers_[shard_of(partition, static_cast<std::uint32_t>(servers_.size()))];
}

}  // namespace parley::integration
