// users and rooms listings, and the life of a room: it exists while it has members.

#include "rooms/room_directory.hpp"
#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

namespace parley::rooms::tests {
namespace {

// The `rooms` reply; forgets whatever the client received before.
json rooms_of(test_client& c) {
    c.take();
    c.send({{"type", "rooms"}});
    return c.take_one();
}

TEST(users, lists_online_names_sorted) {
    chat_world world;
    test_client& zed = world.login("zed", 1);
    world.login("Bob", 0);
    world.login("alice", 1);
    world.connect(0);  // not logged in: not listed
    zed.send({{"type", "users"}, {"id", "u"}});
    EXPECT_EQ(zed.take_one(), (json{{"type", "users"}, {"users", {"Bob", "alice", "zed"}}, {"re", "u"}}));
}

TEST(users, a_disconnected_user_is_gone) {
    chat_world world;
    test_client& a = world.login("a");
    world.disconnect(world.login("b", 1));
    a.send({{"type", "users"}});
    EXPECT_EQ(a.take_one()["users"], (json{"a"}));
}

TEST(rooms, lists_rooms_sorted_with_member_counts) {
    chat_world world;
    test_client& a = world.login("a", 0);
    test_client& b = world.login("b", 1);
    world.join(a, "zoo");
    world.join(a, "lobby");
    world.join(b, "lobby");
    world.join(b, "attic");
    world.clear_all();
    a.send({{"type", "rooms"}, {"id", 1}});
    json expected{{"type", "rooms"},
                  {"rooms", {{{"name", "attic"}, {"members", 1}}, {{"name", "lobby"}, {"members", 2}},
                             {{"name", "zoo"}, {"members", 1}}}},
                  {"re", 1}};
    EXPECT_EQ(a.take_one(), expected);
}

TEST(rooms, a_room_disappears_when_empty_and_its_seq_continues_after) {
    chat_world world;
    test_client& a = world.login("a", 0);
    test_client& b = world.login("b", 1);
    json first = world.join(a, "r");
    world.join(b, "r");
    a.send({{"type", "say"}, {"room", "r"}, {"text", "1"}});
    a.send({{"type", "say"}, {"room", "r"}, {"text", "2"}});
    world.run();
    a.send({{"type", "leave"}, {"room", "r"}});
    EXPECT_EQ(rooms_of(b)["rooms"], (json{{{"name", "r"}, {"members", 1}}}));
    b.send({{"type", "leave"}, {"room", "r"}});
    world.run();
    world.clear_all();
    EXPECT_TRUE(rooms_of(a)["rooms"].empty());
    EXPECT_EQ(world.hub().rooms().find("r"), nullptr);

    json again = world.join(b, "r");
    EXPECT_EQ(again["epoch"], first["epoch"]) << "the same history: the same epoch";
    EXPECT_EQ(again["members"], (json{"b"}));
    ASSERT_EQ(again["history"].size(), 2u) << "history outlives the room";
    b.send({{"type", "say"}, {"room", "r"}, {"text", "3"}});
    world.run();
    EXPECT_EQ(b.received("message").at(0)["seq"], 3);
}

TEST(rooms, a_disconnect_empties_rooms_too) {
    chat_world world;
    test_client& a = world.login("a", 0);
    test_client& b = world.login("b", 1);
    world.join(b, "solo");
    world.disconnect(b);
    world.run();
    EXPECT_TRUE(rooms_of(a)["rooms"].empty());
}

TEST(rooms, a_permanent_room_stays_when_empty) {
    chat_world world;
    world.hub().rooms().create_permanent("general");
    test_client& a = world.login("a");
    EXPECT_EQ(rooms_of(a)["rooms"], (json{{{"name", "general"}, {"members", 0}}}));
    world.join(a, "general");
    EXPECT_EQ(rooms_of(a)["rooms"], (json{{{"name", "general"}, {"members", 1}}}));
    a.send({{"type", "leave"}, {"room", "general"}});
    world.run();
    a.take();
    EXPECT_EQ(rooms_of(a)["rooms"], (json{{{"name", "general"}, {"members", 0}}}));
}

}  // namespace
}  // namespace parley::rooms::tests
