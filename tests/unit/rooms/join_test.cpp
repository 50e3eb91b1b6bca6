// join and leave: the `joined` reply, presence to the others, re-joins, room name rules.

#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

namespace parley::rooms::tests {
namespace {

json say_request(std::string_view room, std::string_view text) { return {{"type", "say"}, {"room", room}, {"text", text}}; }


TEST(join, joined_has_epoch_sorted_members_and_recent_history) {
    auto s = test_settings();
    s.joined_history = 3;
    chat_world world(s);
    test_client& carol = world.login("carol", 0);
    test_client& alice = world.login("alice", 1);
    world.join(carol, "lobby");
    world.join(alice, "lobby");
    for (int i = 1; i <= 5; ++i) {
        carol.send(say_request("lobby", "line " + std::to_string(i)));
    }
    world.run();

    test_client& bob = world.login("bob", 0);
    bob.send({{"type", "join"}, {"room", "lobby"}, {"id", "j"}});
    json joined = bob.take_one();
    EXPECT_EQ(joined["type"], "joined");
    EXPECT_EQ(joined["room"], "lobby");
    EXPECT_EQ(joined["epoch"], test_epoch);
    EXPECT_EQ(joined["members"], (json{"alice", "bob", "carol"})) << "sorted, self included";
    EXPECT_EQ(joined["re"], "j");
    EXPECT_FALSE(joined.contains("recovered")) << "only sent when `after` was";
    ASSERT_EQ(joined["history"].size(), 3u);
    EXPECT_EQ(seqs_of(joined["history"]), (std::vector<std::int64_t>{3, 4, 5})) << "the newest, oldest first";
    const json& last = joined["history"][2];
    EXPECT_EQ(last["type"], "message");
    EXPECT_EQ(last["room"], "lobby");
    EXPECT_EQ(last["from"], "carol");
    EXPECT_EQ(last["text"], "line 5");
    EXPECT_TRUE(last["ts"].is_number_integer());
}

TEST(join, a_new_room_starts_empty_at_seq_one) {
    chat_world world;
    test_client& a = world.login("a");
    json joined = world.join(a, "fresh");
    EXPECT_EQ(joined["members"], (json{"a"}));
    EXPECT_TRUE(joined["history"].empty());
    a.send(say_request("fresh", "first"));
    world.run();
    EXPECT_EQ(a.received("message").at(0)["seq"], 1);
}

TEST(join, presence_join_goes_to_the_others_only) {
    chat_world world;
    test_client& a = world.login("a", 0);
    test_client& b = world.login("b", 1);
    test_client& outsider = world.login("c", 1);
    world.join(a, "r");
    world.join(b, "r");
    world.clear_all();

    test_client& d = world.login("d", 0);
    d.send({{"type", "join"}, {"room", "r"}});
    world.run();
    json expected{{"type", "presence"}, {"room", "r"}, {"user", "d"}, {"event", "join"}};
    EXPECT_EQ(a.take(), std::vector<json>{expected});
    EXPECT_EQ(b.take(), std::vector<json>{expected});
    auto own = d.take();
    ASSERT_EQ(own.size(), 1u) << "no presence about oneself";
    EXPECT_EQ(own[0]["type"], "joined");
    EXPECT_TRUE(outsider.take().empty());
}

TEST(join, joining_again_while_a_member_resends_joined_without_presence) {
    chat_world world;
    test_client& a = world.login("a", 0);
    test_client& b = world.login("b", 1);
    world.join(a, "r");
    world.join(b, "r");
    a.send(say_request("r", "hi"));
    world.run();
    world.clear_all();

    b.send({{"type", "join"}, {"room", "r"}, {"id", 2}});
    world.run();
    json again = b.take_one();
    EXPECT_EQ(again["type"], "joined");
    EXPECT_EQ(again["re"], 2);
    EXPECT_EQ(again["members"], (json{"a", "b"}));
    EXPECT_EQ(seqs_of(again["history"]), (std::vector<std::int64_t>{1}));
    EXPECT_TRUE(a.take().empty()) << "no second presence";
    EXPECT_EQ(b.session.room_count(), 1u);
    EXPECT_EQ(world.hub().rooms().list(), (std::vector<std::pair<std::string, std::size_t>>{{"r", 2}}));

    a.send(say_request("r", "once"));
    world.run();
    EXPECT_EQ(b.received("message").size(), 1u) << "one membership: the message arrives once";
}

TEST(join, invalid_room_names_are_refused) {
    chat_world world;
    test_client& a = world.login("a");
    for (std::string name : {std::string(), std::string(65, 'r'), std::string("two words"), std::string("#chat"),
                             std::string("\xc3\xa9t\xc3\xa9")}) {
        a.send({{"type", "join"}, {"room", name}, {"id", "x"}});
        EXPECT_TRUE(is_error(a.take_one(), "invalid_name", "x")) << name;
    }
    EXPECT_EQ(a.session.room_count(), 0u);
    EXPECT_EQ(world.hub().rooms().size(), 0u);
    EXPECT_EQ(world.join(a, std::string(64, 'r'))["room"], std::string(64, 'r'));
}

TEST(leave, replies_left_and_tells_the_others) {
    chat_world world;
    test_client& a = world.login("a", 0);
    test_client& b = world.login("b", 1);
    world.join(a, "r");
    world.join(b, "r");
    world.clear_all();

    a.send({{"type", "leave"}, {"room", "r"}, {"id", "bye"}});
    world.run();
    EXPECT_EQ(a.take(), (std::vector<json>{{{"type", "left"}, {"room", "r"}, {"re", "bye"}}}));
    EXPECT_EQ(b.take(), (std::vector<json>{{{"type", "presence"}, {"room", "r"}, {"user", "a"}, {"event", "leave"}}}));
    EXPECT_EQ(a.session.room_count(), 0u);

    b.send(say_request("r", "after a left"));
    world.run();
    EXPECT_TRUE(a.take().empty()) << "a left: no more messages";
}

TEST(leave, a_room_one_is_not_in) {
    chat_world world;
    test_client& a = world.login("a");
    a.send({{"type", "leave"}, {"room", "nowhere"}, {"id", 3}});
    EXPECT_TRUE(is_error(a.take_one(), "not_in_room", 3));
}

}  // namespace
}  // namespace parley::rooms::tests
