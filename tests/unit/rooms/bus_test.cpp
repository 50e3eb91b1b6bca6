// The clustering seam: every room event other nodes must know of goes to the message bus once,
// as the same frame the local members receive; messages do not (a cluster sequences them first).

#include "rooms/message_bus.hpp"
#include "rooms/room.hpp"
#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace parley::rooms::tests {
namespace {

class recording_bus final : public message_bus {
public:
    struct event {
        room_event kind;
        std::string room;
        std::string user;
        protocol::shared_frame frame;
    };
    explicit recording_bus(std::vector<event>& sink) : sink_(sink) {}
    void publish(room_event kind, std::string_view room, std::string_view user,
                 const protocol::shared_frame& frame) override {
        sink_.push_back({kind, std::string(room), std::string(user), frame});
    }

private:
    std::vector<event>& sink_;
};

TEST(MessageBus, JoinIsPublishedOnceAsThePresenceFrameMembersReceive) {
    std::vector<recording_bus::event> published;
    chat_world world(test_settings(), 2, test_epoch, std::make_unique<recording_bus>(published));
    test_client& alice = world.login("alice", 0);
    world.join(alice, "lobby");
    test_client& bob = world.login("bob", 1);
    published.clear();
    alice.output.clear();

    world.join(bob, "lobby");

    ASSERT_EQ(published.size(), 1u);
    EXPECT_EQ(published[0].kind, room_event::join);
    EXPECT_EQ(published[0].room, "lobby");
    EXPECT_EQ(published[0].user, "bob");
    auto alice_got = alice.output.of_type("presence");
    ASSERT_EQ(alice_got.size(), 1u);
    EXPECT_EQ(published[0].frame.identity(), alice_got[0].first.identity());
}

TEST(MessageBus, TheLastLocalMemberLeavingIsStillPublished) {
    // Other nodes keep the member list: they must hear of a leave even when nobody here is left
    // to be told.
    std::vector<recording_bus::event> published;
    chat_world world(test_settings(), 1, test_epoch, std::make_unique<recording_bus>(published));
    test_client& alice = world.login("alice", 0);
    world.join(alice, "lobby");
    published.clear();

    world.disconnect(alice);

    ASSERT_EQ(published.size(), 1u);
    EXPECT_EQ(published[0].kind, room_event::leave_disconnected);
    EXPECT_EQ(published[0].user, "alice");
    EXPECT_EQ(payload_of(published[0].frame)["event"], "leave");
}

TEST(MessageBus, TypingAndAnnouncementsArePublishedButMessagesAreNot) {
    std::vector<recording_bus::event> published;
    chat_world world(test_settings(), 1, test_epoch, std::make_unique<recording_bus>(published));
    test_client& alice = world.login("alice", 0);
    world.join(alice, "lobby");
    published.clear();

    alice.send({{"type", "say"}, {"room", "lobby"}, {"text", "hello"}});
    alice.send({{"type", "typing"}, {"room", "lobby"}});
    world.hub().rooms().find("lobby")->announce("maintenance at noon");
    world.run();

    ASSERT_EQ(published.size(), 2u);
    EXPECT_EQ(published[0].kind, room_event::typing);
    EXPECT_EQ(published[0].user, "alice");
    EXPECT_EQ(published[1].kind, room_event::system);
    EXPECT_EQ(payload_of(published[1].frame)["text"], "maintenance at noon");
}

}  // namespace
}  // namespace parley::rooms::tests
