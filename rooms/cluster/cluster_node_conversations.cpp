// What the cluster keeps for identities (token mode): stored direct conversations and read
// markers, in Redis so that every node sees them (docs/cluster.md, "Direct conversations and
// read markers"). Called on any worker, carried out on the cluster's thread.

#include "rooms/cluster/cluster_node.hpp"

#include "protocol/error_code.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/direct_conversations.hpp"
#include "rooms/session_task.hpp"
#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/conversation_scripts.hpp"
#include "rooms/cluster/stream_entries.hpp"
#include "rooms/worker_context.hpp"

#include <algorithm>
#include <map>

namespace parley::cluster {

using protocol::shared_frame;

namespace {

// A reply element as a number: Redis answers integers, and strings for what a hash holds.
std::int64_t number_of(const redis_reply& r) {
    if (r.type == redis_reply::kind::integer) {
        return r.integer;
    }
    std::int64_t n = 0;
    parse_number(std::string_view(r.text), n);
    return n;
}

}  // namespace

void cluster_node::submit_dm(std::string_view from, std::string_view to, std::string_view text, std::int64_t ts,
                             registry::session_handle sender, std::string_view ack_id) {
    // Encoded here, on the sender's worker: the cluster's thread only sends it.
    auto json = protocol::encode_dm_around_seq(from, to, text, ts);
    pending_dm dm{0,  std::string(from), std::string(to), std::move(json.before), std::move(json.after),
                  ts, sender,            std::string(ack_id)};
    run([this, dm = std::move(dm)]() mutable {
        if (phase_ == phase::down) {
            // Unlike a say, a dm cannot be served here alone: its seq and its recipient's copy
            // are the cluster's. The sender is told rather than kept waiting.
            answer_dm_sender(dm, std::nullopt);
            return;
        }
        dm.nonce = ++next_nonce_;
        send_stored_dm(dm);
    });
}

void cluster_node::send_stored_dm(const pending_dm& dm, bool resend) {
    dms_in_flight_.push_back(dm);
    const std::string conversation = rooms::direct_conversations::key_of(dm.from, dm.to);
    const std::string seq_key = keys::conversation_seq(conversation);
    const std::string stream_key = keys::conversation_stream(conversation);
    const std::string from_markers = keys::user_markers(dm.from);
    const std::string to_markers = keys::user_markers(dm.to);
    const std::string ts = std::to_string(dm.ts);
    const std::string length = std::to_string(options_.stream_length);
    const std::string said = options_.node_id + ":" + incarnation_ + ":" + std::to_string(dm.nonce);
    // The markers go in the same script where they share its scope; else (Redis Cluster: each
    // lives in its user's slot) they are moved once the dm's seq is known (on_dm_answer).
    const bool markers_with = scope_of(from_markers) == scope_of(seq_key) && scope_of(to_markers) == scope_of(seq_key);
    const std::string_view keys_list[] = {seq_key, stream_key, from_markers, to_markers};
    const std::string_view args[] = {{}, {}, ts, dm.json_before, dm.json_after, length, conversation, said,
                                     resend ? "1" : "0"};
    link_.script(scripts::dm, std::span<const std::string_view>(keys_list, markers_with ? 4 : 2), args,
                 [this, number = dm.nonce, markers_with](std::optional<redis_reply> reply) {
                     if (!markers_with && is_ok(reply) && reply->is_integer() && reply->integer > 0) {
                         mark_dm(number, reply->integer);
                     }
                     on_dm_answer(number, std::move(reply));
                 });
}

void cluster_node::mark_dm(std::uint64_t nonce, std::int64_t seq) {
    auto it = std::find_if(dms_in_flight_.begin(), dms_in_flight_.end(),
                           [nonce](const pending_dm& p) { return p.nonce == nonce; });
    if (it == dms_in_flight_.end()) {
        return;
    }
    // As the dm script does with the markers beside it: the sender has read up to the dm, and
    // the conversation becomes one of the recipient's (from 0).
    const std::string conversation = rooms::direct_conversations::key_of(it->from, it->to);
    const std::string seq_text = std::to_string(seq);
    eval(scripts::read_marker, {keys::user_markers(it->from)}, {conversation, seq_text, "1", seq_text});
    command({"HSETNX", keys::user_markers(it->to), conversation, "0"});
}

void cluster_node::on_dm_answer(std::uint64_t nonce, std::optional<redis_reply> reply) {
    auto it = std::find_if(dms_in_flight_.begin(), dms_in_flight_.end(),
                           [nonce](const pending_dm& p) { return p.nonce == nonce; });
    if (it == dms_in_flight_.end()) {
        return;
    }
    if (!reply) {
        // Stored or not, nobody knows: sent again on return, and the script stores it once.
        dms_unanswered_.push_back(std::move(*it));
    } else if (reply->is_error() || reply->type != redis_reply::kind::integer || reply->integer <= 0) {
        report(report_level::error, "a direct message was refused by redis: " + reply->text);
        answer_dm_sender(*it, std::nullopt);
    } else {
        answer_dm_sender(*it, reply->integer);
        publish_stored_dm(*it, reply->integer);
    }
    dms_in_flight_.erase(it);
}

void cluster_node::publish_stored_dm(const pending_dm& dm, std::int64_t seq) {
    // On the recipient's channel and the sender's (their other sessions): each user's node
    // gives it to that user's sessions there. After the script's answer, so a dm whose answer
    // was lost and that is sent again is published once.
    std::string body = format_session(dm.sender);
    body.append("\n").append(dm.json_before).append(std::to_string(seq)).append(dm.json_after);
    for (const std::string* user : {&dm.to, &dm.from}) {
        if (user == &dm.from && dm.from == dm.to) {
            break;
        }
        command({"SPUBLISH", keys::user_channel(*user),
                 format_event(event_type::stored_dm, options_.node_id, *user, dm.from, body)});
    }
}

void cluster_node::answer_dm_sender(const pending_dm& dm, std::optional<std::int64_t> seq) {
    if (!seq) {
        // With or without an id: a dm that went nowhere is never lost in silence.
        auto refused = protocol::encode_error(protocol::error_code::unavailable,
                                              "the message could not be stored by the cluster", dm.ack_id);
        rooms::post_to_session(*hub_, dm.sender, [refused](rooms::chat_session& s) { s.output().send(refused); });
        return;
    }
    // The same text the recipients get from the channel, then the ack: the order a single node
    // gives its sender.
    std::string json = dm.json_before;
    json.append(std::to_string(*seq)).append(dm.json_after);
    shared_frame copy = protocol::frame_of_json(json);
    shared_frame ack = dm.ack_id.empty() ? shared_frame() : protocol::encode_dm_ack(dm.ack_id, dm.to, *seq);
    // The sender's node reports it (once per cluster), as it does a say.
    if (const rooms::chat_events& events = hub_->rooms().events(); events.wants(protocol::webhook_event::dm)) {
        events.emit(protocol::webhook_event::dm, {}, dm.from, copy, dm.ts);
    }
    rooms::post_to_session(*hub_, dm.sender, [copy, ack](rooms::chat_session& s) {
        s.output().send(copy);
        if (ack) {
            s.output().send(ack);
        }
    });
}

void cluster_node::deliver_stored_dm(const cluster_event& e) {
    // From the channel of user `e.room` (the recipient, or the sender for their other sessions).
    std::vector<registry::session_handle> targets;
    hub_->users().lookup_all(e.room, targets);
    std::optional<registry::session_handle> sender;
    if (e.origin == options_.node_id) {
        sender = parse_session(e.sender);  // it has its copy from the script's answer
    }
    shared_frame frame;
    for (registry::session_handle target : targets) {
        if (sender && target == *sender) {
            continue;
        }
        if (!frame) {
            frame = protocol::frame_of_json(e.body);  // once per node, for every session here
        }
        rooms::post_to_session(*hub_, target, [frame](rooms::chat_session& s) { s.output().send(frame); });
    }
}

void cluster_node::save_read(std::string_view user, std::string_view key, std::int64_t seq,
                             registry::session_handle who, std::function<void(rooms::read_outcome)> done) {
    run([this, user = std::string(user), key = std::string(key), seq, who, done = std::move(done)]() mutable {
        auto answer = [this, who, done = std::move(done)](rooms::read_outcome outcome) {
            hub_->worker(who.worker).executor().post([done, outcome] { done(outcome); });
        };
        if (phase_ == phase::down) {
            answer({});
            return;
        }
        const bool conversation = rooms::direct_conversations::is_conversation_key(key);
        std::string markers = keys::user_markers(user);
        std::string log_seq = conversation ? keys::conversation_seq(key) : keys::room_seq(key);
        if (scope_of(log_seq) != scope_of(markers)) {
            // The log lives on another shard (or slot): its last seq is read there first.
            command({"GET", log_seq}, [this, markers = std::move(markers), key, seq, conversation,
                                       answer = std::move(answer)](std::optional<redis_reply> last) mutable {
                if (!is_ok(last)) {
                    if (last) {
                        report(report_level::error, "saving a read marker failed: " + last->text);
                    }
                    answer({});
                    return;
                }
                save_marker(markers, {}, key, seq, last->text.empty() ? "0" : last->text, conversation,
                            std::move(answer));
            });
            return;
        }
        save_marker(markers, log_seq, key, seq, {}, conversation, std::move(answer));
    });
}

void cluster_node::save_marker(const std::string& markers, const std::string& log_seq, const std::string& key,
                               std::int64_t seq, const std::string& last, bool conversation,
                               std::function<void(rooms::read_outcome)> answer) {
    std::vector<std::string> keys_list{markers};
    if (!log_seq.empty()) {
        keys_list.push_back(log_seq);
    }
    std::vector<std::string> args{key, std::to_string(seq), conversation ? "1" : "0"};
    if (!last.empty()) {
        args.push_back(last);
    }
    eval(scripts::read_marker, keys_list, args,
             [this, answer = std::move(answer)](std::optional<redis_reply> reply) {
                 rooms::read_outcome outcome;
                 if (is_ok(reply) && reply->type == redis_reply::kind::array && reply->elements.size() == 2) {
                     outcome.seq = number_of(reply->elements[0]);
                     using result = rooms::read_outcome::result;
                     outcome.what = outcome.seq < 0                          ? result::no_conversation
                                    : number_of(reply->elements[1]) == 1 ? result::moved
                                                                           : result::unchanged;
                 } else if (reply) {
                     report(report_level::error, "saving a read marker failed: " + reply->text);
                 }
                 answer(outcome);
             });
}

void cluster_node::load_conversations(std::string_view user, registry::session_handle who,
                                      std::function<void(std::optional<std::vector<rooms::marked_log>>)> done) {
    run([this, user = std::string(user), who, done = std::move(done)]() mutable {
        auto answer = [this, who, done = std::move(done)](std::optional<std::vector<rooms::marked_log>> logs) {
            hub_->worker(who.worker).executor().post(
                [done, logs = std::move(logs)]() mutable { done(std::move(logs)); });
        };
        if (phase_ == phase::down) {
            answer(std::nullopt);
            return;
        }
        if (link_.shard_count() > 1 || link_.scripts_per_slot()) {
            load_conversations_sharded(user, std::move(answer));
            return;
        }
        eval(scripts::conversations, {keys::user_markers(user)}, {},
             [this, answer = std::move(answer)](std::optional<redis_reply> reply) {
                 if (!is_ok(reply) || reply->type != redis_reply::kind::array) {
                     if (reply) {
                         report(report_level::error, "reading a user's conversations failed: " + reply->text);
                     }
                     answer(std::nullopt);
                     return;
                 }
                 std::vector<rooms::marked_log> logs;
                 const auto& e = reply->elements;
                 for (std::size_t i = 0; i + 3 < e.size(); i += 4) {
                     logs.push_back({e[i].text, number_of(e[i + 1]), {number_of(e[i + 2]), number_of(e[i + 3])}});
                 }
                 answer(std::move(logs));
             });
    });
}

// With several shards the user's markers and the rooms' logs live on different servers: the
// markers first, then each shard's logs in one call (scripts::log_tips), put together in the
// markers' order once every shard has answered.
void cluster_node::load_conversations_sharded(const std::string& user,
                                              std::function<void(std::optional<std::vector<rooms::marked_log>>)> answer) {
    command({"HGETALL", keys::user_markers(user)}, [this, answer = std::move(answer)](
                                                       std::optional<redis_reply> reply) mutable {
        if (!is_ok(reply) || reply->type != redis_reply::kind::array) {
            if (reply) {
                report(report_level::error, "reading a user's conversations failed: " + reply->text);
            }
            answer(std::nullopt);
            return;
        }
        struct gathering {
            std::vector<rooms::marked_log> logs;
            std::size_t waiting = 0;
            bool failed = false;
            std::function<void(std::optional<std::vector<rooms::marked_log>>)> answer;
        };
        auto g = std::make_shared<gathering>();
        g->answer = std::move(answer);
        // The logs grouped by scope (shard, or slot on a Redis Cluster): one log_tips call each.
        std::map<std::uint32_t, std::vector<std::size_t>> per_scope;
        std::map<std::uint32_t, std::vector<std::string>> scope_keys;
        const auto& e = reply->elements;
        for (std::size_t i = 0; i + 1 < e.size(); i += 2) {
            const std::string& key = e[i].text;
            const bool conversation = rooms::direct_conversations::is_conversation_key(key);
            std::string seq_key = conversation ? keys::conversation_seq(key) : keys::room_seq(key);
            std::string stream = conversation ? keys::conversation_stream(key) : keys::room_stream(key);
            const std::uint32_t scope = scope_of(seq_key);
            per_scope[scope].push_back(g->logs.size());
            scope_keys[scope].push_back(std::move(seq_key));
            scope_keys[scope].push_back(std::move(stream));
            g->logs.push_back({key, number_of(e[i + 1]), {}});
        }
        g->waiting = per_scope.size();
        if (g->waiting == 0) {
            g->answer(std::move(g->logs));
            return;
        }
        for (auto& [scope, which_logs] : per_scope) {
            eval(scripts::log_tips, scope_keys[scope], {},
                 [this, g, which = std::move(which_logs)](std::optional<redis_reply> tips) {
                     if (!is_ok(tips) || tips->type != redis_reply::kind::array ||
                         tips->elements.size() != which.size() * 2) {
                         if (tips && !g->failed) {
                             report(report_level::error, "reading a user's conversations failed: " + tips->text);
                         }
                         g->failed = true;
                     } else {
                         for (std::size_t i = 0; i < which.size(); ++i) {
                             g->logs[which[i]].activity = {number_of(tips->elements[2 * i]),
                                                           number_of(tips->elements[2 * i + 1])};
                         }
                     }
                     if (--g->waiting == 0) {
                         if (g->failed) {
                             g->answer(std::nullopt);
                         } else {
                             g->answer(std::move(g->logs));
                         }
                     }
                 });
        }
    });
}

}  // namespace parley::cluster
