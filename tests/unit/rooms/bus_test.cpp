// The clustering seam: every room event goes to the message bus once, as the same frame the
// local members receive.

#include "rooms/message_bus.hpp"
#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

namespace parley::rooms::tests {
namespace {

class recording_bus final : public message_bus {
public:
    struct event {
        std::string room;
        std::int64_t seq;
        protocol::shared_frame frame;
    };
    explicit recording_bus(std::vector<event>& sink) : sink_(sink) {}
    void publish(std::string_view room, std::int64_t seq, const protocol::shared_frame& frame) override {
        sink_.push_back({std::string(room), seq, frame});
    }

private:
    std::vector<event>& sink_;
};

TEST(MessageBus, EachSayIsPublishedOnceAsTheFrameMembersReceive) {
    std::vector<recording_bus::event> published;
    chat_world world(test_settings(), 2, test_epoch, std::make_unique<recording_bus>(published));
    test_client& alice = world.login("alice", 0);
    test_client& bob = world.login("bob", 1);
    world.join(alice, "lobby");
    world.join(bob, "lobby");
    published.clear();
    alice.output.clear();
    bob.output.clear();

    alice.send({{"type", "say"}, {"room", "lobby"}, {"text", "hello"}});
    world.run();

    ASSERT_EQ(published.size(), 1u);
    EXPECT_EQ(published[0].room, "lobby");
    EXPECT_EQ(published[0].seq, 1);
    auto alice_got = alice.output.of_type("message");
    auto bob_got = bob.output.of_type("message");
    ASSERT_EQ(alice_got.size(), 1u);
    ASSERT_EQ(bob_got.size(), 1u);
    EXPECT_EQ(published[0].frame.identity(), alice_got[0].first.identity());
    EXPECT_EQ(published[0].frame.identity(), bob_got[0].first.identity());
}

TEST(MessageBus, PresenceIsPublishedWithoutSeq) {
    std::vector<recording_bus::event> published;
    chat_world world(test_settings(), 2, test_epoch, std::make_unique<recording_bus>(published));
    test_client& alice = world.login("alice", 0);
    world.join(alice, "lobby");
    test_client& bob = world.login("bob", 1);
    published.clear();

    world.join(bob, "lobby");

    ASSERT_EQ(published.size(), 1u);
    EXPECT_EQ(published[0].seq, 0);
    json event = payload_of(published[0].frame);
    EXPECT_EQ(event["type"], "presence");
    EXPECT_EQ(event["user"], "bob");
    EXPECT_EQ(event["event"], "join");
}

}  // namespace
}  // namespace parley::rooms::tests
