#pragma once

#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/redis_reply.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>

namespace parley::cluster {

// The answer to one command or script: the reply, or nullopt when it failed on this side (it
// could not be sent, or the connection was lost before its answer came). Redis's own errors
// arrive as a reply of kind error.
using redis_callback = std::function<void(std::optional<redis_reply> reply)>;

// What the cluster's logic (cluster_node) needs of Redis: send a command or a script and hear
// back once, and run a task on the cluster's thread. server/ implements it over RESP sockets on an
// Asio loop (redis_transport); the unit tests implement it with a queue the test answers.
//
// Failure contract: every command's and script's callback runs exactly once, on the cluster's
// thread, never inside the call that sent it: with Redis's reply, or with nullopt when the
// command could not be sent (not connected, stopped) or the connection was lost before the
// answer. So nothing waiting on Redis (a client's history page, a room catching up) waits
// forever. The order of callbacks is the order of the calls (of those to one shard).
//
// Connection state reaches the node the other way, through its on_redis_up, on_redis_down and
// on_channel_message (see cluster_node.hpp).
class redis_link {
public:
    virtual ~redis_link() = default;

    // How many Redis servers (shards) the cluster's keys are spread over, and thus how many
    // connections a command may go out on: a command or script goes to the shard of its first
    // key (shard_of; a command's first argument after its name; a script without keys to the
    // first shard, which holds the cluster's own keys), a subscription to the shard of its
    // channel. Callbacks keep the order of the calls per shard only, and a script may touch the
    // keys of one shard only (of one slot: scripts_per_slot). Thread: any.
    virtual std::uint32_t shard_count() const { return 1; }

    // The shard (below shard_count()) that holds a key or channel: on standalone servers
    // keys::shard_of_key, on a Redis Cluster the master serving the key's slot. Thread: the
    // cluster's.
    virtual std::uint32_t shard_of(std::string_view key) const { return keys::shard_of_key(key, shard_count()); }

    // True on a Redis Cluster: a script's keys must share one slot (key_slot), so keys of
    // different partitions never go in one script even on one server. False on standalone
    // servers, where a script may touch any keys of its server. Thread: any.
    virtual bool scripts_per_slot() const { return false; }

    // Thread: any. Runs task on the cluster's thread, later (never inside this call).
    virtual void post(std::function<void()> task) = 0;

    // Thread: the cluster's. One command; the arguments are binary-safe and copied before this
    // returns, so they may point into temporaries.
    virtual void command(std::span<const std::string_view> argv, redis_callback done) = 0;

    // Thread: the cluster's. Runs one of the scripts of cluster_scripts.hpp (by its SHA; the
    // transport has loaded each of them before the node hears that Redis is up). Same contract
    // as command().
    virtual void script(std::string_view text, std::span<const std::string_view> keys,
                        std::span<const std::string_view> args, redis_callback done) = 0;

    // Thread: the cluster's. Receives the publications of `channel` too (a room's, besides the
    // cluster's own channel, which is always received). Redis's confirmation reaches the node
    // as on_subscribed(channel); every publication on the channel from then on arrives, in
    // Redis's order with those of every other channel, until unsubscribe(). Subscriptions are
    // kept across reconnects: after a loss, on_redis_up comes once all are confirmed again (and
    // then no on_subscribed for them). A channel subscribed already is not subscribed twice (no
    // second confirmation).
    virtual void subscribe(std::string_view channel) = 0;
    // Thread: the cluster's. Stops receiving the channel's publications (some may still come).
    virtual void unsubscribe(std::string_view channel) = 0;
};

}  // namespace parley::cluster
