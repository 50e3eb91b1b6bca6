#pragma once

// What the cluster node's unit tests share: a node over the fake Redis, serving a chat_world of
// two workers; replies and channel events built as Redis and the scripts make them.

#include "protocol/frame_encoder.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/cluster_node.hpp"
#include "rooms/room.hpp"
#include "tests/token_minter.hpp"
#include "tests/unit/cluster/fake_redis.hpp"
#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace parley::cluster::tests {

using rooms::tests::chat_world;
using rooms::tests::json;
using rooms::tests::test_client;

inline constexpr std::int64_t cluster_epoch = 1'600'000'000'000;  // the cluster's, older than this node's start

inline cluster_options node_options() {
    cluster_options o;
    o.node_id = "a";
    o.name_ttl = std::chrono::milliseconds(3000);
    o.stream_length = 100;
    o.history_per_room = 50;
    return o;
}

// Token mode (what is kept for identities, roles), up to three sessions per user.
inline config::settings token_settings() {
    config::settings s = rooms::tests::test_settings();
    s.auth_mode = config::auth_mode::token;
    s.auth_token_secret = test_tokens::token_secret;
    s.max_sessions_per_user = 3;
    return s;
}

inline redis_reply error_reply(std::string text) {
    redis_reply r;
    r.type = redis_reply::kind::error;
    r.text = std::move(text);
    return r;
}

inline std::string json_of(const protocol::shared_frame& frame) {
    return std::string(protocol::frame_payload(frame.view()));
}

// A say as the say script publishes it on the channel.
inline std::string message_event(std::string_view origin, std::string_view room, std::string_view from,
                          std::string_view text, std::int64_t seq, std::string_view ack = {}) {
    std::string out = message_event_head(origin, room, from);
    out.append(std::to_string(seq)).append("\n").append(std::to_string(1000 + seq)).append("\n");
    out.append(ack).append("\n");
    out.append(json_of(protocol::encode_message(room, from, text, seq, 1000 + seq)));
    return out;
}

// A stream entry as XRANGE (and the read_log script) returns it.
inline redis_reply stream_entry_reply(std::string_view room, std::string_view from, std::string_view text,
                                      std::int64_t seq, std::string_view origin = "b", std::string_view ack = {}) {
    return array_reply({string_reply(keys::stream_id(seq)),
                        strings_reply({"j", json_of(protocol::encode_message(room, from, text, seq, 1000 + seq)), "t",
                                       std::to_string(1000 + seq), "n", std::string(origin) + ":1:1", "a",
                                       std::string(ack)})});
}

struct other_node {
    std::string id;
    std::vector<std::string> users;        // (logged in there: answered to users_index reads by the test)
    std::vector<std::string> memberships;  // "ROOM\nUSER"
};

// The snapshot script's answer: the epoch and the other live nodes.
inline redis_reply snapshot_reply(const std::vector<other_node>& nodes) {
    std::vector<std::string> ids;
    for (const auto& n : nodes) {
        ids.push_back(n.id);
    }
    return array_reply({string_reply(std::to_string(cluster_epoch)), strings_reply(ids)});
}

// A room_state answer: the room's seq, its membership version and its members on other nodes.
inline redis_reply room_state_reply(std::int64_t seq, const std::vector<other_node>& nodes = {},
                                    std::string_view room = {}, std::int64_t version = 1) {
    std::vector<std::string> members;
    for (const auto& n : nodes) {
        for (const auto& field : n.memberships) {
            const std::size_t cut = field.find('\n');
            if (field.substr(0, cut) == room) {
                members.push_back(field.substr(cut + 1));
                members.push_back(n.id);
            }
        }
    }
    return array_reply({string_reply(std::to_string(seq)), string_reply(std::to_string(version)), strings_reply(members)});
}

// The room of a room_state call (its first key, the room's seq counter "parley:{pN}:room:R:seq").
inline std::string room_of_state_call(const sent_call& call) {
    const std::string& key = call.keys.at(0);
    const std::size_t start = key.find("}:room:") + 7;
    return key.substr(start, key.size() - start - 4);
}

// A join or leave as scripts::presence publishes it on the room's channel.
inline std::string presence_event(event_type type, std::string_view node, std::string_view room, std::string_view user,
                                  std::int64_t version) {
    return format_event(type, node, room, user,
                        std::to_string(version) + "\n" +
                            json_of(protocol::encode_presence(room, user, type == event_type::join)));
}

inline std::vector<std::int64_t> seqs_received(const test_client& c) {
    std::vector<std::int64_t> out;
    for (const auto& m : c.received("message")) {
        out.push_back(m["seq"].get<std::int64_t>());
    }
    return out;
}

class cluster_node_test : public ::testing::Test {
protected:
    explicit cluster_node_test(config::settings settings = rooms::tests::test_settings())
        : world_(std::move(settings), 2, rooms::tests::test_epoch, node_.make_bus(), node_.make_history_store()) {
        world_.hub().set_cluster(&node_);
        node_.attach(world_.hub());
        redis_.on_confirm = [this](const std::string& channel) { node_.on_subscribed(channel); };
    }

    // A join into a room the node does not feed yet: it subscribes (Redis confirms at once),
    // reads the room's seq (answered `seq`) and catches the room up; rebases are answered with
    // newest_first. Returns the joined reply.
    json join_fed(test_client& c, const std::string& room, long long seq = 0,
                  const std::vector<redis_reply>& newest_first = {}) {
        c.send({{"type", "join"}, {"room", room}});
        settle();
        if (redis_.count("room_state") > 0) {
            auto state = redis_.take("room_state");
            redis_.answer(*state, room_state_reply(seq, remote_, room));
            settle();
            answer_rebases(newest_first);
        }
        json reply = c.take_one();
        EXPECT_EQ(reply.value("type", ""), "joined") << reply.dump();
        return reply;
    }

    // The rooms' channels subscribed (users' channels left out).
    std::vector<std::string> room_subscriptions() const {
        std::vector<std::string> out;
        for (const std::string& channel : redis_.subscribed) {
            if (!keys::room_of_channel(channel).empty()) {
                out.push_back(channel);
            }
        }
        return out;
    }

    // Runs the cluster's thread and every worker until nothing is left to run.
    void settle() {
        do {
            world_.run();
            redis_.run();
            world_.run();
        } while (redis_.run());
    }

    // A client whose login waits for the cluster to grant its name (a token when not empty).
    test_client& start_login(std::string_view user, std::uint32_t worker = 0, const std::string& token = {}) {
        test_client& c = world_.connect(worker);
        json request{{"type", "login"}, {"user", user}};
        if (!token.empty()) {
            request["token"] = token;
        }
        c.send(request);
        settle();
        // Up: Redis grants the claim. Down: the node vouches for the name itself, at once.
        if (redis_.count("claim_name") > 0) {
            auto claim = redis_.take("claim_name");
            redis_.answer(*claim, integer_reply(1));
            settle();
        }
        return c;
    }

    // A client logged in through the cluster (its name claimed first).
    test_client& login(std::string_view user, std::uint32_t worker = 0) {
        test_client& c = start_login(user, worker);
        json reply = c.take_one();
        EXPECT_EQ(reply.value("type", ""), "welcome") << reply.dump();
        return c;
    }

    // Redis answers: the node syncs. `before_marker` are channel events published before the
    // snapshot's marker (the snapshot holds them), `after_marker` after it (applied after it).
    void sync(const std::vector<other_node>& nodes, const std::vector<std::pair<std::string, int>>& rooms,
              const std::vector<std::string>& before_marker = {}, const std::vector<std::string>& after_marker = {},
              const std::function<void()>& before_snapshot_answer = {}) {
        node_.on_redis_up();
        settle();
        auto snapshot = redis_.take("snapshot");
        ASSERT_TRUE(snapshot);
        for (const auto& e : before_marker) {
            node_.on_channel_message(e);
        }
        node_.on_channel_message(snapshot->args.at(3));  // the marker the script publishes
        for (const auto& e : after_marker) {
            node_.on_channel_message(e);
        }
        settle();
        if (before_snapshot_answer) {
            before_snapshot_answer();
        }
        redis_.answer(*snapshot, snapshot_reply(nodes));
        settle();
        remote_ = nodes;
        answer_room_states(rooms);
    }

    // Answers every room_state call waiting: seqs from `rooms` (0 for one not listed), members
    // from the nodes of the last sync.
    void answer_room_states(const std::vector<std::pair<std::string, int>>& rooms = {}) {
        while (redis_.count("room_state") > 0) {
            auto state = redis_.take("room_state");
            const std::string room = room_of_state_call(*state);
            int seq = 0;
            for (const auto& [name, s] : rooms) {
                if (name == room) {
                    seq = s;
                }
            }
            redis_.answer(*state, room_state_reply(seq, remote_, room));
            settle();
        }
    }

    // Answers the rooms started over from their streams (read_log, newest first) with these
    // entries. Then each room's settings (HGETALL), none.
    void answer_rebases(const std::vector<redis_reply>& newest_first = {}) {
        while (redis_.count("read_log newest") > 0 || redis_.count("HGETALL") > 0) {
            while (redis_.count("read_log newest") > 0) {
                auto call = redis_.take("read_log newest");
                redis_.answer(*call, array_reply(newest_first));
            }
            settle();
            while (redis_.count("HGETALL") > 0) {
                auto call = redis_.take("HGETALL");
                redis_.answer(*call, array_reply({}));
            }
            settle();
        }
    }

    fake_redis redis_;
    cluster_node node_{redis_, node_options()};
    std::vector<other_node> remote_;  // the other nodes of the last sync (their rooms' members)
    rooms::tests::chat_world world_;
};

}  // namespace parley::cluster::tests
