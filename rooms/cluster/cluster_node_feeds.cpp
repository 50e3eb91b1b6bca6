// Which rooms' messages reach this node. Each room has a channel of its own; the node
// subscribes to it while it has members in the room (and for one to two heartbeats after the
// last one left), so a node reads the messages of its own rooms only. A join into a room the
// node does not feed waits (cluster_link::open_room) until the room is subscribed and caught
// up: its seq, history and settings are the cluster's before anyone is shown them.

#include "rooms/cluster/cluster_node.hpp"

#include "rooms/chat_hub.hpp"
#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/stream_entries.hpp"
#include "rooms/room.hpp"
#include "rooms/room_directory.hpp"

namespace parley::cluster {

using if_missing = rooms::room_directory::if_missing;

void cluster_node::open_room(std::string_view room, std::function<void(bool)> done) {
    run([this, room = std::string(room), done = std::move(done)]() mutable {
        if (stopped_ || phase_ == phase::down || room_shard_down(room)) {
            done(false);  // the room is served here alone until Redis (its shard) returns
            return;
        }
        if (phase_ == phase::syncing) {
            // The sync's snapshot is being read: fed after it, like any room asked for then.
            deferred_opens_.emplace_back(std::move(room), std::move(done));
            return;
        }
        auto it = fed_.find(room);
        if (it == fed_.end()) {
            start_feeding(room, false);
            it = fed_.find(room);
        }
        fed_room& fed = it->second;
        fed.idle = false;  // a join is coming: not unsubscribed at the next heartbeat
        if (fed.now != fed_room::state::fed) {
            fed.waiting.push_back(std::move(done));
            return;
        }
        hub_->rooms().with_room(
            room,
            [](rooms::room& r) {
                r.set_fed(true);
                return true;
            },
            if_missing::skip);
        done(true);
    });
}

void cluster_node::start_feeding(const std::string& room, bool for_sync) {
    fed_room& fed = fed_[room];
    fed.now = fed_room::state::subscribing;
    fed.for_sync = for_sync;
    fed.idle = false;
    rooms_fed_.store(fed_.size(), std::memory_order_relaxed);
    catching_up_[room];  // its messages wait until the room is caught up
    link_.subscribe(keys::room_channel(room));
}

void cluster_node::on_subscribed(std::string_view channel) {
    const std::string room(keys::room_of_channel(channel));
    auto it = fed_.find(room);
    if (stopped_ || room.empty() || it == fed_.end() || it->second.now != fed_room::state::subscribing) {
        return;
    }
    fed_room& fed = it->second;
    fed.now = fed_room::state::catching_up;
    if (fed.for_sync) {
        fed.for_sync = false;
        if (phase_ == phase::syncing && sync_subscriptions_ > 0 && --sync_subscriptions_ == 0) {
            register_and_snapshot();  // every room with members here is subscribed: read the state
        }
        return;
    }
    if (phase_ != phase::up) {
        return;  // the sync under way positions it with the others
    }
    // Subscribed: every message from now on arrives (and waits in catching_up_), every join
    // and leave too (they wait for the members' read). The seq and members read now cover
    // everything before, which the stream and the members hash hold.
    read_room_state(room, true);
}

void cluster_node::position_room(const std::string& room, std::int64_t seq) {
    catching_up_[room];
    auto [room_epoch, last] = room_position(room);
    if (room_epoch == epoch_ && last == seq) {
        drain_queue(room);  // in step: what came meanwhile follows
    } else if (room_epoch == epoch_ && last < seq && static_cast<std::size_t>(seq - last) <= options_.history_per_room) {
        catch_up(room, last + 1, seq);
    } else {
        rebase_room(room, seq);
    }
}

void cluster_node::room_caught_up(const std::string& room) {
    auto it = fed_.find(room);
    if (it == fed_.end() || it->second.now != fed_room::state::catching_up || catching_up_.contains(room) ||
        room_shard_down(room)) {
        return;  // (a room of a shard lost meanwhile is positioned again when it returns)
    }
    it->second.now = fed_room::state::fed;
    hub_->rooms().with_room(
        room,
        [](rooms::room& r) {
            r.set_fed(true);
            return true;
        },
        if_missing::skip);
    answer_waiting(it->second, true);
}

void cluster_node::answer_waiting(fed_room& fed, bool outcome) {
    std::vector<std::function<void(bool)>> waiting = std::move(fed.waiting);
    fed.waiting.clear();
    for (auto& done : waiting) {
        done(outcome);
    }
}

void cluster_node::stop_idle_feeds() {
    for (auto it = fed_.begin(); it != fed_.end();) {
        fed_room& fed = it->second;
        if (fed.now != fed_room::state::fed || !fed.waiting.empty()) {
            ++it;
            continue;
        }
        // Idle at two heartbeats in a row: stop. The check and the flag's end happen under the
        // room's lock, which a join takes too, so no join slips into a room no longer fed.
        bool unused = true;
        hub_->rooms().with_room(
            it->first,
            [&](rooms::room& r) {
                unused = fed.idle ? r.stop_feed_if_unused() : r.local_members().empty();
                return true;
            },
            if_missing::skip);
        if (!unused) {
            fed.idle = false;
            ++it;
        } else if (!fed.idle) {
            fed.idle = true;
            ++it;
        } else {
            link_.unsubscribe(keys::room_channel(it->first));
            catching_up_.erase(it->first);
            // Its members elsewhere are heard of no more: forgotten here (the room closes).
            hub_->rooms().with_room(
                it->first, [](rooms::room& r) { return r.set_remote_members({}); }, if_missing::skip);
            it = fed_.erase(it);
        }
    }
    rooms_fed_.store(fed_.size(), std::memory_order_relaxed);
}

}  // namespace parley::cluster
