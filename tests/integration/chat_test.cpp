// Rooms: join, say, leave, the rooms list, and a room's life after its last member left.
#include "test_support.hpp"

namespace parley::integration {
namespace {

class ChatTest : public parley_test {};

TEST_F(ChatTest, TwoUsersChat) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "lobby");
    join_room(bob, "lobby");

    alice.send_json({{"type", "say"}, {"room", "lobby"}, {"text", "hi bob"}});
    for (ws_client* client : {&alice, &bob}) {
        const json message = wait_type(*client, "message");
        expect_message_object(message, "lobby", "alice", "hi bob");
        EXPECT_EQ(message["seq"], 1);
    }
    bob.send_json({{"type", "say"}, {"room", "lobby"}, {"text", "hi alice"}});
    for (ws_client* client : {&alice, &bob}) {
        const json message = wait_type(*client, "message");
        expect_message_object(message, "lobby", "bob", "hi alice");
        EXPECT_EQ(message["seq"], 2);
    }
}

TEST_F(ChatTest, JoinedReplyHasEpochMembersAndEmptyHistory) {
    ws_client alice = login("alice");
    const json joined = call(alice, {{"type", "join"}, {"room", "fresh"}, {"id", 5}});
    EXPECT_EQ(joined.value("type", ""), "joined");
    EXPECT_EQ(joined.value("room", ""), "fresh");
    EXPECT_EQ(joined["re"], 5);
    EXPECT_TRUE(joined.contains("epoch") && joined["epoch"].is_number_integer()) << joined;
    EXPECT_EQ(joined["members"], json({"alice"}));
    EXPECT_EQ(joined["history"], json::array());
    EXPECT_FALSE(joined.contains("recovered")) << "recovered is only sent when after was: " << joined;
}

TEST_F(ChatTest, MembersAreSortedAndIncludeSelf) {
    ws_client carol = login("carol");
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(carol, "r");
    join_room(alice, "r");
    EXPECT_EQ(join_room(bob, "r")["members"], json({"alice", "bob", "carol"}));
}

TEST_F(ChatTest, SeqIsPerRoomAndConsecutive) {
    ws_client alice = login("alice");
    join_room(alice, "one");
    join_room(alice, "two");
    for (const char* room : {"one", "two", "one", "one", "two"}) {
        alice.send_json({{"type", "say"}, {"room", room}, {"text", "x"}});
    }
    const std::vector<json> messages = read_messages(alice, 5);
    std::vector<std::pair<std::string, int>> seen;
    for (const json& m : messages) {
        seen.emplace_back(m.value("room", ""), m.value("seq", 0));
    }
    const std::vector<std::pair<std::string, int>> expected = {{"one", 1}, {"two", 1}, {"one", 2}, {"one", 3}, {"two", 2}};
    EXPECT_EQ(seen, expected);
}

TEST_F(ChatTest, TextIsDeliveredByteForByte) {
    ws_client alice = login("alice");
    join_room(alice, "r");
    const std::string text = "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x8e\x89 \"quoted\" \\ back\nslash";
    alice.send_json({{"type", "say"}, {"room", "r"}, {"text", text}});
    EXPECT_EQ(wait_type(alice, "message").value("text", ""), text);
}

TEST_F(ChatTest, FragmentedRequestIsReassembled) {
    ws_client alice = login("alice");
    alice.send_json({{"type", "join"}, {"room", "pieces"}, {"id", "frag"}}, 3);
    EXPECT_EQ(wait_reply(alice, "frag").value("type", ""), "joined");
}

TEST_F(ChatTest, JoiningAgainRepliesJoinedWithoutSecondPresence) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(bob, "r");
    join_room(alice, "r");
    const json again = join_room(alice, "r");
    EXPECT_EQ(again["members"], json({"alice", "bob"}));

    alice.send_json({{"type", "say"}, {"room", "r"}, {"text", "marker"}});
    const std::vector<json> seen = read_until(bob, is_chat("marker"));
    EXPECT_EQ(count_if(seen, is_type("presence")), 1u) << "bob saw alice join more than once";
}

TEST_F(ChatTest, LeaveRepliesLeftAndEndsMembership) {
    ws_client alice = login("alice");
    join_room(alice, "r");
    EXPECT_EQ(call(alice, {{"type", "leave"}, {"room", "r"}, {"id", 9}}),
              json({{"type", "left"}, {"room", "r"}, {"re", 9}}));
    expect_error_reply(alice, {{"type", "say"}, {"room", "r"}, {"text", "x"}, {"id", 10}}, "not_in_room");
    expect_error_reply(alice, {{"type", "leave"}, {"room", "r"}, {"id", 11}}, "not_in_room");
}

TEST_F(ChatTest, LeftMemberNoLongerReceives) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "r");
    join_room(alice, "other");
    join_room(bob, "r");
    join_room(bob, "other");
    call(bob, {{"type", "leave"}, {"room", "r"}, {"id", 1}});
    alice.send_json({{"type", "say"}, {"room", "r"}, {"text", "not for bob"}});
    alice.send_json({{"type", "say"}, {"room", "other"}, {"text", "for bob"}});
    const std::vector<json> seen = read_until(bob, is_chat("for bob"));
    EXPECT_EQ(count_if(seen, is_chat("not for bob")), 0u);
}

TEST_F(ChatTest, RoomsAreSortedWithMemberCounts) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "zeta");
    join_room(alice, "alpha");
    join_room(bob, "alpha");
    join_room(bob, "mid");
    const json reply = call(alice, {{"type", "rooms"}, {"id", "r"}});
    EXPECT_EQ(reply.value("type", ""), "rooms");
    EXPECT_EQ(reply["re"], "r");
    EXPECT_EQ(reply["rooms"], json::parse(R"([{"name":"alpha","members":2},{"name":"mid","members":1},
                                              {"name":"zeta","members":1}])"));
}

TEST_F(ChatTest, EmptyRoomDisappearsButKeepsSeqAndEpoch) {
    ws_client alice = login("alice");
    const json first = join_room(alice, "r");
    for (const char* text : {"one", "two"}) {
        alice.send_json({{"type", "say"}, {"room", "r"}, {"text", text}});
    }
    read_until(alice, is_chat("two"));
    call(alice, {{"type", "leave"}, {"room", "r"}, {"id", "leave"}});

    const json rooms = call(alice, {{"type", "rooms"}, {"id", "rooms"}});
    EXPECT_EQ(rooms["rooms"], json::array()) << "a room without members must not be listed";

    const json again = join_room(alice, "r");
    EXPECT_EQ(again["epoch"], first["epoch"]);
    ASSERT_EQ(again["history"].size(), 2u) << again;
    EXPECT_EQ(again["history"][0]["text"], "one");
    EXPECT_EQ(again["history"][1]["seq"], 2);
    alice.send_json({{"type", "say"}, {"room", "r"}, {"text", "three"}});
    EXPECT_EQ(wait_type(alice, "message")["seq"], 3);
}

TEST_F(ChatTest, RoomNamesUseTheWholeAlphabetUpToSixtyFourChars) {
    ws_client alice = login("alice");
    for (const std::string& room : {std::string(64, 'r'), std::string("Az09_.-"), std::string("x")}) {
        const json joined = join_room(alice, room);
        EXPECT_EQ(joined["members"], json({"alice"}));
    }
}

}  // namespace
}  // namespace parley::integration
