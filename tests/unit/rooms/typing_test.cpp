// typing: relayed to the other members, at most once per interval per user and room.

#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace parley::rooms::tests {
namespace {

json typing(std::string_view room) { return {{"type", "typing"}, {"room", room}}; }

class typing_notice : public ::testing::Test {
protected:
    void set_up(std::uint32_t interval_ms) {
        auto s = test_settings();
        s.typing_interval_ms = interval_ms;
        world = std::make_unique<chat_world>(s);
        alice = &world->login("alice", 0);
        bob = &world->login("bob", 1);
        carol = &world->login("carol", 0);
        world->join(*alice, "r");
        world->join(*bob, "r");
        world->join(*carol, "r");
        world->join(*alice, "s");
        world->join(*bob, "s");
        world->clear_all();
    }

    std::unique_ptr<chat_world> world;
    test_client* alice = nullptr;
    test_client* bob = nullptr;
    test_client* carol = nullptr;
};

TEST_F(typing_notice, goes_to_the_others_only) {
    set_up(1000);
    alice->send(typing("r"));
    world->run();
    json expected{{"type", "typing"}, {"room", "r"}, {"user", "alice"}};
    EXPECT_EQ(bob->take(), std::vector<json>{expected});
    EXPECT_EQ(carol->take(), std::vector<json>{expected});
    EXPECT_TRUE(alice->take().empty()) << "no echo, no reply";
}

TEST_F(typing_notice, is_throttled_within_the_interval) {
    set_up(1000);
    for (int i = 0; i < 5; ++i) {
        alice->send(typing("r"));
    }
    world->run();
    EXPECT_EQ(bob->received("typing").size(), 1u);
    EXPECT_TRUE(alice->take().empty()) << "throttling is silent, not an error";
}

TEST_F(typing_notice, the_throttle_is_per_room_and_per_user) {
    set_up(1000);
    alice->send(typing("r"));
    alice->send(typing("s"));
    bob->send(typing("r"));
    world->run();
    auto seen_by_bob = bob->received("typing");
    ASSERT_EQ(seen_by_bob.size(), 2u);
    EXPECT_EQ(seen_by_bob[0]["room"], "r");
    EXPECT_EQ(seen_by_bob[1]["room"], "s");
    auto seen_by_alice = alice->received("typing");
    ASSERT_EQ(seen_by_alice.size(), 1u);
    EXPECT_EQ(seen_by_alice[0]["user"], "bob");
}

TEST_F(typing_notice, is_relayed_again_after_the_interval) {
    set_up(30);
    alice->send(typing("r"));
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    alice->send(typing("r"));
    world->run();
    EXPECT_EQ(bob->received("typing").size(), 2u);
}

TEST_F(typing_notice, is_not_stored) {
    set_up(1000);
    alice->send(typing("r"));
    world->run();
    bob->take();
    bob->send({{"type", "history"}, {"room", "r"}});
    EXPECT_TRUE(bob->take_one()["messages"].empty());
}

TEST_F(typing_notice, only_for_members) {
    set_up(1000);
    carol->send(typing("s"));
    EXPECT_TRUE(is_error(carol->take_one(), "not_in_room"));
    world->run();
    EXPECT_TRUE(alice->take().empty());
}

}  // namespace
}  // namespace parley::rooms::tests
