// say: membership, text rules, the message every member gets, and the ack to the sender.

#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

namespace parley::rooms::tests {
namespace {

class say : public ::testing::Test {
protected:
    void SetUp() override {
        world.join(alice, "r");
        world.join(bob, "r");
        world.clear_all();
    }
    static config::settings small_text() {
        auto s = test_settings();
        s.max_text_bytes = 16;
        return s;
    }

    chat_world world{small_text()};
    test_client& alice = world.login("alice", 0);
    test_client& bob = world.login("bob", 1);
};

TEST_F(say, every_member_sender_included_gets_the_message) {
    std::int64_t before = unix_millis();
    alice.send({{"type", "say"}, {"room", "r"}, {"text", "hi \"bob\""}});
    world.run();
    std::int64_t after = unix_millis();
    for (test_client* c : {&alice, &bob}) {
        json m = c->take_one();
        EXPECT_EQ(m["type"], "message");
        EXPECT_EQ(m["room"], "r");
        EXPECT_EQ(m["from"], "alice");
        EXPECT_EQ(m["text"], "hi \"bob\"");
        EXPECT_EQ(m["seq"], 1);
        EXPECT_GE(m["ts"].get<std::int64_t>(), before);
        EXPECT_LE(m["ts"].get<std::int64_t>(), after);
        EXPECT_FALSE(m.contains("re")) << "a broadcast is nobody's reply";
        EXPECT_EQ(m.size(), 6u) << m.dump();
    }
}

TEST_F(say, seq_grows_by_one_per_message_in_a_room) {
    for (int i = 0; i < 3; ++i) {
        alice.send({{"type", "say"}, {"room", "r"}, {"text", "a"}});
        bob.send({{"type", "say"}, {"room", "r"}, {"text", "b"}});
    }
    world.run();
    auto got = bob.received("message");
    ASSERT_EQ(got.size(), 6u);
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i]["seq"], i + 1);
    }
}

TEST_F(say, rooms_have_their_own_seq) {
    world.join(alice, "other");
    alice.send({{"type", "say"}, {"room", "r"}, {"text", "1"}});
    alice.send({{"type", "say"}, {"room", "r"}, {"text", "2"}});
    alice.send({{"type", "say"}, {"room", "other"}, {"text", "x"}});
    world.run();
    auto got = alice.received("message");
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[2]["room"], "other");
    EXPECT_EQ(got[2]["seq"], 1);
    EXPECT_EQ(bob.received("message").size(), 2u) << "bob is not in 'other'";
}

TEST_F(say, with_an_id_the_sender_alone_gets_an_ack) {
    alice.send({{"type", "say"}, {"room", "r"}, {"text", "one"}});
    alice.send({{"type", "say"}, {"room", "r"}, {"text", "two"}, {"id", "s2"}});
    alice.send({{"type", "say"}, {"room", "r"}, {"text", "three"}, {"id", 99}});
    world.run();
    auto acks = alice.received("ack");
    ASSERT_EQ(acks.size(), 2u) << "no ack without an id";
    EXPECT_EQ(acks[0], (json{{"type", "ack"}, {"re", "s2"}, {"room", "r"}, {"seq", 2}}));
    EXPECT_EQ(acks[1], (json{{"type", "ack"}, {"re", 99}, {"room", "r"}, {"seq", 3}}));
    EXPECT_TRUE(bob.received("ack").empty());
    EXPECT_EQ(bob.received("message").size(), 3u);
}

TEST_F(say, not_in_room) {
    alice.send({{"type", "say"}, {"room", "elsewhere"}, {"text", "hi"}, {"id", 1}});
    EXPECT_TRUE(is_error(alice.take_one(), "not_in_room", 1));
    EXPECT_EQ(world.hub().rooms().find("elsewhere"), nullptr) << "say does not make rooms";
    alice.send({{"type", "leave"}, {"room", "r"}});
    alice.take();
    alice.send({{"type", "say"}, {"room", "r"}, {"text", "hi"}});
    EXPECT_TRUE(is_error(alice.take_one(), "not_in_room"));
    world.run();
    EXPECT_TRUE(bob.received("message").empty());
}

TEST_F(say, empty_text_is_a_bad_request) {
    alice.send({{"type", "say"}, {"room", "r"}, {"text", ""}, {"id", "e"}});
    EXPECT_TRUE(is_error(alice.take_one(), "bad_request", "e"));
    world.run();
    EXPECT_TRUE(bob.take().empty());
}

TEST_F(say, text_over_the_limit_is_too_large) {
    alice.send({{"type", "say"}, {"room", "r"}, {"text", std::string(17, 'x')}, {"id", "big"}});
    EXPECT_TRUE(is_error(alice.take_one(), "too_large", "big"));
    // The limit counts bytes of UTF-8: eight 2-byte characters fit, a ninth does not.
    std::string eight;
    for (int i = 0; i < 8; ++i) {
        eight += "\xc3\xa9";
    }
    alice.send({{"type", "say"}, {"room", "r"}, {"text", eight + "\xc3\xa9"}});
    EXPECT_TRUE(is_error(alice.take_one(), "too_large"));
    alice.send({{"type", "say"}, {"room", "r"}, {"text", eight}});
    alice.send({{"type", "say"}, {"room", "r"}, {"text", std::string(16, 'x')}});
    world.run();
    auto got = bob.received("message");
    ASSERT_EQ(got.size(), 2u) << "exactly the limit is fine";
    EXPECT_EQ(got[0]["text"], eight);
    EXPECT_EQ(got[0]["seq"], 1) << "rejected text used no seq";
}

}  // namespace
}  // namespace parley::rooms::tests
