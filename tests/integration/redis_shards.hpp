#pragma once

// The Redis servers a cluster test's nodes share, and where a room's keys live among them,
// computed here from docs/cluster.md without the daemon's code.

#include "redis_process.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace parley::integration {

// A room's partition (FNV-1a, 64 bits, of the name, modulo 128), and the server of `servers`
// holding a partition's rooms (the jump consistent hash of Lamping and Veach, keyed by the
// partition's number).
std::uint32_t partition_of(std::string_view room);
std::uint32_t shard_of(std::uint32_t partition, std::uint32_t servers);

// "parley:{pN}:room:ROOM" and a suffix (":seq", ":log", ":settings", ...).
std::string room_key(const std::string& room, const std::string& suffix);

// The first room named "<stem>-N" whose partition lives on server `shard` of `servers`.
std::string room_on_shard(const std::string& stem, std::uint32_t shard, std::uint32_t servers = 2);

// One redis-server, or as many as the environment's PARLEY_TEST_REDIS_SHARDS says: ctest runs the
// cluster tests a second time with 2 (their names start "shards2."), so that the same tests
// pass with the rooms spread over two servers. The first server holds the cluster's own data;
// a test that stops "Redis" stops the first, which cuts each node off as a whole.
class redis_shards {
public:
    explicit redis_shards(redis_process::persistence kept);

    redis_process& first() { return *servers_.front(); }
    std::size_t count() const { return servers_.size(); }
    redis_process& at(std::size_t i) { return *servers_.at(i); }
    // cluster.redis's TOML value: "redis://127.0.0.1:P" for one server, a list for several.
    std::string config_value() const;
    // The server holding a room's key ("parley:{pN}:room:..."); the first for any other key.
    redis_process& holding(const std::string& key);

private:
    std::vector<std::unique_ptr<redis_process>> servers_;
};

}  // namespace parley::integration
