// The cluster_link half of the node: what sessions ask of the cluster (names, says, dms,
// remote users) and what rooms tell it (publish), called on any worker and carried out on the
// cluster's thread; and the reads of a room's stream for the history store.

#include "rooms/cluster/cluster_node.hpp"

#include "protocol/error_code.hpp"
#include "protocol/frame_encoder.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/direct_conversations.hpp"
#include "rooms/session_task.hpp"
#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/cluster_scripts.hpp"
#include "rooms/cluster/stream_entries.hpp"
#include "rooms/worker_context.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <mutex>
#include <span>

namespace parley::cluster {

using protocol::shared_frame;
using rooms::room_event;

// ---- the cluster_link, from any worker ----

void cluster_node::claim_name(std::string_view user, registry::session_handle who,
                              std::function<void(claim_outcome)> done) {
    run([this, user = std::string(user), who, done = std::move(done)]() mutable {
        std::function<void(claim_outcome)> answer = [this, who, done](claim_outcome outcome) {
            hub_->worker(who.worker).executor().post([done, outcome] { done(outcome); });
        };
        if (phase_ == phase::down) {
            // Cut off: this node's registry vouches for the name; the cluster hears of it on return.
            owned_names_.insert(user);
            link_.subscribe(keys::user_channel(user));  // made when Redis returns
            answer(claim_outcome::claimed);
            return;
        }
        std::string lease = keys::name_lease(user);
        std::string users = keys::node_users(options_.node_id);
        std::string index = keys::users_index(partition_of(user));
        std::string ttl = std::to_string(options_.name_ttl.count());
        if (scope_of(lease) == scope_of(users)) {
            eval(scripts::claim_name, {std::move(lease), std::move(users), std::move(index)},
                 {options_.node_id, std::move(ttl), user},
                 [this, user, answer](std::optional<redis_reply> reply) { on_claim_answer(user, reply, answer); });
            return;
        }
        // In two steps (Redis Cluster: the lease lives in the user's slot): the lease, then this
        // node's users. A claim whose answer is lost is written with the others at the next sync.
        eval(scripts::claim_lease, {std::move(lease), std::move(index)}, {options_.node_id, std::move(ttl), user},
             [this, user, users = std::move(users), answer](std::optional<redis_reply> reply) {
                 if (is_ok(reply) && reply->is_integer() && reply->integer == 1) {
                     eval(scripts::node_user, {users}, {"+", user});
                 }
                 on_claim_answer(user, reply, answer);
             });
    });
}

void cluster_node::on_claim_answer(const std::string& user, const std::optional<redis_reply>& reply,
                                   const std::function<void(claim_outcome)>& answer) {
    if (reply && reply->is_error()) {
        report(report_level::error, "claiming a name failed: " + reply->text);
        answer(claim_outcome::taken);
        return;
    }
    if (reply && reply->integer != 1) {
        answer(claim_outcome::taken);
        return;
    }
    // Claimed, or the command failed on this side (then the name is claimed again with the
    // others when Redis returns, and a name someone else took meanwhile closes the session).
    if (hub_->users().lookup(user)) {
        owned_names_.insert(user);
        link_.subscribe(keys::user_channel(user));  // the user's dms, from any node
    } else if (phase_ != phase::down) {
        // The session left while the claim was on its way.
        release_name(user);
    }
    answer(claim_outcome::claimed);
}


void cluster_node::release_name(std::string_view user) {
    run([this, user = std::string(user)] {
        if (owned_names_.erase(user) > 0) {
            link_.unsubscribe(keys::user_channel(user));
        }
        if (phase_ == phase::down) {
            return;  // the lease runs out by itself; the next sync rewrites this node's users
        }
        std::string lease = keys::name_lease(user);
        std::string users = keys::node_users(options_.node_id);
        std::string index = keys::users_index(partition_of(user));
        if (scope_of(lease) == scope_of(users)) {
            eval(scripts::release_name, {std::move(lease), std::move(users), std::move(index)}, {options_.node_id, user});
            return;
        }
        eval(scripts::release_leases, {std::move(lease), std::move(index)}, {options_.node_id, user});
        eval(scripts::node_user, {std::move(users)}, {"-", user});
    });
}

void cluster_node::submit_say(std::string_view room, std::string_view from, std::string_view text, std::int64_t ts,
                              registry::session_handle sender, std::string_view ack_id) {
    // Encoded here, on the sender's worker: the cluster's thread only sends it.
    auto json = protocol::encode_message_around_seq(room, from, text, ts);
    pending_say say{0,  std::string(room), std::string(from), std::move(json.before), std::move(json.after), ts,
                    ack_id.empty() ? std::string() : format_ack_ticket(sender, ack_id), sender, std::string(text),
                    std::string(ack_id), true, false, {}};
    say.text_at = json.text_at;
    say.text_size = json.text_size;
    run([this, say = std::move(say)]() mutable {
        if (phase_ == phase::down || room_shard_down(say.room)) {
            // Redis (the room's shard) went away after the session looked: the sender's session
            // serves it alone.
            rooms::post_to_session(*hub_, say.sender,
                                   [say = std::make_shared<const pending_say>(std::move(say))](rooms::chat_session& s) {
                                       s.say_here(say->room, say->text, say->ts, say->ack_id);
                                   });
            return;
        }
        say.nonce = ++next_nonce_;
        send_say(std::move(say));
    });
}

void cluster_node::submit_event(numbered_event e, registry::session_handle sender, std::string_view ack_id) {
    pending_say event{0,  std::move(e.room), std::string(), std::move(e.json_before), std::move(e.json_after), e.ts,
                      ack_id.empty() ? std::string() : format_ack_ticket(sender, ack_id), sender, std::string(),
                      std::string(ack_id), true, true, {}};
    // The say script's arguments after a say's (cluster_scripts.hpp): the settings, the guard,
    // the revisions.
    std::vector<std::string>& args = event.event_args;
    args.push_back(std::to_string(e.settings.size()));
    for (rooms::room_setting& s : e.settings) {
        args.push_back(s.kind + '\n' + s.subject);
        args.push_back(std::move(s.value));
    }
    args.push_back(e.new_room_only    ? std::string("-1")
                   : e.only_if_stored ? "if:" + *e.only_if_stored
                                      : std::to_string(e.target));
    args.push_back(std::to_string(e.revisions.size()));
    for (const rooms::log_entry& r : e.revisions) {
        args.push_back(std::to_string(r.seq));
        args.push_back(std::to_string(r.ts));
        args.emplace_back(protocol::frame_payload(r.frame.view()));
    }
    run([this, event = std::move(event)]() mutable {
        if (phase_ == phase::down || room_shard_down(event.room)) {
            refuse_event(event, protocol::error_code::unavailable);
            return;
        }
        event.nonce = ++next_nonce_;
        send_say(std::move(event));
    });
}

void cluster_node::refuse_event(const pending_say& event, protocol::error_code why) {
    if (event.sender == registry::session_handle{}) {
        return;  // the administrator's: answered already, and logged when refused
    }
    auto refused = protocol::encode_error(
        why,
        why == protocol::error_code::message_not_found ? "the message was deleted meanwhile"
                                                        : "the cluster cannot take this just now; send it again later",
        event.ack_id);
    rooms::post_to_session(*hub_, event.sender, [refused](rooms::chat_session& s) { s.output().send(refused); });
}

void cluster_node::keep_for_cluster(std::string_view room, std::string_view from, std::string_view text,
                                    std::int64_t ts) {
    auto json = protocol::encode_message_around_seq(room, from, text, ts);
    pending_say say{0, std::string(room), std::string(from), std::move(json.before), std::move(json.after), ts, {}, {},
                    {}, {}, false, false, {}};
    say.text_at = json.text_at;
    say.text_size = json.text_size;
    run([this, say = std::move(say)]() mutable {
        if (phase_ != phase::down && !room_shard_down(say.room)) {
            say.nonce = ++next_nonce_;
            send_say(std::move(say));
        } else {
            kept_.push_back(std::move(say));
        }
    });
}


void cluster_node::send_dm(std::string_view to, const shared_frame& frame, std::function<void(bool)> done) {
    run([this, to = std::string(to), json = std::string(protocol::frame_payload(frame.view())),
         done = std::move(done)]() mutable {
        if (phase_ == phase::down) {
            done(false);  // nobody elsewhere can be reached
            return;
        }
        // On the user's channel, which the node holding the name reads: Redis says how many
        // subscribers got it, so 0 means the user is not logged in anywhere.
        command({"SPUBLISH", keys::user_channel(to), format_event(event_type::dm, options_.node_id, to, to, json)},
                [done = std::move(done)](std::optional<redis_reply> reply) {
                    done(is_ok(reply) && reply->is_integer() && reply->integer > 0);
                });
    });
}

void cluster_node::publish(room_event event, std::string_view room, std::string_view user, const shared_frame& frame) {
    // Called under the room's lock: copy and queue only.
    run([this, event, room = std::string(room), user = std::string(user),
         json = std::string(protocol::frame_payload(frame.view()))] {
        if (phase_ == phase::down) {
            return;  // the next sync tells the others what this node's rooms hold then
        }
        event_type type = event_type::system;
        switch (event) {
        case room_event::join: type = event_type::join; break;
        case room_event::leave: type = event_type::leave; break;
        case room_event::leave_disconnected: type = event_type::leave_disconnected; break;
        case room_event::typing: type = event_type::typing; break;
        case room_event::system: type = event_type::system; break;
        }
        if (type == event_type::join || type == event_type::leave || type == event_type::leave_disconnected) {
            // The room's members in its partition, told on its channel; this node's rooms in
            // the cluster's keys (a dead node's members are found there).
            if (room_shard_down(room)) {
                presence_unsent_.insert(room);  // settled when the shard returns
            } else {
                eval(scripts::presence, {keys::room_members(room), keys::rooms_index(partition_of(room))},
                     {std::string(1, static_cast<char>(type)), user, options_.node_id, room,
                      keys::room_channel(room), json});
            }
            if (type == event_type::join) {
                command({"HSET", keys::node_rooms(options_.node_id), membership_field(room, user), "1"});
            } else {
                command({"HDEL", keys::node_rooms(options_.node_id), membership_field(room, user)});
            }
        } else {
            std::string payload = format_event(type, options_.node_id, room, user, json);
            // Typing and announcements concern the room's members only: the nodes that feed it.
            command({"SPUBLISH", keys::room_channel(room), payload});
        }
    });
}


void cluster_node::read_stream(std::string room, rooms::stored_read what,
                               std::function<void(std::optional<std::vector<rooms::log_entry>>)> done) {
    run([this, room = std::move(room), what, done = std::move(done)]() mutable {
        const bool conversation = rooms::direct_conversations::is_conversation_key(room);
        if (phase_ == phase::down || (!conversation && room_shard_down(room))) {
            done(std::nullopt);  // the stream cannot be reached: not an empty page
            return;
        }
        std::string low = keys::stream_id(what.after + 1);
        std::string high = what.below == std::numeric_limits<std::int64_t>::max() ? std::string("+")
                                                                                    : keys::stream_id(what.below - 1);
        if (what.below - 1 < what.after + 1 || what.limit == 0) {
            done(std::vector<rooms::log_entry>{});
            return;
        }
        std::string count = std::to_string(what.limit);
        std::string stream = rooms::direct_conversations::is_conversation_key(room) ? keys::conversation_stream(room)
                                                                                    : keys::room_stream(room);
        auto on_reply = [done = std::move(done), newest_first = what.newest_first,
                         room](std::optional<redis_reply> reply) {
            if (!reply || reply->is_error()) {
                done(std::nullopt);
                return;
            }
            std::vector<rooms::log_entry> out;
            for (auto& e : parse_stream(*reply, room)) {
                out.push_back({e.seq, e.ts, protocol::frame_of_json(e.json)});
            }
            if (newest_first) {
                std::reverse(out.begin(), out.end());
            }
            done(std::move(out));
        };
        if (rooms::direct_conversations::is_conversation_key(room)) {
            if (what.newest_first) {
                command({"XREVRANGE", stream, high, low, "COUNT", count}, std::move(on_reply));
            } else {
                command({"XRANGE", stream, low, high, "COUNT", count}, std::move(on_reply));
            }
            return;
        }
        // A room's stream, with its edited and deleted messages in place.
        eval(scripts::read_log, {stream, keys::room_revised(room)},
             {std::to_string(what.after + 1),
              what.below == std::numeric_limits<std::int64_t>::max() ? std::string() : std::to_string(what.below - 1),
              count, what.newest_first ? "1" : "0"},
             std::move(on_reply));
    });
}

}  // namespace parley::cluster
