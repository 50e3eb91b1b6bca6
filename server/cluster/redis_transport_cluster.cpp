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
        rediscover_timer_->expires_after(rediscover_delay_);
        rediscover_delay_ = std::min(rediscover_delay_ * 2, rediscover_max);
        rediscover_timer_->async_wait([this](boost::system::error_code ec) {
            if (!ec && !stopped_) {
                discover();
            }
        });
        return;
    }
    close_probes();
    const std::string password = seeds_.empty() ? std::string() : seeds_.front().password;
    shards_.clear();
    for (const slot_map::master& m : map->masters) {
        config::redis_endpoint endpoint;
        endpoint.host = m.host;
        endpoint.port = m.port;
        endpoint.password = password;
        shards_.push_back({std::move(endpoint), nullptr, nullptr});
    }
    slot_owner_ = std::move(map->owner);
    resetting_ = false;
    spdlog::info("cluster: the redis cluster has {} masters; the cluster's own keys live on {}:{}", shards_.size(),
                 shards_.front().endpoint.host, shards_.front().endpoint.port);
    connect_shards();
    // A master of the map that does not answer (it died, and the others have not noticed yet,
    // so the map still names it) would hold the node down for good: the map is read again.
    rediscover_timer_->expires_after(masters_answer_within);
    rediscover_timer_->async_wait([this](boost::system::error_code ec) {
        if (!ec && !stopped_ && !told_up_) {
            topology_changed("a master of the slot map does not answer");
        }
    });
}

void redis_transport::topology_changed(std::string_view why) {
    if (stopped_ || resetting_) {
        return;
    }
    resetting_ = true;
    connected_ = false;
    spdlog::warn("cluster: reading the redis cluster's slot map again ({})", why);
    // Closed now: their pending commands are answered nullopt (later, from the loop), which the
    // node takes as answers lost with a connection (kept and sent again after the resync).
    for (shard& s : shards_) {
        s.up = false;
        for (auto* c : {&s.commands, &s.subscriber}) {
            if (*c) {
                (*c)->stop();
                c->reset();
            }
        }
    }
    if (told_up_) {
        told_up_ = false;
        node_->on_redis_down();
    }
    rediscover_timer_->expires_after(rediscover_delay_);
    rediscover_delay_ = std::min(rediscover_delay_ * 2, rediscover_max);
    rediscover_timer_->async_wait([this](boost::system::error_code ec) {
        if (!ec && !stopped_) {
            discover();
        }
    });
}

redis_callback redis_transport::watching(redis_callback done) {
    return [this, done = std::move(done)](std::optional<redis_reply> reply) {
        if (reply && means_new_map(*reply)) {
            // Not carried out there: the same as a command lost with its connection.
            topology_changed(reply->text);
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
