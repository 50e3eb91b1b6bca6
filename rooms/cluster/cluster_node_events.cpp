// The channel half of the node: every node's events as they arrive, in Redis's order, applied
// to this node's rooms and to its copy of the cluster's presence; rooms caught up from their
// streams when messages went missing.

#include "rooms/cluster/cluster_node.hpp"
#include "rooms/cluster/cluster_scripts.hpp"

#include "protocol/close_code.hpp"
#include "protocol/frame_encoder.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/admin_actions.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/room_directory.hpp"
#include "rooms/session_task.hpp"
#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/stream_entries.hpp"
#include "rooms/room.hpp"
#include "rooms/worker_context.hpp"

#include <algorithm>
#include <mutex>

namespace parley::cluster {

using protocol::shared_frame;
using rooms::room_event;
using if_missing = rooms::room_directory::if_missing;

namespace {

room_event room_event_of(event_type type) {
    switch (type) {
    case event_type::join: return room_event::join;
    case event_type::leave: return room_event::leave;
    case event_type::leave_disconnected: return room_event::leave_disconnected;
    case event_type::typing: return room_event::typing;
    default: return room_event::system;
    }
}

}  // namespace

// ---- events from the channel ----

void cluster_node::on_channel_message(std::string_view publication, std::string_view channel) {
    if (is_said_batch(publication)) {
        // A room's batch of says (scripts::says), for the channel's room.
        const auto said = [this](const cluster_event& e) { on_said(e); };
        if (!for_each_said(publication, keys::room_of_channel(channel), said_json_, said)) {
            report(report_level::warn, "ignored the rest of a malformed batch of says on a room's channel");
        }
        return;
    }
    on_event(publication, 0);
}

void cluster_node::on_event(std::string_view payload, std::int64_t batch_seq) {
    events_received_.fetch_add(1, std::memory_order_relaxed);
    auto e = parse_event(payload, batch_seq);
    if (!e) {
        report(report_level::debug, "ignored a message on the channel that is not an event");
        return;
    }
    if (e->type == event_type::message) {
        messages_received_.fetch_add(1, std::memory_order_relaxed);
    }
    if (e->type == event_type::dm || e->type == event_type::stored_dm) {
        // From a user's channel: for a user of this node, whatever the sync is doing.
        if (phase_ != phase::down) {
            if (e->type == event_type::dm) {
                deliver_dm(e->user, e->body);
            } else {
                deliver_stored_dm(*e);  // this node's own too: its users hear of it here
            }
        }
        return;
    }
    if (e->version > 0) {
        // A join or leave from a room's channel: ordered by its room's version, not by the
        // sync's marker (the room's members are read with the room, room_state).
        if (phase_ != phase::down) {
            on_membership(*e, payload);
        }
        return;
    }
    if (phase_ == phase::syncing) {
        if (e->type == event_type::marker && e->origin == options_.node_id && e->room == sync_nonce_) {
            marker_seen_ = true;
            finish_sync_if_ready();
        } else if (marker_seen_) {
            buffered_.emplace_back(std::string(payload), batch_seq);  // newer than the snapshot being read
        }
        return;  // older than the snapshot: it holds them
    }
    if (phase_ == phase::up) {
        handle_event(*e);
    }
}

void cluster_node::on_said(const cluster_event& e) {
    events_received_.fetch_add(1, std::memory_order_relaxed);
    messages_received_.fetch_add(1, std::memory_order_relaxed);
    if (phase_ == phase::syncing) {
        if (marker_seen_) {
            // Newer than the snapshot being read: kept as a single message event (rare: only
            // while a sync reads its snapshot).
            std::string payload = message_event_head(e.origin, e.room, {});
            payload.append(std::to_string(e.seq_at)).append("\n").append(std::to_string(e.ts)).append("\n");
            payload.append(e.ack).append("\n").append(e.body);
            buffered_.emplace_back(std::move(payload), e.seq);
        }
        return;  // older than the snapshot: it holds them
    }
    if (phase_ == phase::up) {
        handle_event(e);
    }
}

void cluster_node::handle_event(const cluster_event& e) {
    if (e.type == event_type::message) {
        if (fed_.contains(e.room)) {  // else one still on its way when the node unsubscribed
            apply_message(e.room, e.seq, e.ts, e.body, e.origin, e.ack, false, e.seq_at);
        }
        return;
    }
    const std::string origin(e.origin);
    if (origin == options_.node_id) {
        if (e.type == event_type::node_gone && phase_ == phase::up) {
            // Others took this node for dead (its lease ran out): say again what it holds.
            report(report_level::warn, "the cluster dropped node " + options_.node_id + "; registering again");
            begin_sync(false);
        }
        return;  // this node's own events were applied when they happened
    }
    switch (e.type) {
    case event_type::join:
    case event_type::leave:
    case event_type::leave_disconnected:
    case event_type::typing:
    case event_type::system:
        handle_room_event(e, origin);
        break;
    case event_type::login:   // (an earlier version's: users are read from the partitions)
    case event_type::logout:
    case event_type::dm:      // (handled in on_event)
        break;
    case event_type::node_gone: {
        drop_node(origin);
        // Its members leave the rooms fed here (once: whoever clears a room first tells it).
        std::vector<std::string> rooms_list;
        for (const auto& [room, fed] : fed_) {
            rooms_list.push_back(room);
        }
        settle_members(origin, rooms_list, false);
        break;
    }
    case event_type::node_state:
        nodes_.insert(origin);
        remote_nodes_.store(nodes_.size(), std::memory_order_relaxed);
        break;
    case event_type::marker:
    case event_type::message:
    case event_type::stored_dm:
        break;
    }
}

void cluster_node::handle_room_event(const cluster_event& e, const std::string& origin) {
    const room_event kind = room_event_of(e.type);
    // A join or leave told by a script comes without its JSON: made here.
    shared_frame frame = e.body.empty() && kind != room_event::typing && kind != room_event::system
                             ? protocol::encode_presence(e.room, e.user, kind == room_event::join)
                             : protocol::frame_of_json(e.body);
    // A join may make the room here; any other event concerns a room only where it exists.
    hub_->rooms().with_room(
        e.room,
        [&](rooms::room& r) { return r.apply_remote(kind, origin, e.user, frame, options_.presence_max_members); },
        kind == room_event::join ? if_missing::create : if_missing::skip);
}

void cluster_node::apply_message(std::string_view room, std::int64_t seq, std::int64_t ts, std::string_view json,
                                 std::string_view origin, std::string_view ack, bool from_stream, std::size_t seq_at) {
    const std::string name(room);
    // The whole JSON, for a message that waits (a batch of says left its seq out).
    const auto whole_json = [&] {
        if (seq_at == std::string_view::npos) {
            return std::string(json);
        }
        return std::string(json.substr(0, seq_at)).append(std::to_string(seq)).append(json.substr(seq_at));
    };
    if (!from_stream) {
        if (auto waiting = catching_up_.find(name); waiting != catching_up_.end()) {
            waiting->second.push_back({seq, ts, whole_json(), std::string(origin), std::string(ack)});
            return;
        }
    }
    // One decode per node: the JSON becomes one frame for every member here.
    shared_frame frame = seq_at == std::string_view::npos
                             ? protocol::frame_of_json(json)
                             : protocol::frame_of_json_around(json.substr(0, seq_at), seq, json.substr(seq_at));
    // The sender's ack, when the sender is here: one pointer, so the std::function holds it
    // without an allocation.
    struct ack_to_send {
        cluster_node* node;
        std::string_view ticket;
        std::string_view room;
        std::int64_t seq;
    } pending{this, ack, room, seq};
    // Set for every message said here, with an ack or without: the room reports (webhooks)
    // only the messages whose origin is this node, so that a cluster reports each once.
    std::function<void()> ack_first;
    if (origin == options_.node_id) {
        ack_first = [&pending] {
            if (!pending.ticket.empty()) {
                pending.node->deliver_ack(pending.ticket, pending.room, pending.seq);
            }
        };
    }
    auto outcome = rooms::room::apply_outcome::gone;
    auto target = hub_->rooms().with_room(name, [&](rooms::room& r) {
        outcome = r.apply_message(seq, ts, frame, from_stream, ack_first);
        return outcome != rooms::room::apply_outcome::gone;  // closed meanwhile: the next one
    });
    if (outcome == rooms::room::apply_outcome::gap) {
        // Messages before it never came (the node was catching up or lost some): fetch them
        // from the stream, then this one.
        catching_up_[name].push_back({seq, ts, whole_json(), std::string(origin), std::string(ack)});
        catch_up(name, target->last_seq() + 1, seq - 1);
    }
}

void cluster_node::catch_up(const std::string& room, std::int64_t from_seq, std::int64_t to_seq) {
    catching_up_[room];  // messages arriving meanwhile wait
    std::string count = std::to_string(to_seq - from_seq + 1);
    eval(scripts::read_log, {keys::room_stream(room), keys::room_revised(room)},
         {std::to_string(from_seq), std::to_string(to_seq), count, "0"},
            [this, room, generation = sync_count_](std::optional<redis_reply> reply) {
                if (stopped_ || generation != sync_count_ || phase_ == phase::down) {
                    return;  // the outage cleared the queues; the next sync catches the room up
                }
                if (!reply) {
                    // Lost with the connection: on_redis_down follows and the sync after it
                    // catches the room up. Until then the room must not wait for this answer.
                    catching_up_.erase(room);
                    return;
                }
                if (is_ok(reply)) {
                    for (const auto& e : parse_stream(*reply, room)) {
                        apply_message(room, e.seq, e.ts, e.json, e.origin, e.ack, true);
                    }
                }
                drain_queue(room);
            });
}

void cluster_node::rebase_room(const std::string& room, std::int64_t last_seq) {
    catching_up_[room];
    std::string count = std::to_string(options_.history_per_room);
    eval(scripts::read_log, {keys::room_stream(room), keys::room_revised(room)}, {"1", "", count, "1"},
            [this, room, last_seq, generation = sync_count_](std::optional<redis_reply> reply) {
                if (stopped_ || generation != sync_count_ || phase_ == phase::down) {
                    return;
                }
                if (!reply) {
                    catching_up_.erase(room);  // as in catch_up: the next sync starts it over
                    return;
                }
                std::vector<rooms::log_entry> newest;
                if (is_ok(reply)) {
                    for (auto& e : parse_stream(*reply, room)) {
                        if (e.seq <= last_seq) {
                            newest.push_back({e.seq, e.ts, protocol::frame_of_json(e.json)});
                        }
                    }
                }
                std::reverse(newest.begin(), newest.end());
                // The room's settings come with its history: what its events made of it before
                // the newest messages.
                command({"HGETALL", keys::room_settings(room)}, [this, room, last_seq, generation,
                                                                  newest = std::move(newest)](
                                                                     std::optional<redis_reply> settings) {
                    if (stopped_ || generation != sync_count_ || phase_ == phase::down) {
                        return;
                    }
                    if (!settings) {
                        catching_up_.erase(room);
                        return;
                    }
                    std::vector<rooms::room_setting> rows;
                    const auto& fields = settings->elements;
                    for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
                        const std::string& field = fields[i].text;
                        const std::size_t cut = field.find('\n');
                        if (cut != std::string::npos) {
                            rows.push_back({field.substr(0, cut), field.substr(cut + 1), fields[i + 1].text});
                        }
                    }
                    // Copied for each try: a room that closed under the first keeps what it was given.
                    hub_->rooms().with_room(room, [&](rooms::room& r) {
                        if (!r.rebase(epoch_, last_seq, newest)) {
                            return false;
                        }
                        r.replace_settings(rows);
                        r.close_if_unused();
                        return true;
                    });
                    drain_queue(room);
                });
            });
}

void cluster_node::drain_queue(const std::string& room) {
    auto it = catching_up_.find(room);
    if (it == catching_up_.end()) {
        room_caught_up(room);
        return;
    }
    std::deque<queued_message> waiting = std::move(it->second);
    catching_up_.erase(it);
    while (!waiting.empty()) {
        queued_message m = std::move(waiting.front());
        waiting.pop_front();
        apply_message(room, m.seq, m.ts, m.json, m.origin, m.ack, false);
        if (auto again = catching_up_.find(room); again != catching_up_.end()) {
            // Another gap: the rest wait behind it, in order.
            for (auto& rest : waiting) {
                again->second.push_back(std::move(rest));
            }
            return;
        }
    }
    room_caught_up(room);  // a room being fed is fed now
}

void cluster_node::deliver_ack(std::string_view ticket, std::string_view room, std::int64_t seq) {
    auto t = parse_ack_ticket(ticket);
    if (!t || t->sender.worker >= hub_->worker_count()) {
        return;
    }
    // At once on the sender's own worker: the fan-out that follows may serve it at once too.
    rooms::run_on_session(*hub_, t->sender, [ack = protocol::encode_ack(t->re, room, seq)](rooms::chat_session& s) {
        s.output().send(ack);
    });
}

void cluster_node::deliver_dm(std::string_view user, std::string_view json) {
    std::vector<registry::session_handle> targets;
    if (hub_->users().lookup_all(user, targets) == 0) {
        return;
    }
    shared_frame frame = protocol::frame_of_json(json);
    for (registry::session_handle target : targets) {
        rooms::post_to_session(*hub_, target, [frame](rooms::chat_session& s) { s.output().send(frame); });
    }
}

void cluster_node::kick_local(const std::string& user) {
    rooms::kick_user(*hub_, user, "name taken in the cluster", protocol::close_code::policy_violation,
                     "the name '" + user + "' is in use on another node of the cluster");
}

// ---- the other nodes ----

void cluster_node::drop_node(const std::string& node) {
    if (nodes_.erase(node) == 0) {
        return;
    }
    remote_nodes_.store(nodes_.size(), std::memory_order_relaxed);
    report(report_level::info, "node " + node + " left the cluster");
}

}  // namespace parley::cluster
