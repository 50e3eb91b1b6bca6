// Malformed requests through a session: the error codes, the id echo, and that the connection
// stays open.

#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

namespace parley::rooms::tests {
namespace {

class request_errors : public ::testing::Test {
protected:
    chat_world world;
    test_client& a = world.login("alice");

    void TearDown() override { EXPECT_TRUE(a.output.closes.empty()) << "a bad request never closes"; }
};

TEST_F(request_errors, string_and_integer_ids_are_echoed_as_given) {
    for (json id : {json("abc"), json(""), json(std::string(64, 'i')), json("quote\" and \\ and \xc3\xa9"), json(0),
                    json(-5), json(999'999'999'999'999'999), json(-999'999'999'999'999'999)}) {
        a.send({{"type", "users"}, {"id", id}});
        json reply = a.take_one();
        EXPECT_EQ(reply["type"], "users");
        EXPECT_EQ(reply["re"], id) << id.dump();
        EXPECT_EQ(reply["re"].is_string(), id.is_string()) << "an id keeps its JSON type";
    }
}

TEST_F(request_errors, no_id_no_re) {
    a.send({{"type", "users"}});
    EXPECT_FALSE(a.take_one().contains("re"));
}

TEST_F(request_errors, an_invalid_id_is_a_bad_request_without_re) {
    for (json id : {json(std::string(65, 'i')), json(1'000'000'000'000'000'000), json(-1'000'000'000'000'000'000),
                    json(1.5), json(true), json(nullptr), json::array({1}), json::object()}) {
        a.send({{"type", "users"}, {"id", id}});
        EXPECT_TRUE(is_error(a.take_one(), "bad_request")) << id.dump();
    }
}

TEST_F(request_errors, not_json_or_not_an_object_is_bad_json) {
    for (const char* text : {"", "{", "nonsense", "[1,2]", "\"users\"", "42", "null", "{\"type\":\"users\"} x"}) {
        a.send_raw(text);
        EXPECT_TRUE(is_error(a.take_one(), "bad_json")) << text;
    }
}

TEST_F(request_errors, unknown_type_keeps_the_id) {
    a.send({{"type", "shout"}, {"id", 12}});
    EXPECT_TRUE(is_error(a.take_one(), "unknown_type", 12));
    a.send({{"type", "LOGIN"}});
    EXPECT_TRUE(is_error(a.take_one(), "unknown_type"));
}

TEST_F(request_errors, a_long_multibyte_unknown_type_gives_a_valid_utf8_error) {
    std::string type = "x";
    for (int i = 0; i < 40; ++i) {
        type += "\xe2\x82\xac";  // three bytes each: byte 32 falls inside one
    }
    a.send({{"type", type}});
    EXPECT_TRUE(is_error(a.take_one(), "unknown_type")) << "take_one() parses the reply, which needs valid UTF-8";
}

TEST_F(request_errors, a_missing_or_mistyped_type_is_a_bad_request) {
    a.send({{"id", "t"}});
    EXPECT_TRUE(is_error(a.take_one(), "bad_request", "t"));
    a.send({{"type", 3}});
    EXPECT_TRUE(is_error(a.take_one(), "bad_request"));
}

TEST_F(request_errors, fields_of_the_wrong_type_are_bad_requests) {
    const std::vector<json> requests{
        {{"type", "join"}},
        {{"type", "join"}, {"room", 5}},
        {{"type", "join"}, {"room", "r"}, {"after", -1}},
        {{"type", "join"}, {"room", "r"}, {"after", "3"}},
        {{"type", "join"}, {"room", "r"}, {"epoch", 1.5}},
        {{"type", "say"}, {"room", "r"}},
        {{"type", "say"}, {"room", "r"}, {"text", 7}},
        {{"type", "say"}, {"room", nullptr}, {"text", "x"}},
        {{"type", "dm"}, {"text", "x"}},
        {{"type", "dm"}, {"to", json::array()}, {"text", "x"}},
        {{"type", "leave"}, {"room", true}},
        {{"type", "typing"}},
        {{"type", "history"}, {"room", "r"}, {"before", "1"}},
        {{"type", "login"}, {"user", "other"}, {"token", 1}},
    };
    for (json request : requests) {
        request["id"] = "w";
        a.send(request);
        EXPECT_TRUE(is_error(a.take_one(), "bad_request", "w")) << request.dump();
    }
    EXPECT_EQ(a.session.room_count(), 0u);
}

TEST_F(request_errors, the_session_works_after_errors) {
    a.send_raw("{oops");
    a.take();
    EXPECT_EQ(world.join(a, "r")["type"], "joined");
}

}  // namespace
}  // namespace parley::rooms::tests
