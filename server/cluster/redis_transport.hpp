#pragma once

#include "config/redis_url.hpp"
#include "rooms/cluster/redis_link.hpp"
#include "server/cluster/redis_connection.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
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
// On a Redis Cluster (redis_cluster), the servers given are seeds: the transport asks one for the
// slot map (CLUSTER SLOTS), keeps the two connections for each master it names, the first shard
// being the master of the cluster's own slot, and routes by slot; rooms' channels are sharded
// channels (SSUBSCRIBE on the master of their slot). A sign that the map changed (MOVED, ASK,
// CLUSTERDOWN or TRYAGAIN in an answer, a sharded channel dropped by Redis, a lost connection)
// is local when it comes from a master other than the first: that master's connections close
// (pending commands get nullopt), the node hears that shard is down (its rooms detach), and the
// map is read again. Every master that lost or gained slots in the new map is taken down the
// same way before the map is followed (a new master gets a shard index of its own, a master
// gone from the map keeps its index unused), and each is told up again once it answers, its
// rooms resyncing under the new map. So a failover or a slot migration among the other masters
// is survived as the loss of one standalone shard is. A sign from the first master, a change
// that touches it, or one before the node was first up resets the whole: every connection
// closes, the node hears that Redis is down, and it hears Redis is up once every master answers.
//
// Thread: post() from any thread; everything else on the executor's (the cluster's) thread,
// except construction and start(), which may run anywhere before the loop runs.
struct slot_map;

class redis_transport final : public redis_link {
public:
    // shards: one or more servers, in the order of cluster.redis (the same on every node); on a
    // Redis Cluster (redis_cluster), seeds of it.
    redis_transport(boost::asio::any_io_executor executor, std::vector<config::redis_endpoint> shards,
                    std::chrono::milliseconds heartbeat_interval, bool redis_cluster = false);
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
    std::uint32_t shard_of(std::string_view key) const override;
    bool scripts_per_slot() const override { return redis_cluster_; }
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
        // Redis Cluster only: the node was told this shard is down for a change of the slot map
        // (until the shard answers under the new map), or its master left the map (for good).
        bool held = false;
        bool gone = false;
    };

    void connect();
    // Opens the connections of shards_ (standalone servers, or the masters of the slot map).
    void connect_shards();
    // Opens shard i's two connections (closing any it had), subscribed to its channels.
    void connect_shard(std::size_t i);
    // Closes shard i's connections (their pending commands get nullopt, later).
    void close_shard(std::size_t i);
    // ---- Redis Cluster (redis_transport_cluster.cpp) ----
    // Asks the seeds and the masters last known for the slot map; connect_shards() once one answers.
    void discover();
    void on_slot_map(const redis_reply& answer, const std::string& asked_host);
    // Follows a new map after a local change (see above); false when it touches the first shard.
    bool follow_map_locally(const slot_map& map, const std::string& password);
    // Something says the slot map changed (see above), seen on shard `from` when known: that
    // shard, or everything, is reset and the map read again.
    void topology_changed(std::string_view why, std::optional<std::size_t> from = std::nullopt);
    // Every connection closes and the node is told Redis is down; the next map replaces the whole.
    void reset_all();
    // The node is told shard i is down and its connections close, for a change of the map.
    void hold_shard(std::size_t i);
    // Reads the map again after a while (backing off), unless a read is under way.
    void schedule_discover();
    // Waits a while for the masters just connected; those not answering by then are lost again.
    void expect_masters();
    // A command's callback that watches its answer for a redirection (a Redis Cluster only).
    redis_callback watching(redis_callback done, std::size_t from);
    void close_probes();
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

    // Redis Cluster mode.
    bool redis_cluster_ = false;
    std::vector<config::redis_endpoint> seeds_;
    std::vector<std::uint16_t> slot_owner_;  // per slot: its master's index in shards_
    std::vector<std::shared_ptr<redis_connection>> probes_;  // asking for the slot map
    std::unique_ptr<boost::asio::steady_timer> rediscover_timer_;
    std::chrono::milliseconds rediscover_delay_{100};
    bool resetting_ = false;    // between a topology change and the next slot map
    bool full_reset_ = true;    // the next map replaces the whole (not a local change)
    bool told_up_ = false;      // the node was told Redis is up, and not told it is down since
    std::set<std::string, std::less<>> room_channels_;  // the rooms' and users' channels the node wants
};

}  // namespace parley::cluster
