#include "server/cluster/redis_transport.hpp"

#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/cluster_node.hpp"
#include "rooms/cluster/cluster_scripts.hpp"
#include "rooms/cluster/said_batch_joiner.hpp"

#include <boost/asio/post.hpp>
#include <openssl/sha.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>

namespace parley::cluster {

namespace asio = boost::asio;

namespace {

std::string sha1_hex(std::string_view text) {
    unsigned char digest[SHA_DIGEST_LENGTH];
    SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char b : digest) {
        out.push_back(hex[b >> 4]);
        out.push_back(hex[b & 15]);
    }
    return out;
}

// Each script's SHA-1, computed once; a script is known by its text (compared whole: the same
// literal need not have one address in every translation unit, as sanitizer builds show).
const std::string& sha_of(std::string_view script) {
    static const std::array<std::string, scripts::all.size()> shas = [] {
        std::array<std::string, scripts::all.size()> out;
        for (std::size_t i = 0; i < scripts::all.size(); ++i) {
            out[i] = sha1_hex(scripts::all[i]);
        }
        return out;
    }();
    for (std::size_t i = 0; i < scripts::all.size(); ++i) {
        if (scripts::all[i] == script) {
            return shas[i];
        }
    }
    static const std::string unknown;
    return unknown;
}

}  // namespace

redis_transport::redis_transport(asio::any_io_executor executor, std::vector<config::redis_endpoint> shards,
                                 std::chrono::milliseconds heartbeat_interval, bool redis_cluster)
    : executor_(std::move(executor)), heartbeat_interval_(heartbeat_interval), redis_cluster_(redis_cluster) {
    if (redis_cluster_) {
        seeds_ = std::move(shards);  // the masters come from the slot map
        resetting_ = true;
        return;
    }
    for (auto& endpoint : shards) {
        shards_.push_back({std::move(endpoint), nullptr, nullptr});
    }
}

redis_transport::~redis_transport() { stop(); }

void redis_transport::start(cluster_node& node) {
    node_ = &node;
    post([this] { connect(); });
}

void redis_transport::connect() {
    if (stopped_) {
        return;
    }
    heartbeat_timer_ = std::make_unique<asio::steady_timer>(executor_);
    schedule_heartbeat();
    if (redis_cluster_) {
        rediscover_timer_ = std::make_unique<asio::steady_timer>(executor_);
        discover();
        return;
    }
    if (shards_.empty()) {
        return;
    }
    connect_shards();
    for (std::uint32_t i = 1; i < shards_.size(); ++i) {
        node_->on_shard_down(i);  // until it answers
    }
}

void redis_transport::connect_shards() {
    for (std::size_t i = 0; i < shards_.size(); ++i) {
        connect_shard(i);
    }
    connected_ = true;
}

void redis_transport::connect_shard(std::size_t i) {
    close_shard(i);
    shard& s = shards_[i];
    redis_connection::options opts;
    opts.host = s.endpoint.host;
    opts.port = s.endpoint.port;
    opts.password = s.endpoint.password;
    // Named by shard in the log when there are several.
    const std::string suffix = shards_.size() > 1 ? " of shard " + std::to_string(i + 1) : std::string();
    s.commands = redis_connection::create(executor_, opts, "commands" + suffix);
    // Rooms' and users' channels are sharded channels; the cluster's own is a plain one.
    opts.sharded = [](std::string_view channel) {
        return keys::room_partition(channel).has_value() || keys::is_user_channel(channel);
    };
    s.subscriber = redis_connection::create(executor_, opts, "events" + suffix);
    for (auto* c : {&s.commands, &s.subscriber}) {
        (*c)->on_up([this, i] { on_up(i); });
        (*c)->on_down([this, i] { on_down(i); });
        if (redis_cluster_) {
            (*c)->on_refusal([this, i](std::string_view what) { topology_changed(what, i); });
        }
    }
    // The cluster's own channel lives on the first shard; the others carry rooms' channels
    // only. On a Redis Cluster the connections are new after every change of the map: the
    // rooms' and users' channels subscribed so far go with them.
    std::vector<std::string> channels;
    if (i == 0) {
        channels.emplace_back(keys::channel);
    }
    for (const std::string& channel : room_channels_) {
        if (redis_cluster_ && slot_owner_[key_slot(channel)] == i) {
            channels.push_back(channel);
        }
    }
    // A room's batch of says comes as two publications, put together again before the node
    // reads it; the joiner belongs to this connection, whose order pairs them.
    auto joiner = std::make_shared<said_batch_joiner>();
    s.subscriber->subscribe(std::move(channels),
                            [this, joiner](std::string_view channel, std::string_view payload) {
                                joiner->take(channel, payload, [this](std::string_view c, std::string_view p) {
                                    node_->on_channel_message(p, c);
                                });
                            });
    s.subscriber->on_subscribed([this](std::string_view channel) { node_->on_subscribed(channel); });
    s.commands->start();
    s.subscriber->start();
    spdlog::info("cluster: node {} joining through redis {}:{}{}", node_->node_id(), s.endpoint.host, s.endpoint.port,
                 suffix);
}

void redis_transport::stop() {
    if (stopped_) {
        return;
    }
    stopped_ = true;
    if (heartbeat_timer_) {
        heartbeat_timer_->cancel();
        heartbeat_timer_.reset();
    }
    if (rediscover_timer_) {
        rediscover_timer_->cancel();
        rediscover_timer_.reset();
    }
    close_probes();
    for (std::size_t i = 0; i < shards_.size(); ++i) {
        close_shard(i);
    }
}

bool redis_transport::shard_connected(std::size_t i) const {
    const shard& s = shards_[i];
    return s.commands && s.subscriber && s.commands->connected() && s.subscriber->connected();
}

std::uint32_t redis_transport::shard_of(std::string_view key) const {
    if (redis_cluster_) {
        return slot_owner_.empty() ? 0 : slot_owner_[key_slot(key)];
    }
    return keys::shard_of_key(key, static_cast<std::uint32_t>(shards_.size()));
}

redis_transport::shard& redis_transport::shard_for(std::string_view key) { return shards_[shard_of(key)]; }

void redis_transport::on_up(std::size_t i) {
    if (stopped_ || shards_[i].up || !shard_connected(i)) {
        return;
    }
    shard& s = shards_[i];
    // Loaded before anything the node sends (commands go out in order), so EVALSHA finds each.
    for (std::string_view text : scripts::all) {
        s.commands->command({"SCRIPT", "LOAD", text}, [](std::optional<redis_reply> reply) {
            if (reply && reply->is_error()) {
                spdlog::error("cluster: loading a script into redis failed: {}", reply->text);
            }
        });
    }
    s.up = true;
    if (redis_cluster_) {
        if (s.held) {
            // Back after a change of the map: its rooms resync under the new one.
            s.held = false;
            rediscover_delay_ = std::chrono::milliseconds(100);
            node_->on_shard_up(static_cast<std::uint32_t>(i));
            return;
        }
        // Up once every master answers (scripts and commands go to all of them). A Redis
        // Cluster starts from the current layout: there is nothing of an earlier one to move.
        if (!told_up_ && std::all_of(shards_.begin(), shards_.end(), [](const shard& x) { return x.up || x.gone; })) {
            told_up_ = true;
            rediscover_delay_ = std::chrono::milliseconds(100);
            if (!resetting_) {
                rediscover_timer_->cancel();
            }
            // Shards the node was told are down (before this reset) are the whole's now; told
            // while the node is down, they only clear.
            for (std::uint32_t index = 1; index < 64; ++index) {
                node_->on_shard_up(index);
            }
            node_->on_redis_up();
        }
        return;
    }
    if (i != 0) {
        node_->on_shard_up(static_cast<std::uint32_t>(i));
        return;
    }
    // Keys of an earlier layout (a cluster upgraded in place, which had one Redis: the first
    // shard) move to their partitions before the node reads or writes any (it is told it is up
    // only now); once moved, this is one GET.
    s.commands->command(
        {"EVAL", scripts::migrate_layout, "0", keys::layout_key, keys::layout}, [](std::optional<redis_reply> reply) {
            if (reply && reply->is_error()) {
                spdlog::error("cluster: moving the keys of an earlier layout failed: {}", reply->text);
            } else if (reply && reply->is_integer() && reply->integer > 0) {
                spdlog::info("cluster: moved {} keys of an earlier layout to their partitions", reply->integer);
            }
        });
    node_->on_redis_up();
}

void redis_transport::on_down(std::size_t i) {
    if (stopped_ || !shards_[i].up) {
        return;
    }
    shards_[i].up = false;
    if (redis_cluster_) {
        topology_changed("lost the connection to " + shards_[i].endpoint.host + ":" +
                             std::to_string(shards_[i].endpoint.port),
                         i);
        return;
    }
    if (i != 0) {
        node_->on_shard_down(static_cast<std::uint32_t>(i));
    } else {
        node_->on_redis_down();  // which logs the loss
    }
}

void redis_transport::schedule_heartbeat() {
    heartbeat_timer_->expires_after(heartbeat_interval_);
    heartbeat_timer_->async_wait([this](boost::system::error_code ec) {
        if (ec || stopped_) {
            return;
        }
        node_->heartbeat();
        schedule_heartbeat();
    });
}

void redis_transport::post(std::function<void()> task) { asio::post(executor_, std::move(task)); }

void redis_transport::refuse(redis_callback done) {
    post([done = std::move(done)] { done(std::nullopt); });
}

void redis_transport::command(std::span<const std::string_view> argv, redis_callback done) {
    if (!connected_ || stopped_) {
        refuse(std::move(done));
        return;
    }
    // Routed by the key, which follows the command's name (GET KEY, XRANGE KEY, PUBLISH CHANNEL,
    // EVALSHA SHA N KEY).
    const std::string_view key = argv.size() > 3 && argv[0] == "EVALSHA" ? argv[3]
                                 : argv.size() > 1                       ? argv[1]
                                                                         : std::string_view();
    const std::uint32_t to = shard_of(key);
    if (!shards_[to].commands) {
        refuse(std::move(done));  // a master waiting for the new slot map
        return;
    }
    if (redis_cluster_) {
        done = watching(std::move(done), to);
    }
    shards_[to].commands->command(argv, std::move(done));  // refused or lost: nullopt, by its contract
}

void redis_transport::script(std::string_view text, std::span<const std::string_view> keys,
                             std::span<const std::string_view> args, redis_callback done) {
    const std::string count = std::to_string(keys.size());
    argv_.clear();
    argv_.push_back("EVALSHA");
    argv_.push_back(sha_of(text));
    argv_.push_back(count);
    argv_.insert(argv_.end(), keys.begin(), keys.end());
    argv_.insert(argv_.end(), args.begin(), args.end());
    if (keys.empty()) {
        // No key: the cluster's own data, on the first shard.
        if (!connected_ || stopped_ || !shards_.front().commands) {
            refuse(std::move(done));
            return;
        }
        if (redis_cluster_) {
            done = watching(std::move(done), 0);
        }
        shards_.front().commands->command(argv_, std::move(done));
        return;
    }
    command(argv_, std::move(done));
}

void redis_transport::subscribe(std::string_view channel) {
    if (redis_cluster_ && !stopped_) {
        room_channels_.emplace(channel);  // subscribed again by the connections of the next map
    }
    if (connected_ && !stopped_ && shard_for(channel).subscriber) {
        shard_for(channel).subscriber->subscribe({std::string(channel)});
    }
}

void redis_transport::unsubscribe(std::string_view channel) {
    if (redis_cluster_) {
        room_channels_.erase(std::string(channel));
    }
    if (connected_ && !stopped_ && shard_for(channel).subscriber) {
        shard_for(channel).subscriber->unsubscribe({std::string(channel)});
    }
}

}  // namespace parley::cluster
