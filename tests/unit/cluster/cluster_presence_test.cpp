// Presence per room (cluster_node_presence.cpp), with Redis played by the test: a join goes to
// the room's members hash and channel, not to every node; a node feeding a room applies the
// joins and leaves of its channel in version order, once; a dead node's members leave each room
// through one script per room; the room list is read from the partitions and kept a second.

#include "rooms/cluster/cluster_keys.hpp"
#include "tests/unit/cluster/node_fixture.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace parley::cluster::tests {
namespace {

using rooms::tests::json;
using rooms::tests::test_client;

std::vector<std::string> presence_of(const test_client& c, bool joined) {
    std::vector<std::string> out;
    for (const json& p : c.received("presence")) {
        if (p.value("event", "") == (joined ? "join" : "leave")) {
            out.push_back(p.value("user", ""));
        }
    }
    return out;
}

TEST_F(cluster_node_test, a_join_is_told_on_the_rooms_channel_with_its_members) {
    sync({}, {});
    test_client& alice = login("alice");
    join_fed(alice, "lobby");
    auto told = redis_.take("presence");
    ASSERT_TRUE(told);
    EXPECT_EQ(told->keys, (std::vector<std::string>{keys::room_members("lobby"), keys::rooms_index(partition_of("lobby"))}));
    EXPECT_EQ(told->args.at(0), "J");
    EXPECT_EQ(told->args.at(1), "alice");
    EXPECT_EQ(told->args.at(2), "a");
    EXPECT_EQ(told->args.at(4), keys::room_channel("lobby")) << "only the nodes feeding the room hear of it";
    EXPECT_EQ(key_slot(told->keys.at(0)), key_slot(told->keys.at(1))) << "one slot";
    auto mine = redis_.take("HSET");
    ASSERT_TRUE(mine);
    EXPECT_EQ(mine->argv.at(1), keys::node_rooms("a")) << "where a dead node's members are found";

    alice.send({{"type", "leave"}, {"room", "lobby"}});
    settle();
    auto left = redis_.take("presence");
    ASSERT_TRUE(left);
    EXPECT_EQ(left->args.at(0), "L");
}

TEST_F(cluster_node_test, a_fed_room_applies_its_channels_joins_and_leaves_in_version_order_once) {
    sync({{"b", {"bob", "carol", "dave"}, {"lobby\nbob"}}}, {});
    test_client& alice = login("alice");
    alice.send({{"type", "join"}, {"room", "lobby"}});
    settle();
    auto state = redis_.take("room_state");
    ASSERT_TRUE(state);
    // Heard while the members are read: carol's join is in the read (version 7), dave's is not.
    node_.on_channel_message(presence_event(event_type::join, "b", "lobby", "carol", 7));
    node_.on_channel_message(presence_event(event_type::join, "b", "lobby", "dave", 8));
    redis_.answer(*state, array_reply({string_reply("0"), string_reply("7"),
                                       strings_reply({"bob", "b", "carol", "b"})}));
    settle();
    answer_rebases();
    const json joined = alice.take_one();
    ASSERT_EQ(joined.value("type", ""), "joined") << joined.dump();
    std::vector<std::string> members;
    for (const json& m : joined["members"]) {
        members.push_back(m.is_string() ? m.get<std::string>() : m.value("user", ""));
    }
    std::sort(members.begin(), members.end());
    EXPECT_EQ(members, (std::vector<std::string>{"alice", "bob", "carol", "dave"}));

    // Old or repeated versions change nothing; the next one is applied once.
    node_.on_channel_message(presence_event(event_type::leave, "b", "lobby", "bob", 6));
    node_.on_channel_message(presence_event(event_type::join, "b", "lobby", "dave", 8));
    node_.on_channel_message(presence_event(event_type::leave, "b", "lobby", "carol", 9));
    node_.on_channel_message(presence_event(event_type::leave, "b", "lobby", "carol", 9));
    settle();
    EXPECT_TRUE(presence_of(alice, true).empty());
    EXPECT_EQ(presence_of(alice, false), (std::vector<std::string>{"carol"}));
}

TEST_F(cluster_node_test, joins_of_a_room_not_fed_here_are_not_kept) {
    sync({{"b", {"bob"}, {}}}, {});
    node_.on_channel_message(presence_event(event_type::join, "b", "elsewhere", "bob", 1));
    settle();
    EXPECT_EQ(world_.hub().rooms().find("elsewhere"), nullptr) << "a node holds the members of its rooms only";
}

TEST_F(cluster_node_test, a_room_no_longer_fed_forgets_its_members_elsewhere) {
    sync({{"b", {"bob"}, {"lobby\nbob"}}}, {});
    test_client& alice = login("alice");
    join_fed(alice, "lobby");
    ASSERT_NE(world_.hub().rooms().find("lobby"), nullptr);
    alice.send({{"type", "leave"}, {"room", "lobby"}});
    settle();
    node_.heartbeat();
    node_.heartbeat();
    settle();
    EXPECT_TRUE(room_subscriptions().empty());
    EXPECT_EQ(world_.hub().rooms().find("lobby"), nullptr) << "bob kept the room open here";
}

TEST_F(cluster_node_test, a_dead_nodes_members_leave_each_room_through_its_members_hash) {
    sync({{"b", {"bob"}, {"lobby\nbob"}}}, {});
    test_client& alice = login("alice");
    join_fed(alice, "lobby");
    redis_.calls.clear();

    // Node b is gone: the rooms fed here are cleared of it (the script tells each leave once,
    // whichever node runs it first).
    node_.on_channel_message(format_event(event_type::node_gone, "b", {}, {}, {}));
    settle();
    auto cleared = redis_.take("room_members_of");
    ASSERT_TRUE(cleared);
    EXPECT_EQ(cleared->args, (std::vector<std::string>{"b", "lobby", keys::room_channel("lobby")}));
    EXPECT_TRUE(presence_of(alice, false).empty()) << "the leave comes from the room's channel, not from here";
    node_.on_channel_message(format_event(event_type::leave_disconnected, "b", "lobby", "bob", "2\n"));
    settle();
    EXPECT_EQ(presence_of(alice, false), (std::vector<std::string>{"bob"}));

    // The heartbeat that found a node dead clears every room it had members in.
    node_.heartbeat();
    settle();
    auto beat = redis_.take("heartbeat");
    ASSERT_TRUE(beat);
    redis_.answer(*beat, array_reply({string_reply("c"), strings_reply({"far", "near"})}));
    settle();
    auto far = redis_.take("room_members_of");
    auto near = redis_.take("room_members_of");
    ASSERT_TRUE(far && near);
    EXPECT_EQ(far->args, (std::vector<std::string>{"c", "far", keys::room_channel("far")}));
    EXPECT_EQ(near->args.at(1), "near");
}

TEST_F(cluster_node_test, the_room_list_is_read_from_the_partitions_and_kept_a_second) {
    sync({}, {});
    test_client& alice = login("alice");
    join_fed(alice, "lobby");
    alice.take();
    alice.send({{"type", "rooms"}, {"id", 1}});
    settle();
    auto read = redis_.take("rooms_index");
    ASSERT_TRUE(read);
    EXPECT_EQ(read->keys.size(), partition_count) << "one call for the one server";
    EXPECT_EQ(redis_.count("rooms_index"), 0u);
    redis_.answer(*read, strings_reply({"lobby", "3", "", "music", "2", "tunes"}));
    settle();
    const json listed = alice.take_one();
    ASSERT_EQ(listed.value("type", ""), "rooms") << listed.dump();
    ASSERT_EQ(listed["rooms"].size(), 2u) << listed.dump();
    EXPECT_EQ(listed["rooms"][0].value("name", ""), "lobby");
    EXPECT_EQ(listed["rooms"][0].value("members", 0), 3);
    EXPECT_EQ(listed["rooms"][1].value("name", ""), "music");
    EXPECT_EQ(listed["rooms"][1].value("topic", ""), "tunes");

    alice.send({{"type", "rooms"}, {"id", 2}});
    settle();
    EXPECT_EQ(redis_.count("rooms_index"), 0u) << "read again within the second";
    EXPECT_EQ(alice.take_one()["rooms"].size(), 2u);
}

TEST_F(cluster_node_test, the_room_list_while_redis_is_away_is_this_nodes) {
    test_client& alice = login("alice");  // Redis away: served here alone
    world_.join(alice, "lobby");
    alice.take();
    alice.send({{"type", "rooms"}, {"id", 1}});
    settle();
    EXPECT_EQ(redis_.count("rooms_index"), 0u);
    const json listed = alice.take_one();
    ASSERT_EQ(listed["rooms"].size(), 1u) << listed.dump();
    EXPECT_EQ(listed["rooms"][0].value("name", ""), "lobby");
}

TEST_F(cluster_node_test, after_an_outage_the_rooms_this_node_was_in_are_settled) {
    sync({}, {});
    test_client& alice = login("alice");
    join_fed(alice, "lobby");
    node_.on_redis_down();
    settle();
    redis_.answer_all(std::nullopt);
    settle();
    alice.send({{"type", "leave"}, {"room", "lobby"}});
    world_.join(alice, "music");
    settle();
    redis_.calls.clear();
    node_.on_redis_up();
    settle();
    auto registered = redis_.take("register_node");
    ASSERT_TRUE(registered);
    redis_.answer(*registered, strings_reply({"lobby\nalice"}));
    settle();
    std::map<std::string, std::vector<std::string>> settled;
    while (auto call = redis_.take_if("room_members_of")) {
        settled[call->args.at(1)] = std::vector<std::string>(call->args.begin() + 3, call->args.end());
    }
    EXPECT_EQ(settled["lobby"], std::vector<std::string>{}) << "alice left it meanwhile";
    EXPECT_EQ(settled["music"], std::vector<std::string>{"alice"}) << "alice joined it meanwhile";
}

}  // namespace
}  // namespace parley::cluster::tests
