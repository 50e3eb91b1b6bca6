// Failure of one Redis server among several (cluster.redis lists them). The first holds the
// cluster's own data: losing it is losing Redis (on_redis_down). Losing another detaches only the
// rooms that live there: their says are served by this node alone, in a detached epoch, and kept;
// joins into them are served here; moderation in them answers `unavailable`. Everything else,
// rooms on the other shards included, keeps the cluster's service. When the shard answers again,
// its rooms are caught up as a sync would (kept says stored, each fed room positioned again from
// its counter and stream).

#include "rooms/cluster/cluster_node.hpp"

#include "rooms/chat_hub.hpp"
#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/history/unix_clock.hpp"
#include "rooms/room.hpp"
#include "rooms/room_directory.hpp"

#include <algorithm>

namespace parley::cluster {

using if_missing = rooms::room_directory::if_missing;

std::uint32_t cluster_node::shard_of_room(std::string_view room) const {
    return partition_shards_[partition_of(room)].load(std::memory_order_relaxed);
}

void cluster_node::read_partition_shards() {
    for (std::uint32_t p = 0; p < partition_count; ++p) {
        partition_shards_[p].store(link_.shard_of(keys::rooms_index(p)), std::memory_order_relaxed);
    }
}

bool cluster_node::sequencing(std::string_view room) const {
    return sequencing_.load(std::memory_order_acquire) && !room_shard_down(room);
}

void cluster_node::on_shard_down(std::uint32_t shard) {
    if (stopped_ || shard == 0 || shard >= 64 || shard_down(shard)) {
        return;
    }
    read_partition_shards();
    shards_down_.fetch_or(std::uint64_t{1} << shard, std::memory_order_acq_rel);
    shards_returned_ &= ~(std::uint64_t{1} << shard);
    if (phase_ == phase::down) {
        return;  // the node is cut off as a whole; the next sync leaves this shard's rooms alone
    }
    // A new epoch for this outage: what the shard's rooms number now is this node's alone.
    std::int64_t next = std::max(rooms::unix_millis(), detached_epoch_.load() + 1);
    detached_epoch_.store(next, std::memory_order_release);
    for (auto& [name, fed] : fed_) {
        if (shard_of_room(name) != shard) {
            continue;
        }
        if (phase_ == phase::syncing) {
            // The sync under way must not wait for this room: it is positioned on the shard's return.
            if (fed.for_sync && fed.now == fed_room::state::subscribing && sync_subscriptions_ > 0) {
                fed.for_sync = false;
                if (--sync_subscriptions_ == 0) {
                    register_and_snapshot();
                }
            }
        }
        fed.now = fed_room::state::catching_up;
        fed.for_sync = false;
        catching_up_[name].clear();  // what still arrives waits for the shard's return
        hub_->rooms().with_room(
            name,
            [](rooms::room& r) {
                r.set_fed(false);
                return true;
            },
            if_missing::skip);
        answer_waiting(fed, false);
    }
    report(report_level::warn, "lost redis shard " + std::to_string(shard + 1) + "; node " + options_.node_id +
                                   " serves the rooms there alone until it returns");
}

void cluster_node::on_shard_up(std::uint32_t shard) {
    if (stopped_ || !shard_down(shard)) {
        return;
    }
    read_partition_shards();
    shards_down_.fetch_and(~(std::uint64_t{1} << shard), std::memory_order_acq_rel);
    if (phase_ == phase::up) {
        resync_shard(shard);
    } else if (phase_ == phase::syncing) {
        shards_returned_ |= std::uint64_t{1} << shard;  // after the sync, which left its rooms out
    }
    // Down: the next sync takes the shard's rooms with the others.
}

void cluster_node::on_shard_gone(std::uint32_t shard) {
    if (stopped_ || !shard_down(shard)) {
        return;
    }
    read_partition_shards();
    shards_down_.fetch_and(~(std::uint64_t{1} << shard), std::memory_order_acq_rel);
    shards_returned_ &= ~(std::uint64_t{1} << shard);
    report(report_level::info, "redis shard " + std::to_string(shard + 1) + " left the redis cluster's slot map");
}

void cluster_node::resync_shard(std::uint32_t shard) {
    report(report_level::info, "redis shard " + std::to_string(shard + 1) + " answers again; catching its rooms up");
    // Says whose answer the loss took, then the says made meanwhile: sent before the rooms'
    // counters are read below (one connection, in order), so each room's read covers them.
    std::vector<pending_say> again;
    for (auto it = unanswered_.begin(); it != unanswered_.end();) {
        if (shard_of_room(it->room) == shard) {
            again.push_back(std::move(*it));
            it = unanswered_.erase(it);
        } else {
            ++it;
        }
    }
    std::sort(again.begin(), again.end(), [](const auto& a, const auto& b) { return a.nonce < b.nonce; });
    for (auto& say : again) {
        send_say(std::move(say), true);
    }
    for (auto it = kept_.begin(); it != kept_.end();) {
        if (shard_of_room(it->room) == shard) {
            it->nonce = ++next_nonce_;
            send_say(std::move(*it));
            it = kept_.erase(it);
        } else {
            ++it;
        }
    }
    // This node's members of the shard's rooms as they are now (joins and leaves made while it
    // was away were not told), before the rooms' reads below, which then hold them.
    std::vector<std::string> to_settle;
    for (auto it = presence_unsent_.begin(); it != presence_unsent_.end();) {
        if (shard_of_room(*it) == shard) {
            to_settle.push_back(*it);
            it = presence_unsent_.erase(it);
        } else {
            ++it;
        }
    }
    settle_members(options_.node_id, to_settle, true);
    // Rooms fed here are subscribed again already (the shard is up once its subscriptions are):
    // each is positioned from its counter. Rooms its members joined meanwhile start being fed.
    for (auto& [name, fed] : fed_) {
        if (shard_of_room(name) != shard || fed.now == fed_room::state::subscribing) {
            continue;
        }
        fed.now = fed_room::state::catching_up;
        catching_up_[name];
        read_room_state(name, true);
    }
    if (hub_ != nullptr) {
        for (const auto& r : hub_->rooms().all()) {
            if (shard_of_room(r->name()) == shard && !fed_.contains(r->name()) && !r->local_members().empty()) {
                start_feeding(r->name(), false);
            }
        }
    }
}

}  // namespace parley::cluster
