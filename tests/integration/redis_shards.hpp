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
//
// With PARLEY_TEST_REDIS_CLUSTER=N (names "rcluster3."), N redis-servers started with
// --cluster-enabled and joined into one Redis Cluster of N masters (redis-cli --cluster create),
// which the nodes are given as seeds (cluster.mode = "redis-cluster"). The first is then the
// master serving the cluster's own keys (the slot of "{cluster}").
class redis_shards {
public:
    explicit redis_shards(redis_process::persistence kept);
    // A Redis Cluster of `masters` masters, each with `replicas` replicas (the servers after
    // the masters), whatever the environment says.
    redis_shards(redis_process::persistence kept, std::size_t masters, std::size_t replicas = 0);

    redis_process& first() { return *servers_.front(); }
    std::size_t count() const { return servers_.size(); }
    redis_process& at(std::size_t i) { return *servers_.at(i); }
    bool redis_cluster() const { return redis_cluster_; }
    // The [cluster] section's lines for these servers: "redis = ..." (one URL, or a list), and
    // for a Redis Cluster "mode = ...". Each line ends with a newline.
    std::string config_lines() const;
    // The server holding a key: standalone, a room's key ("parley:{pN}:room:...") on its shard
    // and any other on the first; on a Redis Cluster, the master serving the key's slot.
    redis_process& holding(const std::string& key);

private:
    // Joins the servers into one Redis Cluster and waits until it serves every slot.
    void create_cluster(std::size_t replicas = 0);
    std::vector<std::unique_ptr<redis_process>> servers_;
    bool redis_cluster_ = false;
};

}  // namespace parley::integration
