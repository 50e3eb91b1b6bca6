// The transport on a Redis Cluster: reading the slot map from a seed, and starting over when
// the cluster says it changed (redis_transport.hpp describes the whole).

#include "server/cluster/redis_transport.hpp"

#include "rooms/cluster/cluster_node.hpp"
#include "rooms/cluster/slot_map.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace parley::cluster {

namespace {

// An answer that says the slot map this node follows is out of date, or the cluster cannot
// serve now: a redirection, a cluster that lost a master, a slot in migration, or a script that
// met a key this master does not serve.
bool means_new_map(const redis_reply& reply) {
    if (!reply.is_error()) {
        return false;
    }
    const std::string_view text = reply.text;
    // A script's own call refused says so inside an ERR ("... while the cluster is down ...").
    return text.starts_with("MOVED ") || text.starts_with("ASK ") || text.starts_with("CLUSTERDOWN") ||
           text.starts_with("TRYAGAIN") || text.find("non local key") != std::string_view::npos ||
           text.find("cluster is down") != std::string_view::npos;
}

constexpr std::chrono::milliseconds rediscover_max{2000};
constexpr std::chrono::milliseconds masters_answer_within{3000};

}  // namespace

void redis_transport::discover() {
    if (stopped_) {
        return;
    }
    close_probes();
    // The seeds, and the masters of the last map (a seed may be the master that was lost).
    std::vector<config::redis_endpoint> asked = seeds_;
    for (const shard& s : shards_) {
        if (std::none_of(asked.begin(), asked.end(), [&](const config::redis_endpoint& e) {
                return e.host == s.endpoint.host && e.port == s.endpoint.port;
            })) {
            asked.push_back(s.endpoint);
        }
    }
    for (const config::redis_endpoint& endpoint : asked) {
        redis_connection::options opts;
        opts.host = endpoint.host;
        opts.port = endpoint.port;
        opts.password = endpoint.password;
        auto probe = redis_connection::create(executor_, opts, "slot map");
        probe->on_up([this, raw = probe.get(), host = endpoint.host] {
            raw->command({"CLUSTER", "SLOTS"}, [this, host](std::optional<redis_reply> answer) {
                if (answer) {
                    on_slot_map(*answer, host);
                }
            });
        });
        probes_.push_back(probe);
        probe->start();
    }
}

void redis_transport::on_slot_map(const redis_reply& answer, const std::string& asked_host) {
    if (stopped_ || !resetting_) {
        return;  // another probe answered first
    }
    std::string why;
    auto map = read_cluster_slots(answer, asked_host, why);
    if (!map) {
        // Not ready (a cluster being created, or a master lost and not replaced yet): asked again.
        spdlog::warn("cluster: the redis cluster's slot map is not usable yet: {}", why);
        close_probes();
        resetting_ = false;
        schedule_discover();
        return;
    }
    close_probes();
    resetting_ = false;
    const std::string password = seeds_.empty() ? std::string() : seeds_.front().password;
    if (!full_reset_ && follow_map_locally(*map, password)) {
        return;
    }
    if (!full_reset_) {
        // The change touches the first shard (the cluster's own keys): the node as a whole.
        spdlog::warn("cluster: the redis cluster's new slot map moves the cluster's own keys, or slots to or from "
                     "their master");
        reset_all();
    }
    full_reset_ = false;
    shards_.clear();
    for (const slot_map::master& m : map->masters) {
        config::redis_endpoint endpoint;
        endpoint.host = m.host;
        endpoint.port = m.port;
        endpoint.password = password;
        shards_.push_back({std::move(endpoint), nullptr, nullptr});
    }
    slot_owner_ = std::move(map->owner);
    spdlog::info("cluster: the redis cluster has {} masters; the cluster's own keys live on {}:{}", shards_.size(),
                 shards_.front().endpoint.host, shards_.front().endpoint.port);
    connect_shards();
    expect_masters();
}

bool redis_transport::follow_map_locally(const slot_map& map, const std::string& password) {
    const auto same = [](const config::redis_endpoint& e, const slot_map::master& m) {
        return e.host == m.host && e.port == m.port;
    };
    if (shards_.empty() || !same(shards_.front().endpoint, map.masters.front())) {
        return false;
    }
    // Each master of the map keeps its shard index; a new one takes the next (an index is never
    // given to another master while the node runs: the node's rooms were told by index).
    std::vector<std::uint16_t> index_of(map.masters.size());
    std::vector<bool> listed(shards_.size(), false);
    std::size_t next = shards_.size();
    for (std::size_t m = 0; m < map.masters.size(); ++m) {
        std::size_t found = next;
        for (std::size_t i = 0; i < shards_.size(); ++i) {
            if (!shards_[i].gone && same(shards_[i].endpoint, map.masters[m])) {
                found = i;
            }
        }
        if (found == next) {
            ++next;
        } else {
            listed[found] = true;
        }
        index_of[m] = static_cast<std::uint16_t>(found);
    }
    if (next > 64) {
        return false;  // the node tells shards' states in 64 bits: start the numbering over
    }
    // Down: shards held already, the masters that left the map, and every master that loses or
    // gains a slot (its rooms change hands under the new map).
    std::vector<bool> moving(next, false);
    for (std::size_t i = 0; i < shards_.size(); ++i) {
        moving[i] = shards_[i].held || (!shards_[i].gone && !listed[i]);
    }
    for (std::size_t slot = 0; slot < slot_owner_.size() && slot < map.owner.size(); ++slot) {
        const std::uint16_t now = index_of[map.owner[slot]];
        if (now != slot_owner_[slot]) {
            moving[now] = true;
            moving[slot_owner_[slot]] = true;
        }
    }
    if (moving[0]) {
        return false;
    }
    for (std::size_t m = 0; m < map.masters.size(); ++m) {
        if (index_of[m] >= shards_.size()) {
            config::redis_endpoint endpoint;
            endpoint.host = map.masters[m].host;
            endpoint.port = map.masters[m].port;
            endpoint.password = password;
            shards_.push_back({std::move(endpoint), nullptr, nullptr});
        }
    }
    // Told down under the map they knew, then the map changes.
    for (std::size_t i = 1; i < shards_.size(); ++i) {
        if (moving[i]) {
            hold_shard(i);
        }
    }
    for (std::size_t slot = 0; slot < slot_owner_.size() && slot < map.owner.size(); ++slot) {
        slot_owner_[slot] = index_of[map.owner[slot]];
    }
    for (std::size_t i = 1; i < shards_.size(); ++i) {
        if (!moving[i]) {
            continue;
        }
        if (i < listed.size() && !listed[i]) {
            // Left the map: it holds no rooms now, so the node has nothing of it to wait for.
            shards_[i].gone = true;
            shards_[i].held = false;
            node_->on_shard_gone(static_cast<std::uint32_t>(i));
            continue;
        }
        connect_shard(i);
    }
    spdlog::info("cluster: following the redis cluster's new slot map ({} masters)", map.masters.size());
    expect_masters();
    return true;
}

void redis_transport::expect_masters() {
    // A master of the map that does not answer (it died, and the others have not noticed yet,
    // so the map still names it) would hold its rooms, or the node, down for good: the map is
    // read again.
    rediscover_timer_->expires_after(masters_answer_within);
    rediscover_timer_->async_wait([this](boost::system::error_code ec) {
        if (ec || stopped_ || resetting_) {
            return;
        }
        if (!told_up_) {
            topology_changed("a master of the slot map does not answer");
            return;
        }
        for (std::size_t i = 1; i < shards_.size(); ++i) {
            if (shards_[i].held) {
                topology_changed("a master of the slot map does not answer", i);
            }
        }
    });
}

void redis_transport::hold_shard(std::size_t i) {
    shard& s = shards_[i];
    if (s.held) {
        return;
    }
    s.held = true;
    s.up = false;
    close_shard(i);
    node_->on_shard_down(static_cast<std::uint32_t>(i));
}

void redis_transport::close_shard(std::size_t i) {
    shard& s = shards_[i];
    for (auto* c : {&s.commands, &s.subscriber}) {
        if (*c) {
            (*c)->stop();
            c->reset();
        }
    }
}

void redis_transport::topology_changed(std::string_view why, std::optional<std::size_t> from) {
    if (stopped_) {
        return;
    }
    if (told_up_ && from && *from != 0 && *from < shards_.size()) {
        if (shards_[*from].gone) {
            return;  // a connection of a master that left the map: nothing of the node's is there
        }
        // Local: only the rooms of that master wait for the new map.
        if (!shards_[*from].held) {
            spdlog::warn("cluster: reading the redis cluster's slot map again ({}, on {}:{})", why,
                         shards_[*from].endpoint.host, shards_[*from].endpoint.port);
        }
        hold_shard(*from);
        schedule_discover();
        return;
    }
    if (full_reset_ && resetting_) {
        return;  // the whole is being read again already
    }
    spdlog::warn("cluster: reading the redis cluster's slot map again ({})", why);
    reset_all();
    schedule_discover();
}

void redis_transport::reset_all() {
    full_reset_ = true;
    connected_ = false;
    // Closed now: their pending commands are answered nullopt (later, from the loop), which the
    // node takes as answers lost with a connection (kept and sent again after the resync).
    for (std::size_t i = 0; i < shards_.size(); ++i) {
        shards_[i].up = false;
        close_shard(i);
    }
    if (told_up_) {
        told_up_ = false;
        node_->on_redis_down();
    }
}

void redis_transport::schedule_discover() {
    if (resetting_) {
        return;
    }
    resetting_ = true;
    rediscover_timer_->expires_after(rediscover_delay_);
    rediscover_delay_ = std::min(rediscover_delay_ * 2, rediscover_max);
    rediscover_timer_->async_wait([this](boost::system::error_code ec) {
        if (!ec && !stopped_) {
            discover();
        }
    });
}

redis_callback redis_transport::watching(redis_callback done, std::size_t from) {
    return [this, from, done = std::move(done)](std::optional<redis_reply> reply) {
        if (reply && means_new_map(*reply)) {
            // Not carried out there: the same as a command lost with its connection.
            topology_changed(reply->text, from);
            done(std::nullopt);
            return;
        }
        done(std::move(reply));
    };
}

void redis_transport::close_probes() {
    for (auto& probe : probes_) {
        probe->stop();
    }
    probes_.clear();
}

}  // namespace parley::cluster
