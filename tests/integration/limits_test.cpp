// Configured limits: room size, rooms per connection, request rate, text size.
#include "test_support.hpp"

namespace parley::integration {
namespace {

class RoomFullTest : public parley_test {
protected:
    std::vector<std::string> daemon_args() const override {
        auto args = relaxed_rate_args();
        args.insert(args.end(), {"--max-room-members", "2"});
        return args;
    }
};

TEST_F(RoomFullTest, ThirdMemberGetsRoomFull) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    ws_client carol = login("carol");
    join_room(alice, "small");
    join_room(bob, "small");
    const json error = expect_error_reply(carol, {{"type", "join"}, {"room", "small"}, {"id", "c"}}, "room_full");
    EXPECT_EQ(error["re"], "c");
    expect_error_reply(carol, {{"type", "say"}, {"room", "small"}, {"text", "x"}, {"id", 2}}, "not_in_room");
    // Other rooms are unaffected, and a place that frees up can be taken.
    join_room(carol, "other");
    call(bob, {{"type", "leave"}, {"room", "small"}, {"id", 1}});
    EXPECT_EQ(join_room(carol, "small")["members"], json({"alice", "carol"}));
}

TEST_F(RoomFullTest, RejoinByAMemberIsNotRefused) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "small");
    join_room(bob, "small");
    EXPECT_EQ(join_room(bob, "small")["members"], json({"alice", "bob"}));
}

class RoomsPerConnectionTest : public parley_test {};

TEST_F(RoomsPerConnectionTest, HundredAndFirstRoomIsTooManyRooms) {
    ws_client alice = login("alice");
    for (int i = 0; i < 100; ++i) {
        alice.send_json({{"type", "join"}, {"room", "room" + std::to_string(i)}, {"id", i}});
    }
    for (int i = 0; i < 100; ++i) {
        const json reply = wait_reply(alice, i);
        ASSERT_EQ(reply.value("type", ""), "joined") << reply;
    }
    expect_error_reply(alice, {{"type", "join"}, {"room", "room100"}, {"id", "over"}}, "too_many_rooms");
    // Joining a room it is already in is not a new room.
    EXPECT_EQ(call(alice, {{"type", "join"}, {"room", "room7"}, {"id", "again"}}).value("type", ""), "joined");
    call(alice, {{"type", "leave"}, {"room", "room0"}, {"id", "leave"}});
    EXPECT_EQ(call(alice, {{"type", "join"}, {"room", "room100"}, {"id", "now"}}).value("type", ""), "joined");
}

class RateLimitTest : public parley_test {
protected:
    std::vector<std::string> daemon_args() const override { return {"--rate-limit", "5", "--rate-burst", "5"}; }
};

TEST_F(RateLimitTest, BurstBeyondTheBucketIsRateLimited) {
    ws_client client = connect();
    // Ten requests at once; the bucket holds five. Login may or may not count, and a token may
    // come back while we send, so only the shape is fixed: a run of successes, then refusals.
    client.send_json({{"type", "login"}, {"user", "alice"}, {"id", 0}});
    for (int i = 1; i < 10; ++i) {
        client.send_json({{"type", "users"}, {"id", i}});
    }
    int served = 0;
    int limited = 0;
    for (int i = 0; i < 10; ++i) {
        const json reply = wait_reply(client, i);
        if (reply.value("type", "") == "error") {
            EXPECT_EQ(reply.value("code", ""), "rate_limited") << reply;
            ++limited;
        } else {
            EXPECT_EQ(limited, 0) << "request " << i << " served after a refusal in the same burst";
            ++served;
        }
    }
    EXPECT_GE(served, 4);
    EXPECT_LE(served, 6);
    EXPECT_GE(limited, 4);

    // The connection stays open and recovers once tokens refill (one per 200 ms).
    json reply;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    for (int id = 100; std::chrono::steady_clock::now() < deadline; ++id) {
        reply = call(client, {{"type", "users"}, {"id", id}});
        if (reply.value("type", "") == "users") {
            break;
        }
        std::this_thread::sleep_for(milliseconds(100));
    }
    EXPECT_EQ(reply.value("type", ""), "users") << reply;
}

TEST_F(RateLimitTest, LimitIsPerConnection) {
    ws_client alice = connect();
    call(alice, {{"type", "login"}, {"user", "alice"}, {"id", 0}});
    for (int i = 1; i < 10; ++i) {
        alice.send_json({{"type", "users"}, {"id", i}});
    }
    EXPECT_EQ(wait_reply(alice, 9).value("code", ""), "rate_limited");
    ws_client bob = connect();
    EXPECT_EQ(call(bob, {{"type", "login"}, {"user", "bob"}, {"id", 1}}).value("type", ""), "welcome");
    EXPECT_EQ(call(bob, {{"type", "users"}, {"id", 2}}).value("type", ""), "users");
}

class TextSizeTest : public parley_test {};

TEST_F(TextSizeTest, TextOverFourKibibytesIsTooLarge) {
    ws_client alice = login("alice");
    join_room(alice, "r");
    expect_error_reply(alice, {{"type", "say"}, {"room", "r"}, {"text", std::string(4097, 'x')}, {"id", 1}},
                       "too_large");
    // The limit counts UTF-8 bytes: 2048 two-byte characters fill it exactly.
    std::string two_byte;
    for (int i = 0; i < 2048; ++i) {
        two_byte += "\xc3\xa9";
    }
    expect_error_reply(alice, {{"type", "say"}, {"room", "r"}, {"text", two_byte + "x"}, {"id", 2}}, "too_large");

    for (const std::string& text : {std::string(4096, 'x'), two_byte}) {
        alice.send_json({{"type", "say"}, {"room", "r"}, {"text", text}});
        EXPECT_EQ(wait_type(alice, "message").value("text", ""), text);
    }
}

}  // namespace
}  // namespace parley::integration
