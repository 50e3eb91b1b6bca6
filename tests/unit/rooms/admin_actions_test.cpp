// What an operator does to the running chat: list, kick, announce, close a room.

#include "rooms/admin_actions.hpp"
#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

namespace parley::rooms::tests {
namespace {

TEST(admin_actions, users_are_listed_once_with_their_connection_count) {
    config::settings s = test_settings();
    chat_world world(s);
    world.login("bob", 1);
    world.login("alice", 0);
    auto users = list_users(world.hub());
    ASSERT_EQ(users.size(), 2u);
    EXPECT_EQ(users[0].name, "alice");
    EXPECT_EQ(users[0].connections, 1u);
    EXPECT_EQ(users[1].name, "bob");
}

TEST(admin_actions, kick_closes_every_connection_of_the_user_with_4000) {
    chat_world world;
    test_client& alice = world.login("alice", 1);
    test_client& bob = world.login("bob", 0);
    EXPECT_EQ(kick_user(world.hub(), "alice", "spam"), 1u);
    EXPECT_EQ(kick_user(world.hub(), "nobody", "x"), 0u);
    EXPECT_TRUE(alice.output.closes.empty()) << "the close is a task on alice's worker";
    world.run();
    ASSERT_EQ(alice.output.closes.size(), 1u);
    EXPECT_EQ(alice.output.closes[0].code, protocol::close_code::kicked);
    EXPECT_EQ(alice.output.closes[0].reason, "spam");
    EXPECT_TRUE(alice.received("system").empty()) << "no notice unless one is given";
    EXPECT_TRUE(bob.output.closes.empty());
}

TEST(admin_actions, a_kick_may_say_why_first_and_close_with_another_code) {
    chat_world world;
    test_client& alice = world.login("alice", 1);
    EXPECT_EQ(kick_user(world.hub(), "alice", "name taken", protocol::close_code::policy_violation,
                        "the name is held elsewhere"),
              1u);
    world.run();
    auto lines = alice.received("system");
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0].value("text", ""), "the name is held elsewhere");
    ASSERT_EQ(alice.output.closes.size(), 1u);
    EXPECT_EQ(alice.output.closes[0].code, protocol::close_code::policy_violation);
    EXPECT_EQ(alice.output.closes[0].reason, "name taken");
}

TEST(admin_actions, an_announcement_reaches_every_logged_in_session_once) {
    chat_world world;
    test_client& a = world.login("a", 0);
    test_client& b = world.login("b", 1);
    test_client& anonymous = world.connect(1);
    announce_to_all(world.hub(), "maintenance at noon");
    world.run();
    for (test_client* c : {&a, &b}) {
        auto lines = c->received("system");
        ASSERT_EQ(lines.size(), 1u);
        EXPECT_EQ(lines[0].value("text", ""), "maintenance at noon");
    }
    EXPECT_TRUE(anonymous.take().empty()) << "not logged in: not part of the chat yet";
}

TEST(admin_actions, a_room_announcement_reaches_its_members_only) {
    chat_world world;
    test_client& in = world.login("in", 0);
    test_client& also_in = world.login("also", 1);
    test_client& out = world.login("out", 0);
    world.join(in, "r");
    world.join(also_in, "r");
    world.clear_all();
    EXPECT_TRUE(announce_to_room(world.hub(), "r", "hello r"));
    EXPECT_FALSE(announce_to_room(world.hub(), "nope", "x"));
    world.run();
    EXPECT_EQ(in.received("system").size(), 1u);
    EXPECT_EQ(also_in.received("system").size(), 1u);
    EXPECT_TRUE(out.take().empty());
}

TEST(admin_actions, closing_a_room_removes_every_member_and_the_room) {
    chat_world world;
    test_client& a = world.login("a", 0);
    test_client& b = world.login("b", 1);
    world.join(a, "r");
    world.join(b, "r");
    world.clear_all();
    EXPECT_EQ(close_room(world.hub(), "r", "off topic"), std::optional<std::size_t>(2));
    EXPECT_EQ(close_room(world.hub(), "nope", ""), std::nullopt);
    world.run();
    for (test_client* c : {&a, &b}) {
        auto left = c->received("left");
        ASSERT_EQ(left.size(), 1u);
        EXPECT_EQ(left[0].value("room", ""), "r");
        bool told = false;
        for (const json& line : c->received("system")) {
            told = told || line.value("text", "") == "the room 'r' was closed by an administrator: off topic";
        }
        EXPECT_TRUE(told);
        EXPECT_EQ(c->session.room_count(), 0u);
    }
    EXPECT_EQ(world.hub().rooms().find("r"), nullptr) << "an undeclared room goes with its last member";
    a.take();
    a.send({{"type", "say"}, {"room", "r"}, {"text", "x"}, {"id", 1}});
    EXPECT_TRUE(is_error(a.take_one(), "not_in_room", 1));
}

}  // namespace
}  // namespace parley::rooms::tests
