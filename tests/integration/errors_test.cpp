// Request errors: each code, with the connection staying open afterwards.
#include "test_support.hpp"

namespace parley::integration {
namespace {

class ErrorsTest : public parley_test {};

TEST_F(ErrorsTest, UnparsableOrNonObjectJsonIsBadJson) {
    ws_client alice = login("alice");
    for (const char* text : {"{not json", "", "[1,2]", "\"string\"", "42", "null", "{\"type\":\"users\"} extra"}) {
        alice.send_text(text);
        const json error = expect_error(alice, "bad_json");
        EXPECT_FALSE(error.contains("re")) << error;
    }
    const json users = call(alice, {{"type", "users"}, {"id", 1}});
    EXPECT_EQ(users["users"], json({"alice"})) << "connection unusable after bad_json";
}

TEST_F(ErrorsTest, BadJsonBeforeLoginKeepsConnection) {
    ws_client client = connect();
    client.send_text("{{{");
    expect_error(client, "bad_json");
    EXPECT_EQ(call(client, {{"type", "login"}, {"user", "alice"}, {"id", 1}}).value("type", ""), "welcome");
}

TEST_F(ErrorsTest, MissingOrWrongTypedTypeIsBadRequest) {
    ws_client alice = login("alice");
    expect_error_reply(alice, {{"id", 1}}, "bad_request");
    expect_error_reply(alice, {{"type", 5}, {"id", 2}}, "bad_request");
    expect_error_reply(alice, {{"type", nullptr}, {"id", 3}}, "bad_request");
}

TEST_F(ErrorsTest, UnknownTypeIsUnknownType) {
    ws_client alice = login("alice");
    const json error = expect_error_reply(alice, {{"type", "fly"}, {"id", "x"}}, "unknown_type");
    EXPECT_EQ(error["re"], "x");
    expect_error_reply(alice, {{"type", "LOGIN"}, {"id", "y"}}, "unknown_type");
}

TEST_F(ErrorsTest, MissingOrWrongTypedFieldsAreBadRequest) {
    ws_client alice = login("alice");
    join_room(alice, "r");
    int id = 0;
    for (const json& request : {
             json{{"type", "join"}},
             json{{"type", "join"}, {"room", 5}},
             json{{"type", "join"}, {"room", "r"}, {"after", "3"}},
             json{{"type", "join"}, {"room", "r"}, {"after", 1}, {"epoch", "e"}},
             json{{"type", "leave"}},
             json{{"type", "say"}, {"room", "r"}},
             json{{"type", "say"}, {"text", "x"}},
             json{{"type", "say"}, {"room", "r"}, {"text", 5}},
             json{{"type", "say"}, {"room", json::array({"r"})}, {"text", "x"}},
             json{{"type", "history"}},
             json{{"type", "history"}, {"room", "r"}, {"limit", "ten"}},
             json{{"type", "history"}, {"room", "r"}, {"before", "5"}},
             json{{"type", "typing"}},
         }) {
        json numbered = request;
        numbered["id"] = ++id;
        expect_error_reply(alice, numbered, "bad_request");
    }
}

TEST_F(ErrorsTest, EmptyTextIsBadRequest) {
    ws_client alice = login("alice");
    join_room(alice, "r");
    expect_error_reply(alice, {{"type", "say"}, {"room", "r"}, {"text", ""}, {"id", 1}}, "bad_request");
}

TEST_F(ErrorsTest, InvalidRoomNamesAreInvalidName) {
    ws_client alice = login("alice");
    int id = 0;
    for (const std::string& room : {std::string(), std::string(65, 'r'), std::string("has space"),
                                    std::string("a/b"), std::string("caf\xc3\xa9"), std::string("#general")}) {
        expect_error_reply(alice, {{"type", "join"}, {"room", room}, {"id", ++id}}, "invalid_name");
    }
    EXPECT_EQ(call(alice, {{"type", "rooms"}, {"id", "rooms"}})["rooms"], json::array());
}

TEST_F(ErrorsTest, RoomRequestsOutsideTheRoomAreNotInRoom) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(bob, "r");  // the room exists, alice is just not in it
    for (const char* room : {"r", "nowhere"}) {
        expect_error_reply(alice, {{"type", "say"}, {"room", room}, {"text", "x"}, {"id", 1}}, "not_in_room");
        expect_error_reply(alice, {{"type", "leave"}, {"room", room}, {"id", 2}}, "not_in_room");
        expect_error_reply(alice, {{"type", "typing"}, {"room", room}, {"id", 3}}, "not_in_room");
        expect_error_reply(alice, {{"type", "history"}, {"room", room}, {"id", 4}}, "not_in_room");
    }
    // Nothing of that reached bob.
    alice.send_json({{"type", "dm"}, {"to", "bob"}, {"text", "marker"}});
    EXPECT_EQ(expect_type(bob, "dm").value("text", ""), "marker");
}

TEST_F(ErrorsTest, ErrorHasCodeAndMessage) {
    ws_client alice = login("alice");
    const json error = call(alice, {{"type", "fly"}, {"id", 1}});
    ASSERT_EQ(error.value("type", ""), "error");
    EXPECT_EQ(error.size(), 4u) << "error is {type, code, message, re}: " << error;
    EXPECT_FALSE(error.value("message", "").empty()) << error;
}

}  // namespace
}  // namespace parley::integration
