#pragma once

// Starting and stopping the parleyd nodes of a cluster test.

#include "daemon.hpp"

#include <map>
#include <memory>
#include <string>

namespace parley::integration {

// Starts parleyd as cluster node `id` with config (a TOML text naming the node and its Redis),
// and waits until the node is in sync with the cluster. Throws, with the end of the node's log,
// when it is not within 15 s.
std::unique_ptr<daemon_process> start_cluster_node(const std::string& id, const std::string& config);

// Stops every node still running: each must exit 0 on SIGTERM. When the test has failed, prints
// the end of each node's log.
void stop_cluster_nodes(std::map<std::string, std::unique_ptr<daemon_process>>& nodes);

}  // namespace parley::integration
