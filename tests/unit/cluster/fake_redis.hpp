#pragma once

// The cluster's Redis played by the test: every command and script the node sends is kept, in
// order, until the test answers it (with a reply, or nullopt for one lost with the connection).
// Answers run on "the cluster's thread", which is the test's: queued, and run by run().

#include "rooms/cluster/cluster_event.hpp"
#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/cluster_scripts.hpp"
#include "rooms/cluster/redis_link.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace parley::cluster::tests {

// One command or script the node sent.
struct sent_call {
    std::string script;             // the script's name, or empty for a plain command
    std::vector<std::string> argv;  // a command's arguments
    std::vector<std::string> keys;  // a script's keys and arguments
    std::vector<std::string> args;
    redis_callback done;
};

inline std::string script_name(std::string_view text) {
    struct named {
        std::string_view text;
        const char* name;
    };
    const named all[] = {{scripts::claim_name, "claim_name"},     {scripts::release_name, "release_name"},
                         {scripts::renew_names, "renew_names"},   {scripts::heartbeat, "heartbeat"},
                         {scripts::say, "say"},                   {scripts::presence, "presence"},
                         {scripts::room_members_of, "room_members_of"}, {scripts::room_state, "room_state"},
                         {scripts::rooms_index, "rooms_index"},   {scripts::users_index, "users_index"},
                         {scripts::register_node, "register_node"}, {scripts::snapshot, "snapshot"},
                         {scripts::depart, "depart"},           {scripts::dm, "dm"},
                         {scripts::read_marker, "read_marker"}, {scripts::conversations, "conversations"},
                         {scripts::read_log, "read_log"},       {scripts::says, "says"},
                         {scripts::log_tips, "log_tips"},       {scripts::claim_lease, "claim_lease"},
                         {scripts::release_leases, "release_leases"}, {scripts::node_user, "node_user"}};
    for (const auto& s : all) {
        if (s.text == text) {
            return s.name;
        }
    }
    return "unknown script";
}

class fake_redis final : public redis_link {
public:
    // How many shards the node is told of (the fake holds all of them itself).
    std::uint32_t shards = 1;
    std::uint32_t shard_count() const override { return shards; }
    // Whether the node is told a script's keys must share a slot (a Redis Cluster).
    bool per_slot = false;
    bool scripts_per_slot() const override { return per_slot; }
    // The keys of every script call whose keys span more than one slot (Redis Cluster would
    // refuse it with CROSSSLOT).
    std::vector<std::vector<std::string>> cross_slot_calls;

    void post(std::function<void()> task) override { tasks_.push_back(std::move(task)); }

    void command(std::span<const std::string_view> argv, redis_callback done) override {
        calls.push_back({{}, {argv.begin(), argv.end()}, {}, {}, std::move(done)});
    }

    void script(std::string_view text, std::span<const std::string_view> keys, std::span<const std::string_view> args,
                redis_callback done) override {
        std::string name = script_name(text);
        if (!keys.empty() && std::any_of(keys.begin(), keys.end(), [&](std::string_view k) {
                return key_slot(k) != key_slot(keys.front());
            })) {
            cross_slot_calls.emplace_back(keys.begin(), keys.end());
        }
        if (name == "say") {
            split_batch(keys, args, std::move(done));
            return;
        }
        if (name == "says") {
            split_plain_batch(keys, args, std::move(done));
            return;
        }
        if (name == "read_log") {
            // Told apart by direction: a room started over reads its newest, a gap its oldest.
            name += args.size() > 3 && args[3] == "1" ? " newest" : " oldest";
        }
        calls.push_back({std::move(name), {}, {keys.begin(), keys.end()}, {args.begin(), args.end()}, std::move(done)});
    }

    // Subscriptions: kept in `subscribed`; each is confirmed (on_confirm, on the cluster's
    // thread) as Redis would, unless confirm_subscriptions is off (then the test calls it).
    void subscribe(std::string_view channel) override {
        const std::string name(channel);
        if (std::find(subscribed.begin(), subscribed.end(), name) != subscribed.end()) {
            return;
        }
        subscribed.push_back(name);
        if (confirm_subscriptions && on_confirm) {
            post([this, name] { on_confirm(name); });
        } else {
            unconfirmed.push_back(name);
        }
    }
    void unsubscribe(std::string_view channel) override {
        std::erase(subscribed, std::string(channel));
        ++unsubscribes;
    }
    std::vector<std::string> subscribed;
    std::vector<std::string> unconfirmed;  // subscribed while confirm_subscriptions was off
    std::size_t unsubscribes = 0;
    bool confirm_subscriptions = true;
    std::function<void(const std::string&)> on_confirm;

    // Runs the cluster's queued tasks (and what they queue) until none is left.
    bool run() {
        bool ran = false;
        while (!tasks_.empty()) {
            auto task = std::move(tasks_.front());
            tasks_.pop_front();
            task();
            ran = true;
        }
        return ran;
    }

    // Removes and returns the oldest call that is the script `name` (or the command whose first
    // argument is `name`); fails the test when there is none.
    std::optional<sent_call> take(std::string_view name) {
        for (auto it = calls.begin(); it != calls.end(); ++it) {
            if (it->script == name || (!it->argv.empty() && it->argv.front() == name)) {
                sent_call c = std::move(*it);
                calls.erase(it);
                return c;
            }
        }
        ADD_FAILURE() << "the node sent no " << name;
        return std::nullopt;
    }
    // take() without failing the test when there is none.
    std::optional<sent_call> take_if(std::string_view name) {
        return count(name) > 0 ? take(name) : std::nullopt;
    }
    std::size_t count(std::string_view name) const {
        std::size_t n = 0;
        for (const auto& c : calls) {
            n += c.script == name || (!c.argv.empty() && c.argv.front() == name) ? 1 : 0;
        }
        return n;
    }
    // Answers a call later, on the cluster's thread, as the transport does.
    void answer(sent_call& call, std::optional<redis_reply> reply) {
        post([done = std::move(call.done), reply = std::move(reply)]() mutable { done(std::move(reply)); });
    }
    // Answers every call still waiting with `reply` (e.g. the connection lost: nullopt).
    void answer_all(const std::optional<redis_reply>& reply) {
        for (auto& c : calls) {
            answer(c, reply);
        }
        calls.clear();
    }

    std::deque<sent_call> calls;  // sent, not answered yet, oldest first
    std::size_t say_batches = 0;  // calls of the say script (each holds one or more messages)
    std::vector<std::vector<std::string>> batch_keys;  // the keys of each of those calls
    std::vector<std::string> published_on;  // the channel of each room of each batch of plain says
    std::vector<std::string> published_blocks;  // and its says (said_batch.hpp), as given

private:
    // What a batch's messages share: answered once every message is.
    struct batch {
        std::vector<std::optional<redis_reply>> replies;
        std::size_t answered = 0;
        redis_callback done;
        // A batch of plain says: the says per room. Redis answers each room's first seq (its
        // says are numbered from there one by one).
        std::vector<std::size_t> per_room;
    };
    static redis_callback answer_part(const std::shared_ptr<batch>& shared, std::size_t m) {
        return [shared, m](std::optional<redis_reply> reply) {
            shared->replies[m] = std::move(reply);
            if (++shared->answered < shared->replies.size()) {
                return;
            }
            std::vector<redis_reply> elements;
            for (auto& r : shared->replies) {
                if (!r || r->is_error()) {
                    shared->done(std::move(r));
                    return;
                }
                elements.push_back(std::move(*r));
            }
            if (!shared->per_room.empty()) {
                std::vector<redis_reply> firsts;
                std::size_t room_first = 0;
                for (const std::size_t says : shared->per_room) {
                    for (std::size_t i = 1; i < says; ++i) {
                        EXPECT_EQ(elements[room_first + i].integer,
                                  elements[room_first].integer + static_cast<long long>(i))
                            << "the says script numbers a room's says one after another";
                    }
                    firsts.push_back(elements[room_first]);
                    room_first += says;
                }
                elements = std::move(firsts);
            }
            redis_reply whole;
            whole.type = redis_reply::kind::array;
            whole.elements = std::move(elements);
            shared->done(std::move(whole));
        };
    }

    // A call of the says script (plain says, grouped by room): each say is kept as a "say" call
    // laid out as split_batch lays one out (its keys: the room's seq counter and stream).
    void split_plain_batch(std::span<const std::string_view> keys, std::span<const std::string_view> args,
                           redis_callback done) {
        ++say_batches;
        batch_keys.emplace_back(keys.begin(), keys.end());
        // ARGV: stream length, R, per room: count, channel, its says (each say's x, joined by
        // newlines); the room is its channel's.
        const std::size_t rooms = std::stoul(std::string(args[1]));
        auto shared = std::make_shared<batch>();
        shared->done = std::move(done);
        for (std::size_t room = 0; room < rooms; ++room) {
            published_on.emplace_back(args[3 + 3 * room]);
            shared->per_room.push_back(std::stoul(std::string(args[2 + 3 * room])));
        }
        std::size_t count = 0;
        for (const std::size_t says : shared->per_room) {
            count += says;
        }
        shared->replies.resize(count);
        std::size_t m = 0;
        for (std::size_t room = 0; room < rooms; ++room) {
            const std::string_view block = args[4 + 3 * room];
            published_blocks.emplace_back(block);
            const std::string_view channel = args[3 + 3 * room];
            const std::string_view name = keys::room_of_channel(channel);
            // The block (said_batch.hpp): each say's message JSON written back as a reader does.
            const std::int64_t read = said_batch::read(block, [&](const said_batch::say& say) {
                const std::size_t colon = say.said.find(':');
                std::string before;
                protocol::append_message_before_seq(before, name, say.from, say.text_json, say.ts);
                std::vector<std::string> message = {std::string(channel),
                                                    message_event_head(say.node, name, {}),
                                                    std::to_string(say.ts),
                                                    std::string(say.ack),
                                                    std::move(before),
                                                    "}",
                                                    std::string(args[0]),
                                                    std::string(name),
                                                    std::string(say.node),
                                                    std::string(say.said.substr(colon + 1)),
                                                    std::to_string(say.number),
                                                    "0"};
                calls.push_back({"say",
                                 {},
                                 {std::string(keys[2 * room]), std::string(keys[2 * room + 1])},
                                 std::move(message),
                                 answer_part(shared, m++)});
            });
            EXPECT_EQ(read, static_cast<std::int64_t>(shared->per_room[room])) << "a malformed block of says: " << block;
        }
    }

    // A call of the say script holds a batch of messages (cluster_scripts.hpp). Each message is
    // kept as a call of its own, "say", with its four keys and its arguments laid out as one
    // message's: its room's channel, head, ts, ack, JSON before, JSON after, stream length, room
    // (read back from the channel's name), node,
    // run, number, sent again, then an event's further arguments. The batch is answered once
    // every message is: an array of their replies, or nullopt (or the error) when the test lost
    // (or refused) any of them, as Redis answers the whole call.
    void split_batch(std::span<const std::string_view> keys, std::span<const std::string_view> args,
                     redis_callback done) {
        ++say_batches;
        batch_keys.emplace_back(keys.begin(), keys.end());
        // ARGV: stream length, node, run, N, then per message: head, ts, ack, JSON before, JSON
        // after, channel, number, sent again, event arguments.
        const std::size_t count = std::stoul(std::string(args[3]));
        auto shared = std::make_shared<batch>();
        shared->replies.resize(count);
        shared->done = std::move(done);
        std::size_t at = 4;
        for (std::size_t m = 0; m < count; ++m) {
            const std::string_view channel = args[at + 5];
            std::vector<std::string> message = {std::string(channel),
                                                std::string(args[at]),
                                                std::string(args[at + 1]),
                                                std::string(args[at + 2]),
                                                std::string(args[at + 3]),
                                                std::string(args[at + 4]),
                                                std::string(args[0]),
                                                std::string(keys::room_of_channel(channel)),
                                                std::string(args[1]),
                                                std::string(args[2]),
                                                std::string(args[at + 6]),
                                                std::string(args[at + 7])};
            std::size_t rest = at + 8;
            const std::size_t settings = std::stoul(std::string(args[rest]));
            const std::size_t revisions = std::stoul(std::string(args[rest + 2 + 2 * settings]));
            const std::size_t end = rest + 3 + 2 * settings + 3 * revisions;
            message.insert(message.end(), args.begin() + static_cast<std::ptrdiff_t>(rest),
                           args.begin() + static_cast<std::ptrdiff_t>(end));
            at = end;
            std::vector<std::string> message_keys(keys.begin() + static_cast<std::ptrdiff_t>(4 * m),
                                                  keys.begin() + static_cast<std::ptrdiff_t>(4 * m + 4));
            calls.push_back({"say", {}, std::move(message_keys), std::move(message),
                             answer_part(shared, m)});
        }
    }

    std::deque<std::function<void()>> tasks_;
};

// Replies, built the way Redis sends them.
inline redis_reply integer_reply(long long n) {
    redis_reply r;
    r.type = redis_reply::kind::integer;
    r.integer = n;
    return r;
}
inline redis_reply string_reply(std::string text) {
    redis_reply r;
    r.type = redis_reply::kind::string;
    r.text = std::move(text);
    return r;
}
inline redis_reply array_reply(std::vector<redis_reply> elements = {}) {
    redis_reply r;
    r.type = redis_reply::kind::array;
    r.elements = std::move(elements);
    return r;
}
inline redis_reply strings_reply(const std::vector<std::string>& texts) {
    std::vector<redis_reply> elements;
    for (const auto& t : texts) {
        elements.push_back(string_reply(t));
    }
    return array_reply(std::move(elements));
}

}  // namespace parley::cluster::tests
