// Presence per room. A join or leave changes the room's members hash in the room's partition
// and is published on the room's channel with the room's membership version (scripts::presence),
// so it reaches only the nodes that feed the room, in order with the room's messages. A node
// that starts feeding a room reads its members with its seq (scripts::room_state); joins and
// leaves heard meanwhile wait, and those the read already holds (by version) are dropped. The
// cluster's room and user lists are read from the partitions' indexes when a client asks, and
// kept for a second.

#include "rooms/cluster/cluster_node.hpp"

#include "rooms/chat_hub.hpp"
#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/cluster_scripts.hpp"
#include "rooms/cluster/stream_entries.hpp"
#include "rooms/room.hpp"
#include "rooms/room_directory.hpp"

#include <algorithm>

namespace parley::cluster {

using if_missing = rooms::room_directory::if_missing;

void cluster_node::on_membership(const cluster_event& e, std::string_view payload) {
    auto it = fed_.find(e.room);
    if (it == fed_.end()) {
        return;  // still on its way when the node stopped feeding the room
    }
    fed_room& fed = it->second;
    if (fed.members_version < 0) {
        // The room's members are being read: decided when they are (apply_room_state). Bounded
        // by what the room's channel carries in one round trip.
        fed.members_waiting.emplace_back(payload);
        return;
    }
    if (e.version <= fed.members_version) {
        return;  // the members read already hold it
    }
    const bool missed = e.version > fed.members_version + 1;
    fed.members_version = e.version;
    if (e.origin != options_.node_id) {
        handle_room_event(e, std::string(e.origin));  // this node's own were applied when made
    }
    if (missed && phase_ == phase::up) {  // (a sync reads every fed room anyway)
        // A change never heard (cannot happen while subscribed; kept safe): read them again.
        read_room_state(std::string(e.room), false);
    }
}

std::int64_t cluster_node::apply_room_state(const std::string& room, const redis_reply& reply) {
    std::int64_t seq = 0;
    std::int64_t version = 0;
    std::map<std::string, std::string, std::less<>> members;
    if (reply.type != redis_reply::kind::array || reply.elements.size() != 3) {
        report(report_level::error, "reading room '" + room + "' from redis failed: " + reply.text);
    } else {
        parse_number(std::string_view(reply.elements[0].text), seq);
        parse_number(std::string_view(reply.elements[1].text), version);
        const auto& listed = reply.elements[2].elements;
        for (std::size_t i = 0; i + 1 < listed.size(); i += 2) {
            if (listed[i + 1].text != options_.node_id) {  // this node's members are its own
                members.emplace(listed[i].text, listed[i + 1].text);
            }
        }
    }
    auto it = fed_.find(room);
    if (it == fed_.end()) {
        return seq;
    }
    hub_->rooms().with_room(
        room, [&members](rooms::room& r) { return r.set_remote_members(members); },
        members.empty() ? if_missing::skip : if_missing::create);
    it->second.members_version = version;
    std::vector<std::string> waiting = std::move(it->second.members_waiting);
    it->second.members_waiting.clear();
    for (const std::string& payload : waiting) {
        if (auto e = parse_event(payload)) {
            on_membership(*e, payload);
        }
    }
    return seq;
}

void cluster_node::read_room_state(const std::string& room, bool position) {
    if (auto it = fed_.find(room); it != fed_.end()) {
        it->second.members_version = -1;  // joins and leaves wait for the read
    }
    eval(scripts::room_state, {keys::room_seq(room), keys::room_members(room)}, {},
         [this, room, position, generation = sync_count_](std::optional<redis_reply> reply) {
             if (stopped_ || generation != sync_count_) {
                 return;
             }
             if (phase_ == phase::syncing) {
                 // Lost: its shard was lost (on_shard_down follows); the sync goes on without
                 // the room, which is positioned when the shard returns.
                 if (reply) {
                     sync_seqs_[room] = apply_room_state(room, *reply);
                 }
                 --sync_reads_;
                 finish_sync_if_ready();
                 return;
             }
             if (phase_ != phase::up || !reply) {
                 return;  // lost: the next sync (or the shard's return) reads the room again
             }
             const std::int64_t seq = apply_room_state(room, *reply);
             auto f = fed_.find(room);
             if (position && f != fed_.end() && f->second.now == fed_room::state::catching_up) {
                 position_room(room, seq);
             }
         });
}

std::vector<std::string> cluster_node::local_members_of(const std::string& room) const {
    std::shared_ptr<rooms::room> r = hub_ != nullptr ? hub_->rooms().find(room) : nullptr;
    return r ? r->local_members() : std::vector<std::string>{};
}

void cluster_node::settle_members(const std::string& node, const std::vector<std::string>& rooms_list,
                                  bool holds_local) {
    for (const std::string& room : rooms_list) {
        if (room_shard_down(room)) {
            continue;  // settled when its shard returns (resync_shard)
        }
        std::vector<std::string> args{node, room, keys::room_channel(room)};
        if (holds_local) {
            for (std::string& user : local_members_of(room)) {
                args.push_back(std::move(user));
            }
        }
        eval(scripts::room_members_of, {keys::room_members(room), keys::rooms_index(partition_of(room))}, args);
    }
}

void cluster_node::read_partitions(std::string_view script, std::string (*index_of)(std::uint32_t),
                                   std::function<void(const redis_reply&)> take,
                                   std::function<void(std::size_t answered, std::size_t asked)> finish) {
    std::vector<std::string> indexes;
    indexes.reserve(partition_count);
    for (std::uint32_t p = 0; p < partition_count; ++p) {
        indexes.push_back(index_of(p));
    }
    struct gathering {
        std::function<void(const redis_reply&)> take;
        std::function<void(std::size_t, std::size_t)> finish;
        std::size_t asked = 0;
        std::size_t left = 0;
        std::size_t answered = 0;
    };
    auto gathered = std::make_shared<gathering>();
    gathered->take = std::move(take);
    gathered->finish = std::move(finish);
    auto groups = by_scope(std::move(indexes));
    gathered->asked = gathered->left = groups.size();
    for (auto& [scope, group] : groups) {
        eval(script, group, {}, [this, gathered](std::optional<redis_reply> reply) {
            if (stopped_) {
                return;
            }
            if (reply && reply->is_error()) {
                report(report_level::error, "reading the cluster's partitions failed: " + reply->text);
            }
            if (is_ok(reply) && reply->type == redis_reply::kind::array) {
                ++gathered->answered;
                gathered->take(*reply);
            }
            if (--gathered->left == 0) {
                gathered->finish(gathered->answered, gathered->asked);
            }
        });
    }
}

void cluster_node::list_rooms(std::function<void(std::optional<std::vector<rooms::listed_room>>)> done) {
    run([this, done = std::move(done)]() mutable {
        if (stopped_ || phase_ != phase::up) {
            done(std::nullopt);
            return;
        }
        if (room_list_.fresh()) {
            done(*room_list_.kept);
            return;
        }
        room_list_.waiting.push_back(std::move(done));
        if (room_list_.waiting.size() > 1) {
            return;  // a read is under way: answered with it
        }
        auto rooms_read = std::make_shared<std::vector<rooms::listed_room>>();
        read_partitions(
            scripts::rooms_index, &keys::rooms_index,
            [rooms_read](const redis_reply& rows) {
                // Per room: its name, its member count, its topic.
                for (std::size_t i = 0; i + 2 < rows.elements.size(); i += 3) {
                    std::int64_t members = 0;
                    parse_number(std::string_view(rows.elements[i + 1].text), members);
                    if (members > 0) {
                        rooms_read->push_back({rows.elements[i].text, static_cast<std::size_t>(members),
                                               rows.elements[i + 2].text});
                    }
                }
            },
            [this, rooms_read](std::size_t answered, std::size_t asked) {
                // A shard that did not answer leaves its rooms out (this node's own are listed by
                // the session anyway); none answered: this node's rooms only.
                std::optional<std::vector<rooms::listed_room>> listed;
                if (answered > 0) {
                    std::sort(rooms_read->begin(), rooms_read->end(),
                              [](const auto& a, const auto& b) { return a.name < b.name; });
                    listed = std::move(*rooms_read);
                }
                room_list_.answer(std::move(listed), answered == asked);
            });
    });
}

void cluster_node::list_users(std::function<void(std::optional<std::vector<std::string>>)> done) {
    run([this, done = std::move(done)]() mutable {
        if (stopped_ || phase_ != phase::up) {
            done(std::nullopt);
            return;
        }
        if (user_list_.fresh()) {
            done(*user_list_.kept);
            return;
        }
        user_list_.waiting.push_back(std::move(done));
        if (user_list_.waiting.size() > 1) {
            return;
        }
        struct read_users {
            std::vector<std::string> names;
            std::size_t elsewhere = 0;
        };
        auto users_read = std::make_shared<read_users>();
        read_partitions(
            scripts::users_index, &keys::users_index,
            [this, users_read](const redis_reply& rows) {
                // Per name: the name, the node holding it.
                for (std::size_t i = 0; i + 1 < rows.elements.size(); i += 2) {
                    users_read->names.push_back(rows.elements[i].text);
                    users_read->elsewhere += rows.elements[i + 1].text != options_.node_id ? 1 : 0;
                }
            },
            [this, users_read](std::size_t answered, std::size_t asked) {
                std::optional<std::vector<std::string>> listed;
                if (answered > 0) {
                    std::sort(users_read->names.begin(), users_read->names.end());
                    listed = std::move(users_read->names);
                    remote_users_.store(users_read->elsewhere, std::memory_order_relaxed);
                }
                user_list_.answer(std::move(listed), answered == asked);
            });
    });
}

}  // namespace parley::cluster
