#pragma once

#include "config/redis_url.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace parley::cluster {

// What a rebalance did: keys moved, keys left where they were because the server that holds
// their room now has a key of that name already (named in conflicts), and the first error that
// stopped it (empty when it ran to the end).
struct rebalance_outcome {
    std::uint64_t moved = 0;
    std::vector<std::string> conflicts;
    std::string error;
    bool ok() const { return error.empty() && conflicts.empty(); }
};

// `parleyd --cluster-rebalance`: after cluster.redis gained (or lost) a server, the rooms of
// the partitions that changed server (keys::shard_of_key) still have their keys on the old one.
// This moves every such key to the server that holds its room now, with Redis's MIGRATE (which
// copies a key and deletes it at the source in one step), scanning each server of `shards` in
// turn, and returns what it did. Run it with every node stopped: a node running meanwhile could
// write a moved room's keys anew on its new server. Running it again moves what is left (a
// room's keys move one by one, so an interrupted run may leave a room split).
//
// Thread: the caller's; it runs its own event loop until done or until `timeout` passes.
rebalance_outcome rebalance_shards(const std::vector<config::redis_endpoint>& shards,
                                   std::chrono::milliseconds timeout);

}  // namespace parley::cluster
