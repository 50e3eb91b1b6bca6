// login: first, once, with a valid and free name; the name is free again when the session ends.

#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

namespace parley::rooms::tests {
namespace {

TEST(login, welcome_carries_the_user_and_the_id) {
    chat_world world;
    test_client& c = world.connect();
    c.send({{"type", "login"}, {"user", "alice"}, {"id", "l1"}});
    json reply = c.take_one();
    EXPECT_EQ(reply, (json{{"type", "welcome"}, {"user", "alice"}, {"re", "l1"}}));
    EXPECT_TRUE(c.session.logged_in());
    EXPECT_EQ(world.hub().users().lookup("alice"), c.session.handle());
}

TEST(login, every_other_request_needs_it_first) {
    chat_world world;
    test_client& c = world.connect();
    for (json request : {json{{"type", "join"}, {"room", "r"}}, json{{"type", "say"}, {"room", "r"}, {"text", "x"}},
                         json{{"type", "dm"}, {"to", "bob"}, {"text", "x"}}, json{{"type", "users"}},
                         json{{"type", "rooms"}}, json{{"type", "leave"}, {"room", "r"}},
                         json{{"type", "history"}, {"room", "r"}}, json{{"type", "typing"}, {"room", "r"}}}) {
        request["id"] = 7;
        c.send(request);
        EXPECT_TRUE(is_error(c.take_one(), "not_logged_in", 7)) << request.dump();
    }
    EXPECT_FALSE(c.session.logged_in());
    EXPECT_EQ(world.hub().rooms().size(), 0u) << "nothing was joined";
}

TEST(login, only_once_per_connection) {
    chat_world world;
    test_client& c = world.login("alice");
    c.send({{"type", "login"}, {"user", "other"}, {"id", "again"}});
    EXPECT_TRUE(is_error(c.take_one(), "already_logged_in", "again"));
    EXPECT_EQ(c.session.user(), "alice");
    EXPECT_FALSE(world.hub().users().lookup("other").has_value());
}

TEST(login, invalid_names_are_refused) {
    chat_world world;
    test_client& c = world.connect();
    for (std::string name : {std::string(), std::string(33, 'a'), std::string("with space"), std::string("a/b"),
                             std::string("caf\xc3\xa9"), std::string("semi;colon")}) {
        c.send({{"type", "login"}, {"user", name}});
        EXPECT_TRUE(is_error(c.take_one(), "invalid_name")) << name;
    }
    EXPECT_FALSE(c.session.logged_in());
    c.send({{"type", "login"}, {"user", std::string(32, 'z')}});
    EXPECT_EQ(c.take_one()["type"], "welcome") << "32 characters is the limit, not over it";
}

TEST(login, all_allowed_characters) {
    chat_world world;
    test_client& c = world.connect();
    c.send({{"type", "login"}, {"user", "Az09_.-"}});
    EXPECT_EQ(c.take_one()["user"], "Az09_.-");
}

TEST(login, a_name_in_use_is_taken_until_its_session_ends) {
    chat_world world;
    test_client& first = world.login("alice", 0);
    test_client& second = world.connect(1);
    second.send({{"type", "login"}, {"user", "alice"}, {"id", 1}});
    EXPECT_TRUE(is_error(second.take_one(), "username_taken", 1));
    EXPECT_FALSE(second.session.logged_in());

    world.disconnect(first);
    second.send({{"type", "login"}, {"user", "alice"}, {"id", 2}});
    EXPECT_EQ(second.take_one(), (json{{"type", "welcome"}, {"user", "alice"}, {"re", 2}}));
    EXPECT_EQ(world.hub().users().lookup("alice"), second.session.handle());
}

TEST(login, a_failed_login_can_be_retried_on_the_same_connection) {
    chat_world world;
    world.login("taken");
    test_client& c = world.connect();
    c.send({{"type", "login"}, {"user", "taken"}});
    EXPECT_TRUE(is_error(c.take_one(), "username_taken"));
    c.send({{"type", "login"}, {"user", "free"}});
    EXPECT_EQ(c.take_one()["type"], "welcome");
}

}  // namespace
}  // namespace parley::rooms::tests
