// presence and the disconnect notice.
#include "test_support.hpp"

namespace parley::integration {
namespace {

class PresenceTest : public parley_test {
protected:
    // Waits until client has seen both the presence leave and the system notice for user in
    // room (their relative order is not specified).
    static void expect_disconnect_notice(ws_client& client, const std::string& room, const std::string& user) {
        const json leave = {{"type", "presence"}, {"room", room}, {"user", user}, {"event", "leave"}};
        const json notice = {{"type", "system"}, {"text", user + " disconnected"}};
        bool saw_leave = false;
        bool saw_notice = false;
        while (!saw_leave || !saw_notice) {
            const json message = next_message(client);
            saw_leave = saw_leave || message == leave;
            saw_notice = saw_notice || message == notice;
        }
    }
};

TEST_F(PresenceTest, JoinAndLeaveAreAnnouncedToOthers) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "r");
    join_room(bob, "r");
    EXPECT_EQ(wait_type(alice, "presence"),
              json({{"type", "presence"}, {"room", "r"}, {"user", "bob"}, {"event", "join"}}));
    call(bob, {{"type", "leave"}, {"room", "r"}, {"id", 1}});
    EXPECT_EQ(wait_type(alice, "presence"),
              json({{"type", "presence"}, {"room", "r"}, {"user", "bob"}, {"event", "leave"}}));
}

TEST_F(PresenceTest, NobodyHearsAboutThemselves) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "r");
    join_room(bob, "r");
    alice.send_json({{"type", "say"}, {"room", "r"}, {"text", "marker"}});
    const std::vector<json> seen = read_until(bob, is_chat("marker"));
    EXPECT_EQ(count_if(seen, is_type("presence")), 0u) << "bob got presence for his own join";
}

TEST_F(PresenceTest, AbruptDisconnectNotifiesEveryRoom) {
    ws_client alice = login("alice");
    ws_client carol = login("carol");
    ws_client bob = login("bob");
    join_room(alice, "one");
    join_room(carol, "two");
    join_room(bob, "one");
    join_room(bob, "two");
    bob.close_socket();
    expect_disconnect_notice(alice, "one", "bob");
    expect_disconnect_notice(carol, "two", "bob");
    const json rooms = call(alice, {{"type", "rooms"}, {"id", 1}});
    EXPECT_EQ(rooms["rooms"], json::parse(R"([{"name":"one","members":1},{"name":"two","members":1}])"));
}

TEST_F(PresenceTest, CloseHandshakeNotifiesLikeDisconnect) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "r");
    join_room(bob, "r");
    bob.send_close(1000, "bye");
    EXPECT_EQ(bob.expect_close(), 1000);
    expect_disconnect_notice(alice, "r", "bob");
}

TEST_F(PresenceTest, LeftRoomGetsNoDisconnectNotice) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "r");
    join_room(alice, "s");
    join_room(bob, "r");
    join_room(bob, "s");
    call(bob, {{"type", "leave"}, {"room", "r"}, {"id", 1}});
    bob.close_socket();
    const std::vector<json> seen = read_until(alice, [](const json& m) {
        return m.value("type", "") == "presence" && m.value("event", "") == "leave" && m.value("room", "") == "s";
    });
    // One leave for r (the explicit one) and one for s (the disconnect); none twice.
    EXPECT_EQ(count_if(seen, [](const json& m) { return m.value("event", "") == "leave"; }), 2u);
}

}  // namespace
}  // namespace parley::integration
