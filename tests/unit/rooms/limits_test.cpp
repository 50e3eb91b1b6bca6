// Configured limits: rooms per connection, members per room, request rate.

#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

namespace parley::rooms::tests {
namespace {

json join(std::string_view room) { return {{"type", "join"}, {"room", room}}; }

TEST(limits, too_many_rooms_at_the_per_connection_maximum) {
    auto s = test_settings();
    s.max_rooms_per_connection = 2;
    chat_world world(s);
    test_client& a = world.login("a");
    world.join(a, "one");
    world.join(a, "two");
    a.send({{"type", "join"}, {"room", "three"}, {"id", "3"}});
    EXPECT_TRUE(is_error(a.take_one(), "too_many_rooms", "3"));
    EXPECT_EQ(world.hub().rooms().find("three"), nullptr);

    a.send(join("two"));
    EXPECT_EQ(a.take_one()["type"], "joined") << "re-joining a room one is in is not a new room";
    a.send({{"type", "leave"}, {"room", "one"}});
    a.take();
    EXPECT_EQ(world.join(a, "three")["room"], "three") << "leaving makes room for another";
}

TEST(limits, room_full_at_the_member_maximum) {
    auto s = test_settings();
    s.max_room_members = 2;
    chat_world world(s);
    test_client& a = world.login("a", 0);
    test_client& b = world.login("b", 1);
    test_client& c = world.login("c", 0);
    world.join(a, "r");
    world.join(b, "r");
    world.clear_all();

    c.send({{"type", "join"}, {"room", "r"}, {"id", 1}});
    world.run();
    EXPECT_TRUE(is_error(c.take_one(), "room_full", 1));
    EXPECT_EQ(c.session.room_count(), 0u);
    EXPECT_TRUE(a.take().empty()) << "no presence for a refused join";

    b.send(join("r"));
    EXPECT_EQ(b.take_one()["type"], "joined") << "a member is never refused";
    b.send({{"type", "leave"}, {"room", "r"}});
    world.run();
    EXPECT_EQ(world.join(c, "r")["members"], (json{"a", "c"}));
}

class rate_limit : public ::testing::Test {
protected:
    static config::settings slow() {
        auto s = test_settings();
        s.rate_limit_per_second = 0.001;  // no refill within a test
        s.rate_limit_burst = 3;
        s.rate_limit_strikes = 2;
        return s;
    }
    chat_world world{slow()};
    test_client& a = world.login("a");  // the first of three tokens
};

TEST_F(rate_limit, requests_past_the_burst_are_refused) {
    a.send({{"type", "users"}});
    a.send({{"type", "users"}});
    EXPECT_EQ(a.take().size(), 2u);
    a.send({{"type", "users"}, {"id", "r1"}});
    EXPECT_TRUE(is_error(a.take_one(), "rate_limited", "r1"));
    EXPECT_TRUE(a.output.closes.empty());
}

TEST_F(rate_limit, a_refused_request_has_no_effect) {
    a.send({{"type", "users"}});
    a.send({{"type", "users"}});
    a.take();
    a.send(join("r"));
    EXPECT_TRUE(is_error(a.take_one(), "rate_limited"));
    EXPECT_EQ(a.session.room_count(), 0u);
}

TEST_F(rate_limit, persistent_abuse_closes_with_policy_violation) {
    a.send({{"type", "users"}});
    a.send({{"type", "users"}});
    a.take();
    for (int strike = 1; strike <= 2; ++strike) {
        a.send_raw("not even json");
        EXPECT_TRUE(is_error(a.take_one(), "rate_limited")) << "every message costs a token, valid or not";
        EXPECT_TRUE(a.output.closes.empty()) << "strike " << strike;
    }
    a.send({{"type", "users"}});
    EXPECT_TRUE(is_error(a.take_one(), "rate_limited"));
    ASSERT_EQ(a.output.closes.size(), 1u) << "closed once the strikes are used up";
    EXPECT_EQ(a.output.closes[0].code, protocol::close_code::policy_violation);
}

TEST(limits, a_steady_rate_within_the_limit_is_never_refused) {
    auto s = test_settings();
    s.rate_limit_per_second = 1e6;
    s.rate_limit_burst = 2;
    chat_world world(s);
    test_client& a = world.login("a");
    for (int i = 0; i < 50; ++i) {
        a.send({{"type", "users"}});
        // At a million per second a token comes back in a microsecond; a JSON round trip takes
        // longer, so the bucket never runs dry.
        EXPECT_EQ(a.take_one().value("type", ""), "users") << i;
    }
}

}  // namespace
}  // namespace parley::rooms::tests
