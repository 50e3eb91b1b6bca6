// The says half of the node: says and room events on their way to Redis, sent in batches, and
// their answers. A batch is what the cluster's loop gathered while the node's previous batch was
// on its way: at most one batch is out at a time unless another command must follow the says
// (which keeps their order), so a busy node sends more says per script call, and Redis spends
// less per say, while an idle one sends each at once.

#include "rooms/cluster/cluster_node.hpp"

#include "protocol/error_code.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/cluster_scripts.hpp"
#include "rooms/cluster/said_batch.hpp"
#include "rooms/session_task.hpp"

#include <algorithm>
#include <deque>

namespace parley::cluster {

namespace {

// At most this many messages per script call: Redis runs a script alone, so one call must not
// hold it long.
constexpr std::size_t most_per_call = 256;

}  // namespace

void cluster_node::send_say(pending_say&& say, bool resend) {
    unsent_.emplace_back(std::move(say), resend);
    if (!flush_posted_) {
        flush_posted_ = true;
        link_.post([this] {
            flush_posted_ = false;
            flush_says(true);
        });
    }
}

void cluster_node::flush_says(bool hold_busy) {
    if (unsent_.empty() || stopped_) {
        return;
    }
    const bool one_scope = link_.shard_count() <= 1 && !link_.scripts_per_slot();
    const auto scope_of_say = [&](const pending_say& say) {
        return one_scope ? 0U : scope_of(keys::room_seq(say.room));
    };
    // The says of a scope whose last batch is still out wait for its answer (with those that
    // come meanwhile); the rest go now. A room lives in one scope, so its says keep their order.
    std::vector<std::pair<pending_say, bool>> now;
    std::vector<std::uint32_t> scopes;
    {
        std::vector<std::pair<pending_say, bool>> all = std::move(unsent_);
        unsent_.clear();
        for (auto& entry : all) {
            const std::uint32_t scope = scope_of_say(entry.first);
            const auto out = says_out_.find(scope);
            if (hold_busy && out != says_out_.end() && out->second > 0) {
                unsent_.push_back(std::move(entry));
            } else {
                now.push_back(std::move(entry));
                scopes.push_back(scope);
            }
        }
    }
    std::size_t at = 0;
    while (at < now.size()) {
        // The longest run that one call takes: plain says for the fast script, or events and
        // says sent again for the general one.
        const auto plain = [&](std::size_t i) {
            return !now[i].second && !now[i].first.event && now[i].first.text_size > 0;
        };
        const bool fast = plain(at);
        std::size_t end = at + 1;
        while (end < now.size() && end - at < most_per_call && plain(end) == fast) {
            ++end;
        }
        // One call per scope: a script runs on one server (on a Redis Cluster, in one slot).
        std::vector<bool> taken(end - at, false);
        for (std::size_t first = at; first < end; ++first) {
            if (taken[first - at]) {
                continue;
            }
            std::vector<const pending_say*> part;
            std::vector<bool> resent;
            for (std::size_t i = first; i < end; ++i) {
                if (!taken[i - at] && scopes[i] == scopes[first]) {
                    taken[i - at] = true;
                    resent.push_back(now[i].second);
                    // Kept until answered; a deque's elements stay where they are as it grows.
                    in_flight_.push_back(std::move(now[i].first));
                    part.push_back(&in_flight_.back());
                }
            }
            ++says_out_[scopes[first]];
            if (fast) {
                send_plain_says(part, scopes[first]);
            } else {
                send_general(part, resent, scopes[first]);
            }
        }
        at = end;
    }
}

void cluster_node::send_plain_says(const std::vector<const pending_say*>& part, std::uint32_t scope) {
    // Grouped by room, each room's says in their order (the script numbers a room's says with
    // one INCRBY). Says of different rooms need no order between them.
    std::vector<std::string_view> rooms_named;
    std::vector<std::vector<const pending_say*>> per_room;
    for (const pending_say* say : part) {
        const auto found = std::find(rooms_named.begin(), rooms_named.end(), say->room);
        const auto room = static_cast<std::size_t>(found - rooms_named.begin());
        if (room == rooms_named.size()) {
            rooms_named.push_back(say->room);
            per_room.emplace_back();
        }
        per_room[room].push_back(say);
    }
    // The arguments as views of strings that live until script() has copied them (a deque:
    // its strings never move, so the views stay valid as it grows).
    std::deque<std::string> owned;
    std::vector<std::string_view> key_views;
    std::vector<std::string_view> args = {owned.emplace_back(std::to_string(options_.stream_length)),
                                          owned.emplace_back(std::to_string(rooms_named.size()))};
    std::vector<std::uint64_t> numbers;
    numbers.reserve(part.size());
    std::vector<std::size_t> counts;
    counts.reserve(rooms_named.size());
    for (std::size_t r = 0; r < rooms_named.size(); ++r) {
        key_views.push_back(owned.emplace_back(keys::room_seq(rooms_named[r])));
        key_views.push_back(owned.emplace_back(keys::room_stream(rooms_named[r])));
        args.push_back(owned.emplace_back(std::to_string(per_room[r].size())));
        args.push_back(owned.emplace_back(keys::room_channel(rooms_named[r])));
        // The room's says as a block (said_batch.hpp): stored and published as it is, and
        // every reader writes the rest of each message's JSON back.
        std::string& says = owned.emplace_back();
        const said_batch::origin origin = said_batch::start(says, options_.node_id, incarnation_,
                                                             per_room[r].front()->nonce, per_room[r].front()->ts);
        for (const pending_say* say : per_room[r]) {
            said_batch::append(says, origin, say->nonce, say->ts, say->ack, say->from,
                               std::string_view(say->json_before).substr(say->text_at, say->text_size));
            numbers.push_back(say->nonce);
        }
        args.push_back(says);
        counts.push_back(per_room[r].size());
    }
    link_.script(scripts::says, key_views, args, answer_batch(std::move(numbers), scope, std::move(counts)));
}

void cluster_node::send_general(const std::vector<const pending_say*>& part, const std::vector<bool>& resent,
                                std::uint32_t scope) {
    std::deque<std::string> owned;
    std::vector<std::string_view> key_views;
    key_views.reserve(part.size() * 4);
    std::vector<std::string_view> args = {{}, options_.node_id, incarnation_, {}};
    args[0] = owned.emplace_back(std::to_string(options_.stream_length));
    args[3] = owned.emplace_back(std::to_string(part.size()));
    std::vector<std::uint64_t> numbers;
    numbers.reserve(part.size());
    for (std::size_t i = 0; i < part.size(); ++i) {
        const pending_say& say = *part[i];
        numbers.push_back(say.nonce);
        for (std::string k : {keys::room_seq(say.room), keys::room_stream(say.room), keys::room_settings(say.room),
                              keys::room_revised(say.room)}) {
            key_views.push_back(owned.emplace_back(std::move(k)));
        }
        const std::string_view head = owned.emplace_back(message_event_head(options_.node_id, say.room, say.from));
        const std::string_view ts = owned.emplace_back(std::to_string(say.ts));
        const std::string_view number = owned.emplace_back(std::to_string(say.nonce));
        const std::string_view channel = owned.emplace_back(keys::room_channel(say.room));
        args.insert(args.end(),
                    {head, ts, say.ack, say.json_before, say.json_after, channel, number, resent[i] ? "1" : "0"});
        if (say.event) {
            args.insert(args.end(), say.event_args.begin(), say.event_args.end());
        } else {
            args.insert(args.end(), {"0", "0", "0"});
        }
    }
    link_.script(scripts::say, key_views, args, answer_batch(std::move(numbers), scope));
}

redis_callback cluster_node::answer_batch(std::vector<std::uint64_t> numbers, std::uint32_t scope,
                                          std::vector<std::size_t> per_room) {
    return [this, numbers = std::move(numbers), scope, per_room = std::move(per_room)](std::optional<redis_reply> reply) {
        if (auto out = says_out_.find(scope); out != says_out_.end() && --out->second == 0) {
            says_out_.erase(out);
        }
        if (!per_room.empty() && reply && reply->is_array()) {
            // scripts::says answers each room's first seq: its says have that seq and the next ones.
            std::vector<redis_reply> seqs;
            seqs.reserve(numbers.size());
            for (std::size_t r = 0; r < per_room.size() && r < reply->elements.size(); ++r) {
                const redis_reply& first = reply->elements[r];
                for (std::size_t i = 0; i < per_room[r] && first.is_integer(); ++i) {
                    seqs.push_back({redis_reply::kind::integer, first.integer + static_cast<std::int64_t>(i), {}, {}});
                }
            }
            reply->elements = std::move(seqs);
        }
        for (std::size_t i = 0; i < numbers.size(); ++i) {
            if (!reply || reply->is_error()) {
                on_say_answer(numbers[i], reply);
            } else if (reply->is_array() && i < reply->elements.size()) {
                on_say_answer(numbers[i], std::move(reply->elements[i]));
            } else {
                on_say_answer(numbers[i],
                              redis_reply{redis_reply::kind::error, 0, "the say script gave no answer for it", {}});
            }
        }
        flush_says(true);  // what waited for this answer
    };
}

void cluster_node::on_say_answer(std::uint64_t nonce, std::optional<redis_reply> reply) {
    auto it = std::find_if(in_flight_.begin(), in_flight_.end(), [nonce](const pending_say& p) { return p.nonce == nonce; });
    if (it == in_flight_.end()) {
        return;
    }
    if (!reply) {
        unanswered_.push_back(std::move(*it));  // sent again on return
    } else if (reply->is_integer() && reply->integer < 0) {
        // An edit or delete whose message was deleted before its turn.
        refuse_event(*it, protocol::error_code::message_not_found);
    } else if (reply->is_error()) {
        report(report_level::error, "a message to room '" + it->room + "' was refused by redis: " + reply->text);
        // Told with or without an id: a say that went nowhere is never lost in silence. (A say
        // kept while detached was delivered here then; only the shared history lacks it.)
        if (it->event) {
            refuse_event(*it, protocol::error_code::unavailable);
        } else if (it->from_session) {
            auto refused = protocol::encode_error(protocol::error_code::unavailable,
                                                  "the message could not be stored by the cluster", it->ack_id);
            rooms::post_to_session(*hub_, it->sender,
                                   [refused](rooms::chat_session& s) { s.output().send(refused); });
        }
    } else {
        messages_sequenced_.fetch_add(1, std::memory_order_relaxed);
    }
    in_flight_.erase(it);
}


}  // namespace parley::cluster
