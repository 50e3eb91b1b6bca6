#include "redis_shards.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <thread>

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
    if (const char* wanted = std::getenv("PARLEY_TEST_REDIS_CLUSTER"); wanted != nullptr) {
        count = std::max<std::size_t>(1, std::strtoul(wanted, nullptr, 10));
        redis_cluster_ = true;
    }
    for (std::size_t i = 0; i < count; ++i) {
        servers_.push_back(std::make_unique<redis_process>(kept, redis_cluster_));
    }
    if (redis_cluster_) {
        create_cluster();
    }
}

redis_shards::redis_shards(redis_process::persistence kept, std::size_t masters, std::size_t replicas)
    : redis_cluster_(true) {
    for (std::size_t i = 0; i < masters * (1 + replicas); ++i) {
        servers_.push_back(std::make_unique<redis_process>(kept, true));
    }
    create_cluster(replicas);
}

void redis_shards::create_cluster(std::size_t replicas) {
    std::string command = "redis-cli --cluster create";
    for (const auto& server : servers_) {
        command += " 127.0.0.1:" + std::to_string(server->port());
    }
    command += " --cluster-replicas " + std::to_string(replicas) + " --cluster-yes > /dev/null 2>&1";
    if (std::system(command.c_str()) != 0) {
        throw std::runtime_error("redis-cli --cluster create failed; the first server's log:\n" +
                                 servers_.front()->log_tail());
    }
    // Every master must see the whole cluster serving every slot before a node may use it.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
        const bool ready = std::all_of(servers_.begin(), servers_.end(), [](const auto& server) {
            return server->command_text({"CLUSTER", "INFO"}).find("cluster_state:ok") != std::string::npos;
        });
        if (ready) {
            break;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            throw std::runtime_error("the Redis Cluster did not reach cluster_state:ok within 20 s");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // The master of the cluster's own keys goes first, as the nodes see it.
    redis_process& own = holding("parley:{cluster}:epoch");
    const auto it = std::find_if(servers_.begin(), servers_.end(), [&](const auto& s) { return s.get() == &own; });
    std::iter_swap(servers_.begin(), it);
}

std::string redis_shards::config_lines() const {
    const auto url = [](const redis_process& r) { return "\"redis://127.0.0.1:" + std::to_string(r.port()) + "\""; };
    std::string value;
    if (servers_.size() == 1) {
        value = url(*servers_.front());
    } else {
        value = "[";
        for (std::size_t i = 0; i < servers_.size(); ++i) {
            value += (i == 0 ? "" : ", ") + url(*servers_[i]);
        }
        value += "]";
    }
    return "redis = " + value + "\n" + (redis_cluster_ ? "mode = \"redis-cluster\"\n" : "");
}

namespace {

// The slots a Redis Cluster member serves, from its own line of CLUSTER NODES ("... myself,master
// - 0 0 1 connected 0-5460 7000"); an importing or migrating marker ("[...]") is not served.
bool serves_slot(const std::string& nodes, long slot) {
    std::istringstream lines(nodes);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.find("myself") == std::string::npos) {
            continue;
        }
        std::istringstream fields(line);
        std::string field;
        for (int i = 0; fields >> field; ++i) {
            if (i < 8 || field.starts_with("[")) {
                continue;
            }
            const std::size_t dash = field.find('-');
            const long first = std::stol(field.substr(0, dash));
            const long last = dash == std::string::npos ? first : std::stol(field.substr(dash + 1));
            if (slot >= first && slot <= last) {
                return true;
            }
        }
    }
    return false;
}

}  // namespace

redis_process& redis_shards::holding(const std::string& key) {
    if (redis_cluster_) {
        const auto asked = std::find_if(servers_.begin(), servers_.end(), [](const auto& s) { return s->running(); });
        const std::string slot_text =
            asked == servers_.end() ? std::string() : (*asked)->command_text({"CLUSTER", "KEYSLOT", key});
        if (slot_text.empty()) {
            return first();
        }
        const long slot = std::stol(slot_text);
        for (const auto& server : servers_) {
            if (server->running() && serves_slot(server->command_text({"CLUSTER", "NODES"}), slot)) {
                return *server;
            }
        }
        return first();
    }
    constexpr std::string_view start = "parley:{p";
    const std::size_t close = key.find("}:room:");
    if (servers_.size() == 1 || !key.starts_with(start) || close == std::string::npos) {
        return first();
    }
    const auto partition = static_cast<std::uint32_t>(std::stoul(key.substr(start.size(), close - start.size())));
    return *servers_[shard_of(partition, static_cast<std::uint32_t>(servers_.size()))];
}

}  // namespace parley::integration
