// Token mode: a login proves its name with a signed token; one user may hold several sessions,
// which all receive the user's direct messages, and leave a room's presence with the last one;
// private rooms and the token's rooms claim decide who may join what.

#include "tests/unit/rooms/chat_world.hpp"
#include "tests/token_minter.hpp"

#include <gtest/gtest.h>

namespace parley::rooms::tests {
using namespace parley::test_tokens;
namespace {

config::settings token_settings() {
    config::settings s = test_settings();
    s.auth_mode = config::auth_mode::token;
    s.auth_token_secret = token_secret;
    s.auth_token_leeway_ms = 0;
    return s;
}

json login_request(std::string_view user, const std::string& token) {
    return {{"type", "login"}, {"user", user}, {"token", token}, {"id", "in"}};
}

// A client logged in with a valid token for `user` (welcome consumed).
test_client& token_login(chat_world& world, std::string_view user, std::uint32_t worker = 0) {
    test_client& c = world.connect(worker);
    c.send(login_request(user, token_for(user)));
    json reply = c.take_one();
    EXPECT_EQ(reply.value("type", ""), "welcome") << reply.dump();
    return c;
}

// The login is refused with unauthorized and the connection is closed with 1008.
::testing::AssertionResult refused(test_client& c, std::string_view why) {
    json reply = c.take_one();
    if (!is_error(reply, "unauthorized", "in")) {
        return is_error(reply, "unauthorized", "in");
    }
    if (reply.value("message", "") != why) {
        return ::testing::AssertionFailure() << "message '" << reply.value("message", "") << "', expected '" << why
                                             << "'";
    }
    if (c.output.closes.size() != 1 || c.output.closes[0].code != protocol::close_code::policy_violation) {
        return ::testing::AssertionFailure() << "expected one close with 1008";
    }
    if (c.session.logged_in()) {
        return ::testing::AssertionFailure() << "logged in anyway";
    }
    return ::testing::AssertionSuccess();
}

TEST(token_login, a_valid_token_for_the_name_logs_in) {
    chat_world world(token_settings());
    test_client& c = token_login(world, "alice");
    EXPECT_EQ(c.session.user(), "alice");
    EXPECT_TRUE(c.output.closes.empty());
}

TEST(token_login, missing_wrong_expired_and_foreign_tokens_are_refused_and_closed) {
    chat_world world(token_settings());
    test_client& none = world.connect();
    none.send({{"type", "login"}, {"user", "alice"}, {"id", "in"}});
    EXPECT_TRUE(refused(none, "login needs a token"));

    test_client& other_user = world.connect();
    other_user.send(login_request("alice", token_for("mallory")));
    EXPECT_TRUE(refused(other_user, "the token is for another user"));

    test_client& expired = world.connect();
    expired.send(login_request("alice", sign_token({{"sub", "alice"}, {"exp", now_seconds() - 60}})));
    EXPECT_TRUE(refused(expired, "the token has expired"));

    test_client& wrong_key = world.connect();
    wrong_key.send(login_request("alice", sign_token({{"sub", "alice"}, {"exp", now_seconds() + 60}},
                                                     "another-secret-0123456789abcdefghij")));
    EXPECT_TRUE(refused(wrong_key, "the token was not accepted"));

    test_client& garbage = world.connect();
    garbage.send(login_request("alice", "not.a.token"));
    EXPECT_TRUE(refused(garbage, "the token was not accepted"));

    EXPECT_FALSE(world.hub().users().lookup("alice").has_value());
    // A refused connection is finished: a later valid login on it is not served.
    garbage.send(login_request("alice", token_for("alice")));
    EXPECT_TRUE(garbage.take().empty());
}

TEST(token_login, leeway_accepts_a_token_just_expired) {
    config::settings s = token_settings();
    s.auth_token_leeway_ms = 120'000;
    chat_world world(s);
    test_client& c = world.connect();
    c.send(login_request("alice", sign_token({{"sub", "alice"}, {"exp", now_seconds() - 60}})));
    EXPECT_EQ(c.take_one().value("type", ""), "welcome");
}

TEST(token_login, in_none_mode_a_token_is_not_needed_and_a_name_is_one_session) {
    chat_world world;  // auth.mode = none
    world.login("alice");
    test_client& second = world.connect(1);
    second.send(login_request("alice", token_for("alice")));
    EXPECT_TRUE(is_error(second.take_one(), "username_taken", "in"));
    EXPECT_TRUE(second.output.closes.empty()) << "the client may try another name";
}

TEST(multi_session, one_user_holds_up_to_the_limit) {
    config::settings s = token_settings();
    s.max_sessions_per_user = 3;
    chat_world world(s);
    token_login(world, "alice", 0);
    token_login(world, "alice", 1);
    token_login(world, "alice", 0);
    test_client& fourth = world.connect(1);
    fourth.send(login_request("alice", token_for("alice")));
    json reply = fourth.take_one();
    EXPECT_TRUE(is_error(reply, "username_taken", "in"));
    EXPECT_EQ(reply.value("message", ""), "'alice' is logged in on 3 connections already, the most allowed");

    std::vector<registry::session_handle> held;
    EXPECT_EQ(world.hub().users().lookup_all("alice", held), 3u);
    test_client& bob = token_login(world, "bob");
    bob.send({{"type", "users"}});
    EXPECT_EQ(bob.take_one()["users"], (json{"alice", "bob"})) << "a user is listed once";
}

TEST(multi_session, a_dm_reaches_every_session_of_the_recipient_and_the_senders_others) {
    chat_world world(token_settings());
    test_client& alice_here = token_login(world, "alice", 0);
    test_client& alice_there = token_login(world, "alice", 1);
    test_client& bob_phone = token_login(world, "bob", 0);
    test_client& bob_laptop = token_login(world, "bob", 1);

    alice_here.send({{"type", "dm"}, {"to", "bob"}, {"text", "hi"}});
    world.run();
    for (test_client* c : {&alice_here, &alice_there, &bob_phone, &bob_laptop}) {
        auto dms = c->received("dm");
        ASSERT_EQ(dms.size(), 1u) << "each session exactly once";
        EXPECT_EQ(dms[0].value("from", ""), "alice");
        EXPECT_EQ(dms[0].value("to", ""), "bob");
        EXPECT_EQ(dms[0].value("text", ""), "hi");
    }
}

TEST(multi_session, presence_leave_comes_when_the_last_session_goes) {
    chat_world world(token_settings());
    test_client& watcher = token_login(world, "carol");
    world.join(watcher, "r");
    test_client& first = token_login(world, "alice", 0);
    test_client& second = token_login(world, "alice", 1);
    world.join(first, "r");
    json joined = world.join(second, "r");
    EXPECT_EQ(joined["members"], (json{"alice", "carol"})) << "the user once, however many sessions";
    EXPECT_EQ(watcher.received("presence").size(), 1u) << "one join for alice's first session only";
    watcher.output.clear();

    world.disconnect(first);
    world.run();
    EXPECT_TRUE(watcher.received("presence").empty()) << "alice is still there on her other session";

    watcher.send({{"type", "say"}, {"room", "r"}, {"text", "still here?"}});
    world.run();
    EXPECT_EQ(second.received("message").size(), 1u);

    world.disconnect(second);
    world.run();
    auto presence = watcher.received("presence");
    ASSERT_EQ(presence.size(), 1u);
    EXPECT_EQ(presence[0].value("user", ""), "alice");
    EXPECT_EQ(presence[0].value("event", ""), "leave");
    EXPECT_FALSE(world.hub().users().lookup("alice").has_value());
}

config::settings with_private_room() {
    config::settings s = token_settings();
    config::permanent_room staff("staff", "");
    staff.is_private = true;
    staff.members = {"alice"};
    s.permanent_rooms = {staff, config::permanent_room("lobby")};
    return s;
}

TEST(room_access, a_private_room_admits_its_members_and_hides_from_others) {
    chat_world world(with_private_room());
    test_client& alice = token_login(world, "alice");
    test_client& bob = token_login(world, "bob");

    world.join(alice, "staff");
    bob.send({{"type", "join"}, {"room", "staff"}, {"id", "j"}});
    json reply = bob.take_one();
    EXPECT_TRUE(is_error(reply, "unauthorized", "j"));
    EXPECT_EQ(reply.value("message", ""), "you may not join 'staff'");
    EXPECT_TRUE(bob.output.closes.empty()) << "a refused join keeps the connection";

    bob.send({{"type", "rooms"}});
    json listed = bob.take_one()["rooms"];
    ASSERT_EQ(listed.size(), 1u) << listed.dump();
    EXPECT_EQ(listed[0].value("name", ""), "lobby");
    alice.send({{"type", "rooms"}});
    EXPECT_EQ(alice.take_one()["rooms"].size(), 2u) << "a member sees it";
}

TEST(room_access, a_rooms_claim_limits_joins_and_can_open_a_private_room) {
    chat_world world(with_private_room());
    test_client& dave = world.connect();
    dave.send(login_request("dave", sign_token({{"sub", "dave"},
                                                {"exp", now_seconds() + 60},
                                                {"rooms", {"staff", "team-*"}}})));
    EXPECT_EQ(dave.take_one().value("type", ""), "welcome");

    world.join(dave, "staff");
    world.join(dave, "team-red");
    dave.send({{"type", "join"}, {"room", "lobby"}, {"id", 1}});
    EXPECT_TRUE(is_error(dave.take_one(), "unauthorized", 1)) << "not in the claim";
    dave.send({{"type", "join"}, {"room", "team"}, {"id", 2}});
    EXPECT_TRUE(is_error(dave.take_one(), "unauthorized", 2)) << "the prefix is team-, not team";

    // The grant belongs to that session alone: the next session on the same worker is unlimited.
    world.disconnect(dave);
    test_client& erin = token_login(world, "erin");
    world.join(erin, "lobby");
    erin.send({{"type", "join"}, {"room", "staff"}, {"id", 3}});
    EXPECT_TRUE(is_error(erin.take_one(), "unauthorized", 3));
}

}  // namespace
}  // namespace parley::rooms::tests
