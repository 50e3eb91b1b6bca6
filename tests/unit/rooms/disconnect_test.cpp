// end(): a connection going away leaves every room and frees its name.

#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

namespace parley::rooms::tests {
namespace {

TEST(disconnect, others_get_presence_leave_and_a_system_line) {
    chat_world world;
    test_client& alice = world.login("alice", 0);
    test_client& bob = world.login("bob", 1);
    test_client& carol = world.login("carol", 0);
    world.join(alice, "r");
    world.join(bob, "r");
    world.join(carol, "r");
    world.clear_all();

    world.disconnect(alice);
    world.run();
    std::vector<json> expected{{{"type", "presence"}, {"room", "r"}, {"user", "alice"}, {"event", "leave"}},
                               {{"type", "system"}, {"text", "alice disconnected"}}};
    EXPECT_EQ(bob.take(), expected);
    EXPECT_EQ(carol.take(), expected);
    EXPECT_FALSE(world.hub().users().lookup("alice").has_value());
    bob.send({{"type", "rooms"}});
    EXPECT_EQ(bob.take_one()["rooms"], (json{{{"name", "r"}, {"members", 2}}}));
}

TEST(disconnect, every_room_is_left) {
    chat_world world;
    test_client& alice = world.login("alice", 0);
    test_client& bob = world.login("bob", 1);
    world.join(alice, "one");
    world.join(alice, "two");
    world.join(bob, "two");
    world.join(bob, "three");
    world.clear_all();

    alice.session.end();
    world.run();
    EXPECT_EQ(alice.session.room_count(), 0u);
    auto presence = bob.received("presence");
    ASSERT_EQ(presence.size(), 1u) << "bob shares one room with alice";
    EXPECT_EQ(presence[0]["room"], "two");
    EXPECT_EQ(world.hub().rooms().find("one"), nullptr);
    EXPECT_TRUE(alice.take().empty()) << "nothing is sent to the one leaving";
}

TEST(disconnect, is_idempotent_and_silences_the_session) {
    chat_world world;
    test_client& alice = world.login("alice", 0);
    test_client& bob = world.login("bob", 1);
    world.join(alice, "r");
    world.join(bob, "r");
    world.clear_all();

    alice.session.end();
    alice.session.end();
    world.run();
    EXPECT_EQ(bob.received("presence").size(), 1u);
    EXPECT_EQ(bob.received("system").size(), 1u);
    alice.send({{"type", "users"}});
    EXPECT_TRUE(alice.take().empty()) << "an ended session ignores input";
}

TEST(disconnect, a_quiet_end_has_no_system_line) {
    chat_world world;
    test_client& alice = world.login("alice", 0);
    test_client& bob = world.login("bob", 1);
    world.join(alice, "r");
    world.join(bob, "r");
    world.clear_all();

    alice.session.end(false);
    world.run();
    EXPECT_EQ(bob.received("presence").size(), 1u);
    EXPECT_TRUE(bob.received("system").empty());
}

TEST(disconnect, before_login_is_harmless) {
    chat_world world;
    test_client& anon = world.connect(1);
    test_client& alice = world.login("alice", 0);
    world.disconnect(anon);
    world.run();
    alice.send({{"type", "users"}});
    EXPECT_EQ(alice.take_one()["users"], (json{"alice"}));
}

}  // namespace
}  // namespace parley::rooms::tests
