#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// How the cluster's data is split. Every room, direct conversation and user belongs to one of
// partition_count partitions, by a hash of its name that never changes; every key and channel of
// a partition carries the partition's hash tag ("{p17}"), so Redis Cluster puts them in one slot
// and any script touches one slot. Partitions map to Redis servers ("shards"): by a jump
// consistent hash over a list of standalone servers, or by the slot map of a Redis Cluster.
namespace parley::cluster {

inline constexpr std::uint32_t partition_count = 128;
// The Lua scripts that name partitioned keys themselves (cluster_scripts.hpp) compute the
// partition from the hash's low 7 bits, which Lua's numbers (doubles) hold exactly.
static_assert(partition_count == 128, "the scripts' partition function assumes 128 partitions");

// The partition of a room's name, a conversation's key or a user's name (FNV-1a, 64 bits).
std::uint32_t partition_of(std::string_view name);

// "{pN}": the hash tag of partition N, which Redis Cluster hashes instead of the whole key.
std::string partition_tag(std::uint32_t partition);

// Lamping and Veach's jump consistent hash: the bucket in [0, buckets) of key. When buckets
// grows by one, only about 1/buckets of the keys move, all to the new bucket.
std::uint32_t jump_hash(std::uint64_t key, std::uint32_t buckets);

// The shard of `shards` standalone servers that holds a partition's rooms (jump_hash).
inline std::uint32_t shard_of_partition(std::uint32_t partition, std::uint32_t shards) {
    return shards <= 1 ? 0 : jump_hash(partition, shards);
}

// Redis Cluster's slot of a key: CRC16 (XMODEM) of its hash tag when it has a non-empty one
// ("{...}"), else of the whole key, modulo 16384.
std::uint16_t key_slot(std::string_view key);

}  // namespace parley::cluster
