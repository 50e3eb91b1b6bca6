#pragma once

#include "rooms/cluster/redis_reply.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// A Redis Cluster's slot map, read from its answer to CLUSTER SLOTS, without sockets:
// server/cluster/redis_transport asks for it and follows it.
namespace parley::cluster {

inline constexpr std::uint32_t slot_count = 16384;

struct slot_map {
    struct master {
        std::string host;
        std::uint16_t port = 0;
    };
    // The masters serving slots. The first is the one serving the cluster's own keys (the slot
    // of "{cluster}", cluster_keys.hpp), so that the transport's first shard is what it is on
    // standalone servers; the others follow in the order of the first slot each serves.
    std::vector<master> masters;
    // Per slot (slot_count of them), the index in `masters` of the master serving it.
    std::vector<std::uint16_t> owner;
};

// Reads CLUSTER SLOTS's answer: an array of ranges [first slot, last slot, [host, port, id,
// ...], replicas...]. A master announced without a host ("" or "?", Redis's way of saying it
// does not know its own address) gets `asked_host`, the host the question went to. nullopt when
// the answer is not such an array or leaves a slot unserved (a cluster still being set up, or
// one with a master down and no replica to take over); `why` then says which.
std::optional<slot_map> read_cluster_slots(const redis_reply& answer, const std::string& asked_host, std::string& why);

}  // namespace parley::cluster
