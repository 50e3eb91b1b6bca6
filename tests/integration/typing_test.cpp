// typing: relayed to the other members, at most one per user per room per second.
#include "test_support.hpp"

namespace parley::integration {
namespace {

class TypingTest : public parley_test {};

const json typing_alice_in_r = {{"type", "typing"}, {"room", "r"}, {"user", "alice"}};

TEST_F(TypingTest, RelayedToOthersButNotSender) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    ws_client carol = login("carol");
    for (ws_client* client : {&alice, &bob, &carol}) {
        join_room(*client, "r");
    }
    alice.send_json({{"type", "typing"}, {"room", "r"}});
    EXPECT_EQ(wait_type(bob, "typing"), typing_alice_in_r);
    EXPECT_EQ(wait_type(carol, "typing"), typing_alice_in_r);

    alice.send_json({{"type", "say"}, {"room", "r"}, {"text", "marker"}});
    EXPECT_EQ(count_if(read_until(alice, is_chat("marker")), is_type("typing")), 0u);
}

TEST_F(TypingTest, SecondTypingWithinASecondIsDropped) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "r");
    join_room(bob, "r");
    alice.send_json({{"type", "typing"}, {"room", "r"}});
    alice.send_json({{"type", "typing"}, {"room", "r"}});
    alice.send_json({{"type", "say"}, {"room", "r"}, {"text", "marker"}});
    const std::vector<json> seen = read_until(bob, is_chat("marker"));
    EXPECT_EQ(count_if(seen, is_type("typing")), 1u);
    // Dropped silently: no error for alice either.
    EXPECT_EQ(count_if(read_until(alice, is_chat("marker")), is_type("error")), 0u);
}

TEST_F(TypingTest, RelayedAgainAfterTheInterval) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "r");
    join_room(bob, "r");
    const auto first_sent = std::chrono::steady_clock::now();
    alice.send_json({{"type", "typing"}, {"room", "r"}});
    wait_type(bob, "typing");
    // Keep typing; the next relay may only come once a second has passed since the first.
    std::optional<json> second;
    while (!second && std::chrono::steady_clock::now() - first_sent < std::chrono::seconds(4)) {
        alice.send_json({{"type", "typing"}, {"room", "r"}});
        second = bob.recv_type("typing", milliseconds(200));
    }
    ASSERT_TRUE(second) << "typing was never relayed again";
    EXPECT_GE(std::chrono::steady_clock::now() - first_sent, milliseconds(950));
}

TEST_F(TypingTest, ThrottleIsPerRoom) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    for (const char* room : {"r", "s"}) {
        join_room(alice, room);
        join_room(bob, room);
    }
    alice.send_json({{"type", "typing"}, {"room", "r"}});
    alice.send_json({{"type", "typing"}, {"room", "s"}});
    EXPECT_EQ(wait_type(bob, "typing").value("room", ""), "r");
    EXPECT_EQ(wait_type(bob, "typing").value("room", ""), "s");
}

TEST_F(TypingTest, ThrottleIsPerUser) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    ws_client carol = login("carol");
    for (ws_client* client : {&alice, &bob, &carol}) {
        join_room(*client, "r");
    }
    alice.send_json({{"type", "typing"}, {"room", "r"}});
    wait_type(bob, "typing");
    bob.send_json({{"type", "typing"}, {"room", "r"}});
    EXPECT_EQ(wait_type(carol, "typing"), typing_alice_in_r);
    EXPECT_EQ(wait_type(carol, "typing").value("user", ""), "bob");
}

TEST_F(TypingTest, TypingIsNotStored) {
    ws_client alice = login("alice");
    join_room(alice, "r");
    alice.send_json({{"type", "typing"}, {"room", "r"}});
    const json history = call(alice, {{"type", "history"}, {"room", "r"}, {"id", 1}});
    EXPECT_EQ(history["messages"], json::array());
}

}  // namespace
}  // namespace parley::integration
