// dm: to a user on any worker, through a task posted to the recipient's worker.

#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

namespace parley::rooms::tests {
namespace {

json dm(std::string_view to, std::string_view text) { return {{"type", "dm"}, {"to", to}, {"text", text}}; }

TEST(dm, reaches_a_recipient_on_another_worker_and_echoes_to_the_sender) {
    chat_world world;
    test_client& alice = world.login("alice", 0);
    test_client& bob = world.login("bob", 1);
    std::size_t posts = world.executor(1).posts;

    alice.send(dm("bob", "psst \\ secret"));
    EXPECT_EQ(world.executor(1).posts, posts + 1) << "one task to the recipient's worker";
    EXPECT_TRUE(bob.output.frames.empty()) << "delivered on bob's worker, not on alice's";
    json echo = alice.take_one();
    EXPECT_EQ(echo["type"], "dm");
    EXPECT_EQ(echo["from"], "alice");
    EXPECT_EQ(echo["to"], "bob");
    EXPECT_EQ(echo["text"], "psst \\ secret");
    EXPECT_TRUE(echo["ts"].is_number_integer());

    world.run();
    ASSERT_EQ(bob.output.frames.size(), 1u);
    EXPECT_EQ(bob.take_one(), echo) << "both sides get the same dm";
}

TEST(dm, with_an_id_the_sender_gets_an_ack_without_room_or_seq) {
    chat_world world;
    test_client& alice = world.login("alice", 0);
    test_client& bob = world.login("bob", 0);
    json request = dm("bob", "hi");
    request["id"] = "d1";
    alice.send(request);
    world.run();
    auto acks = alice.received("ack");
    ASSERT_EQ(acks.size(), 1u);
    EXPECT_EQ(acks[0], (json{{"type", "ack"}, {"re", "d1"}}));
    EXPECT_TRUE(bob.received("ack").empty());
    EXPECT_EQ(bob.received("dm").size(), 1u);
    EXPECT_FALSE(bob.received("dm")[0].contains("re"));
}

TEST(dm, to_someone_offline_is_user_not_found) {
    chat_world world;
    test_client& alice = world.login("alice");
    json request = dm("nobody", "hello?");
    request["id"] = 5;
    alice.send(request);
    EXPECT_TRUE(is_error(alice.take_one(), "user_not_found", 5));

    test_client& bob = world.login("bob", 1);
    world.disconnect(bob);
    alice.send(dm("bob", "gone?"));
    EXPECT_TRUE(is_error(alice.take_one(), "user_not_found"));
}

TEST(dm, to_oneself_arrives_once) {
    chat_world world;
    test_client& alice = world.login("alice");
    alice.send(dm("alice", "note to self"));
    world.run();
    auto got = alice.take();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0]["text"], "note to self");
}

TEST(dm, recipient_gone_before_delivery_is_skipped) {
    chat_world world;
    test_client& alice = world.login("alice", 0);
    test_client& bob = world.login("bob", 1);
    alice.send(dm("bob", "too late"));
    world.disconnect(bob);  // the posted task still waits on bob's worker
    world.run();
    EXPECT_EQ(alice.received("dm").size(), 1u);
}

TEST(dm, text_rules_apply) {
    auto s = test_settings();
    s.max_text_bytes = 4;
    chat_world world(s);
    test_client& alice = world.login("alice");
    test_client& bob = world.login("bob");
    alice.send(dm("bob", ""));
    EXPECT_TRUE(is_error(alice.take_one(), "bad_request"));
    alice.send(dm("bob", "12345"));
    EXPECT_TRUE(is_error(alice.take_one(), "too_large"));
    world.run();
    EXPECT_TRUE(bob.take().empty());
}

}  // namespace
}  // namespace parley::rooms::tests
