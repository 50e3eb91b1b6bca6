#include "cluster_nodes.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <stdexcept>

namespace parley::integration {

std::unique_ptr<daemon_process> start_cluster_node(const std::string& id, const std::string& config) {
    auto node = std::make_unique<daemon_process>(relaxed_rate_args(), config);
    if (!node->wait_for_line("cluster: node " + id + " in sync", 0, milliseconds(15000))) {
        throw std::runtime_error(id + " did not get in sync:\n" + node->tail(30));
    }
    return node;
}

void stop_cluster_nodes(std::map<std::string, std::unique_ptr<daemon_process>>& nodes) {
    for (auto& [id, node] : nodes) {
        if (!node) {
            continue;
        }
        if (node->running()) {
            const exit_status status = node->stop();
            EXPECT_TRUE(status.exited && status.code == 0) << id << " on SIGTERM: " << status.describe();
        }
        if (::testing::Test::HasFailure()) {
            std::cerr << "---- " << id << " (last lines):\n" << node->tail(40);
        }
    }
}

}  // namespace parley::integration
