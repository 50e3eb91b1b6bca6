#pragma once

#include "config/redis_url.hpp"
#include "rooms/cluster/redis_link.hpp"
#include "server/cluster/redis_connection.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace parley::cluster {

class cluster_node;

// The cluster node's way to Redis: for each Redis server (shard) two redis_connections on one
// worker's loop (the cluster's thread), one for commands and scripts, one subscribed to the
// channels that live there (the cluster's own channel on the first shard, and the channels of
// the rooms the node feeds on theirs), and the node's heartbeat timer. Each command, script and
// subscription goes to the shard of its key (keys::shard_of_key). It loads the cluster's
// scripts on every connect, calls them by their SHA-1, tells the node when both connections of
// the first shard answer (on_redis_up) and when either is lost (on_redis_down), and likewise
// for each other shard (on_shard_up, on_shard_down), and hands it every message of every
// channel.
//
// Thread: post() from any thread; everything else on the executor's (the cluster's) thread,
// except construction and start(), which may run anywhere before the loop runs.
class redis_transport final : public redis_link {
public:
    // shards: one or more servers, in the order of cluster.redis (the same on every node).
    redis_transport(boost::asio::any_io_executor executor, std::vector<config::redis_endpoint> shards,
                    std::chrono::milliseconds heartbeat_interval);
    ~redis_transport() override;
    redis_transport(const redis_transport&) = delete;
    redis_transport& operator=(const redis_transport&) = delete;

    // Thread: any. Connects (and reconnects, with backoff, after every loss) on behalf of node,
    // which must outlive stop().
    void start(cluster_node& node);
    // Thread: the cluster's, or any once its loop has ended. Closes the connections and the
    // timer; the callbacks of commands still pending get nullopt.
    void stop();

    // ---- redis_link ----
    std::uint32_t shard_count() const override { return static_cast<std::uint32_t>(shards_.size()); }
    void post(std::function<void()> task) override;
    void command(std::span<const std::string_view> argv, redis_callback done) override;
    void script(std::string_view text, std::span<const std::string_view> keys, std::span<const std::string_view> args,
                redis_callback done) override;
    void subscribe(std::string_view channel) override;
    void unsubscribe(std::string_view channel) override;

private:
    struct shard {
        config::redis_endpoint endpoint;
        std::shared_ptr<redis_connection> commands;
        std::shared_ptr<redis_connection> subscriber;
        bool up = false;  // the node was told it is up, and not told it is down since
    };

    void connect();
    // Both connections of shard i answer.
    bool shard_connected(std::size_t i) const;
    // The shard a key or channel lives on.
    shard& shard_for(std::string_view key);
    // A connection of shard i came up or was lost: the first shard's state is the node's
    // (on_redis_up, on_redis_down), another's that of its rooms (on_shard_up, on_shard_down).
    void on_up(std::size_t i);
    void on_down(std::size_t i);
    void schedule_heartbeat();
    // A command that cannot be sent at all (no connection object): answered nullopt, later.
    void refuse(redis_callback done);

    boost::asio::any_io_executor executor_;
    std::vector<shard> shards_;
    std::chrono::milliseconds heartbeat_interval_;
    cluster_node* node_ = nullptr;
    bool connected_ = false;  // connect() made the connections
    std::unique_ptr<boost::asio::steady_timer> heartbeat_timer_;
    bool stopped_ = false;
    std::vector<std::string_view> argv_;  // an EVALSHA's arguments, its capacity kept between calls
};

}  // namespace parley::cluster
