// Rooms a node feeds (cluster_node_feeds.cpp), with Redis played by the test: a join into a room
// not fed here waits until it is subscribed and caught up, the requests behind it wait too, a
// room nobody here is in stops being fed, and a sync subscribes the rooms joined while Redis was
// away before it reads its snapshot.

#include "rooms/cluster/cluster_keys.hpp"
#include "tests/unit/cluster/node_fixture.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace parley::cluster::tests {
namespace {

using rooms::tests::json;
using rooms::tests::test_client;

const std::string lobby_channel = keys::room_channel("lobby");

std::vector<std::int64_t> history_seqs(const json& joined) {
    std::vector<std::int64_t> out;
    for (const json& m : joined.value("history", json::array())) {
        out.push_back(m.value("seq", std::int64_t{0}));
    }
    return out;
}

TEST_F(cluster_node_test, a_join_into_a_room_not_fed_here_waits_until_it_is_caught_up) {
    test_client& alice = login("alice");
    sync({}, {});
    redis_.confirm_subscriptions = false;
    alice.send({{"type", "join"}, {"room", "lobby"}, {"id", 1}});
    alice.send({{"type", "say"}, {"room", "lobby"}, {"text", "hi"}, {"id", 2}});
    settle();
    EXPECT_TRUE(alice.take().empty()) << "answered before the room was fed";
    EXPECT_EQ(room_subscriptions(), (std::vector<std::string>{lobby_channel}));
    EXPECT_EQ(redis_.count("say"), 0u) << "the say waits behind the join";
    EXPECT_EQ(redis_.count("room_state"), 0u) << "nothing is read before the subscription holds";

    node_.on_subscribed(lobby_channel);
    settle();
    auto get = redis_.take("room_state");
    ASSERT_TRUE(get);
    EXPECT_EQ(get->keys, (std::vector<std::string>{keys::room_seq("lobby"), keys::room_members("lobby")}));
    // Said after the subscription, before the seq was read: it waits for the room.
    node_.on_channel_message(message_event("b", "lobby", "bob", "three", 3));
    redis_.answer(*get, room_state_reply(2));
    settle();
    auto fetch = redis_.take("read_log oldest");
    ASSERT_TRUE(fetch);
    EXPECT_EQ(fetch->args.at(0), "1");
    EXPECT_EQ(fetch->args.at(1), "2");
    EXPECT_TRUE(alice.take().empty()) << "answered before the room was caught up";
    redis_.answer(*fetch, array_reply({stream_entry_reply("lobby", "bob", "one", 1),
                                       stream_entry_reply("lobby", "bob", "two", 2)}));
    settle();

    const json joined = alice.take_one();
    EXPECT_EQ(joined.value("type", ""), "joined") << joined.dump();
    EXPECT_EQ(history_seqs(joined), (std::vector<std::int64_t>{1, 2, 3}));
    EXPECT_TRUE(alice.received("message").empty()) << "nothing twice";
    EXPECT_EQ(redis_.count("say"), 1u) << "then the say that waited";
    EXPECT_EQ(node_.health().rooms_fed, 1u);
}

TEST_F(cluster_node_test, a_room_nobody_here_is_in_stops_being_fed_after_two_heartbeats) {
    test_client& alice = login("alice");
    sync({}, {});
    join_fed(alice, "lobby");
    alice.send({{"type", "leave"}, {"room", "lobby"}});
    settle();
    node_.heartbeat();
    settle();
    EXPECT_EQ(room_subscriptions(), (std::vector<std::string>{lobby_channel})) << "kept for a while";
    node_.heartbeat();
    settle();
    EXPECT_TRUE(room_subscriptions().empty());
    EXPECT_EQ(node_.health().rooms_fed, 0u);

    // A message still on its way is dropped: the room is not caught up for nobody.
    node_.on_channel_message(message_event("b", "lobby", "bob", "late", 5));
    settle();
    EXPECT_EQ(redis_.count("read_log oldest"), 0u);
    EXPECT_EQ(redis_.count("read_log newest"), 0u);

    // Joining again feeds it again.
    alice.take();
    alice.send({{"type", "join"}, {"room", "lobby"}});
    settle();
    EXPECT_EQ(room_subscriptions(), (std::vector<std::string>{lobby_channel}));
    EXPECT_EQ(redis_.count("room_state"), 1u);
}

TEST_F(cluster_node_test, a_room_someone_here_is_in_stays_fed) {
    test_client& alice = login("alice");
    sync({}, {});
    join_fed(alice, "lobby");
    for (int i = 0; i < 3; ++i) {
        node_.heartbeat();
        settle();
    }
    EXPECT_EQ(room_subscriptions(), (std::vector<std::string>{lobby_channel}));
    EXPECT_EQ(redis_.unsubscribes, 0u);
}

TEST_F(cluster_node_test, a_room_joined_while_redis_was_away_is_subscribed_before_the_snapshot) {
    test_client& alice = login("alice");  // Redis away: served here alone
    world_.join(alice, "lobby");
    redis_.confirm_subscriptions = false;
    node_.on_redis_up();
    settle();
    EXPECT_EQ(room_subscriptions(), (std::vector<std::string>{lobby_channel}));
    EXPECT_EQ(redis_.count("snapshot"), 0u) << "read before the room's messages could arrive";
    node_.on_subscribed(lobby_channel);
    settle();
    auto snapshot = redis_.take("snapshot");
    ASSERT_TRUE(snapshot);
    auto state = redis_.take("room_state");
    ASSERT_TRUE(state) << "its seq and members are read with the snapshot";
    EXPECT_EQ(room_of_state_call(*state), "lobby");
}

TEST_F(cluster_node_test, requests_behind_a_waiting_join_are_bounded) {
    test_client& alice = login("alice");
    sync({}, {});
    redis_.confirm_subscriptions = false;
    alice.send({{"type", "join"}, {"room", "lobby"}, {"id", 1}});
    for (int i = 0; i < 70; ++i) {
        alice.send({{"type", "users"}, {"id", 100 + i}});
    }
    settle();
    const auto refused = alice.take();
    ASSERT_EQ(refused.size(), 6u) << "64 wait; the rest are refused at once";
    for (const json& r : refused) {
        EXPECT_EQ(r.value("code", ""), "rate_limited") << r.dump();
    }
    node_.on_subscribed(lobby_channel);
    settle();
    auto get = redis_.take("room_state");
    ASSERT_TRUE(get);
    redis_.answer(*get, room_state_reply(0));
    settle();
    auto users = redis_.take("users_index");  // the waiting users requests, answered by one read
    ASSERT_TRUE(users);
    redis_.answer(*users, strings_reply({"alice", "a"}));
    settle();
    const auto answers = alice.take();
    ASSERT_EQ(answers.size(), 65u);
    EXPECT_EQ(answers.front().value("type", ""), "joined");
    EXPECT_EQ(answers.back().value("re", 0), 163);
}

}  // namespace
}  // namespace parley::cluster::tests
