// Chat events for webhooks: rooms and sessions report each kind a receiver wants, in the room's
// order, with the very frame the members were sent; kinds nobody wants are not reported.

#include "rooms/chat_events.hpp"
#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace parley::rooms::tests {
namespace {

using protocol::webhook_event;

class recording_sink final : public event_sink {
public:
    struct event {
        webhook_event kind;
        std::string room;
        std::string user;
        protocol::shared_frame frame;
    };
    void publish(webhook_event kind, std::string_view room, std::string_view user,
                 const protocol::shared_frame& frame, std::int64_t ts_ms) override {
        EXPECT_GT(ts_ms, 0);
        events.push_back({kind, std::string(room), std::string(user), frame});
    }
    std::vector<std::string> kinds() const {
        std::vector<std::string> out;
        for (const auto& e : events) {
            out.push_back(std::string(protocol::name_of(e.kind)) + ":" + e.room + ":" + e.user);
        }
        return out;
    }
    std::vector<event> events;
};

class ChatEvents : public ::testing::Test {
protected:
    ChatEvents() { world.hub().rooms().events().attach(&sink); }
    ~ChatEvents() override { world.hub().rooms().events().attach(nullptr); }

    recording_sink sink;
    chat_world world;
};

TEST_F(ChatEvents, NothingIsReportedWhileNoKindIsWanted) {
    test_client& alice = world.login("alice");
    world.join(alice, "lobby");
    alice.send({{"type", "say"}, {"room", "lobby"}, {"text", "hi"}});
    world.run();
    EXPECT_TRUE(sink.events.empty());
}

TEST_F(ChatEvents, ALifeInARoomIsReportedInOrder) {
    world.hub().rooms().events().set_wanted(protocol::every_webhook_event);
    test_client& alice = world.login("alice", 0);
    test_client& bob = world.login("bob", 1);
    world.join(alice, "lobby");
    world.join(bob, "lobby");
    alice.send({{"type", "say"}, {"room", "lobby"}, {"text", "hi"}});
    bob.send({{"type", "dm"}, {"to", "alice"}, {"text", "psst"}});
    world.run();
    bob.send({{"type", "leave"}, {"room", "lobby"}});
    world.disconnect(alice);
    world.run();

    EXPECT_EQ(sink.kinds(), (std::vector<std::string>{
                                "user_connected::alice", "user_connected::bob", "room_occupied:lobby:",
                                "member_joined:lobby:alice", "member_joined:lobby:bob", "message:lobby:alice",
                                "dm::bob", "member_left:lobby:bob", "member_left:lobby:alice",
                                "room_vacated:lobby:", "user_disconnected::alice"}));
    // The message is the frame the members got, shared, not a copy.
    auto got = bob.output.of_type("message");
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(sink.events[5].frame.identity(), got[0].first.identity());
    EXPECT_FALSE(sink.events[2].frame);  // room_occupied has no frame
}

TEST_F(ChatEvents, OnlyTheWantedKindsAreReported) {
    world.hub().rooms().events().set_wanted(protocol::bit_of(webhook_event::message));
    test_client& alice = world.login("alice");
    world.join(alice, "lobby");
    for (int i = 0; i < 3; ++i) {
        alice.send({{"type", "say"}, {"room", "lobby"}, {"text", "m" + std::to_string(i)}});
    }
    world.run();
    world.disconnect(alice);
    world.run();
    ASSERT_EQ(sink.events.size(), 3u);
    for (const auto& e : sink.events) {
        EXPECT_EQ(e.kind, webhook_event::message);
    }
}

}  // namespace
}  // namespace parley::rooms::tests
