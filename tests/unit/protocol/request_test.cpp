// parse_request: JSON to typed requests, shape validation, the id echo, and name rules.

#include "protocol/names.hpp"
#include "protocol/request.hpp"
#include "protocol/utf8.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace parley::protocol {
namespace {

using json = nlohmann::json;

request parse_ok(const json& message) {
    auto result = parse_request(message.dump());
    EXPECT_TRUE(result.value.has_value()) << message.dump() << ": " << result.message;
    return result.value.value_or(request{});
}

// Passes when parsing fails with `code`, a non-empty message, and `id` as the id to echo.
::testing::AssertionResult fails_with_text(std::string_view text, error_code code, std::string_view id = {}) {
    auto result = parse_request(text);
    if (result.value) {
        return ::testing::AssertionFailure() << "parsed: " << text;
    }
    if (result.error != code) {
        return ::testing::AssertionFailure() << "got " << wire_name(result.error) << " (" << result.message
                                             << ") for " << text;
    }
    if (result.message.empty() || !is_valid_utf8(result.message)) {
        return ::testing::AssertionFailure() << "bad message for " << text;
    }
    if (result.id != id) {
        return ::testing::AssertionFailure() << "id " << result.id << ", expected " << id << " for " << text;
    }
    return ::testing::AssertionSuccess();
}
::testing::AssertionResult fails_with(const json& message, error_code code, std::string_view id = {}) {
    return fails_with_text(message.dump(), code, id);
}

TEST(parse_request, every_type_with_its_fields) {
    request r = parse_ok({{"type", "login"}, {"user", "alice"}, {"token", "t0k"}});
    EXPECT_EQ(r.type, request_type::login);
    EXPECT_EQ(r.user, "alice");
    EXPECT_EQ(r.token, "t0k");

    r = parse_ok({{"type", "join"}, {"room", "lobby"}, {"after", 12}, {"epoch", 1700000000000}});
    EXPECT_EQ(r.type, request_type::join);
    EXPECT_EQ(r.room, "lobby");
    EXPECT_EQ(r.after, 12);
    EXPECT_EQ(r.epoch, 1700000000000);

    r = parse_ok({{"type", "leave"}, {"room", "lobby"}});
    EXPECT_EQ(r.type, request_type::leave);
    EXPECT_EQ(r.room, "lobby");

    r = parse_ok({{"type", "say"}, {"room", "lobby"}, {"text", "hi \"there\"\n"}});
    EXPECT_EQ(r.type, request_type::say);
    EXPECT_EQ(r.text, "hi \"there\"\n");

    r = parse_ok({{"type", "dm"}, {"to", "bob"}, {"text", "psst"}});
    EXPECT_EQ(r.type, request_type::dm);
    EXPECT_EQ(r.to, "bob");
    EXPECT_EQ(r.text, "psst");

    EXPECT_EQ(parse_ok({{"type", "users"}}).type, request_type::users);
    EXPECT_EQ(parse_ok({{"type", "rooms"}}).type, request_type::rooms);

    r = parse_ok({{"type", "history"}, {"room", "lobby"}, {"before", 40}, {"limit", 10}});
    EXPECT_EQ(r.type, request_type::history);
    EXPECT_EQ(r.before, 40);
    EXPECT_EQ(r.limit, 10);
    EXPECT_FALSE(r.after.has_value());
    r = parse_ok({{"type", "history"}, {"room", "lobby"}, {"after", 0}});
    EXPECT_EQ(r.after, 0);
    EXPECT_FALSE(r.before.has_value());

    r = parse_ok({{"type", "typing"}, {"room", "lobby"}});
    EXPECT_EQ(r.type, request_type::typing);
    EXPECT_EQ(r.room, "lobby");
}

TEST(parse_request, dm_history_and_read) {
    request page = parse_ok({{"type", "dm_history"}, {"with", "bob"}, {"before", 9}, {"limit", 5}, {"id", 1}});
    EXPECT_EQ(page.type, request_type::dm_history);
    EXPECT_EQ(page.with, "bob");
    EXPECT_EQ(page.before, 9);
    EXPECT_EQ(page.limit, 5);
    request room = parse_ok({{"type", "read"}, {"room", "lobby"}, {"seq", 40}});
    EXPECT_EQ(room.type, request_type::read);
    EXPECT_EQ(room.room, "lobby");
    EXPECT_TRUE(room.with.empty());
    EXPECT_EQ(room.seq, 40);
    request conversation = parse_ok({{"type", "read"}, {"with", "bob"}, {"seq", 0}});
    EXPECT_EQ(conversation.with, "bob");
    EXPECT_EQ(conversation.seq, 0);

    EXPECT_TRUE(fails_with_text(R"({"type":"dm_history","id":2})", error_code::bad_request, "2"));
    EXPECT_TRUE(fails_with_text(R"({"type":"dm_history","with":"b","before":2,"after":1})", error_code::bad_request));
    EXPECT_TRUE(fails_with_text(R"({"type":"read","room":"r","with":"b","seq":1})", error_code::bad_request));
    EXPECT_TRUE(fails_with_text(R"({"type":"read","seq":1})", error_code::bad_request));
    EXPECT_TRUE(fails_with_text(R"({"type":"read","room":"r"})", error_code::bad_request));
    EXPECT_TRUE(fails_with_text(R"({"type":"read","room":"r","seq":"1"})", error_code::bad_request));
    EXPECT_TRUE(fails_with_text(R"({"type":"read","room":"r","seq":-3,"id":"x"})", error_code::bad_request, "\"x\""));
}

TEST(parse_request, optional_fields_may_be_absent_or_null) {
    request r = parse_ok({{"type", "login"}, {"user", "a"}, {"token", nullptr}});
    EXPECT_TRUE(r.token.empty());
    r = parse_ok({{"type", "join"}, {"room", "r"}, {"after", nullptr}, {"epoch", nullptr}});
    EXPECT_FALSE(r.after.has_value());
    EXPECT_FALSE(r.epoch.has_value());
    r = parse_ok({{"type", "history"}, {"room", "r"}});
    EXPECT_FALSE(r.before || r.after || r.limit);
}

TEST(parse_request, unknown_fields_are_ignored) {
    request r = parse_ok({{"type", "say"}, {"room", "r"}, {"text", "x"}, {"color", "red"}, {"to", 5}});
    EXPECT_EQ(r.type, request_type::say);
    EXPECT_TRUE(r.to.empty());
}

TEST(parse_request, string_id_is_kept_as_json_text) {
    EXPECT_EQ(parse_ok({{"type", "users"}, {"id", "abc"}}).id, "\"abc\"");
    EXPECT_EQ(parse_ok({{"type", "users"}, {"id", ""}}).id, "\"\"") << "an empty string is still an id";
    EXPECT_EQ(parse_ok({{"type", "users"}, {"id", "q\"b\\"}}).id, R"("q\"b\\")");
    EXPECT_EQ(parse_ok({{"type", "users"}, {"id", "\xc3\xa9"}}).id, "\"\xc3\xa9\"");
    std::string id = parse_ok({{"type", "users"}, {"id", "tab\there"}}).id;
    EXPECT_EQ(json::parse(id), "tab\there") << "a control character stays escaped";
    EXPECT_EQ(parse_ok({{"type", "users"}, {"id", std::string(64, 'x')}}).id, '"' + std::string(64, 'x') + '"');
}

TEST(parse_request, integer_id_is_kept_as_json_text) {
    EXPECT_EQ(parse_ok({{"type", "users"}, {"id", 42}}).id, "42");
    EXPECT_EQ(parse_ok({{"type", "users"}, {"id", 0}}).id, "0");
    EXPECT_EQ(parse_ok({{"type", "users"}, {"id", -7}}).id, "-7");
    EXPECT_EQ(parse_ok({{"type", "users"}, {"id", 999'999'999'999'999'999}}).id, "999999999999999999");
    EXPECT_EQ(parse_ok({{"type", "users"}, {"id", -999'999'999'999'999'999}}).id, "-999999999999999999");
}

TEST(parse_request, an_invalid_id_fails_without_an_id) {
    EXPECT_TRUE(fails_with(json{{"type", "users"}, {"id", std::string(65, 'x')}}, error_code::bad_request));
    EXPECT_TRUE(fails_with(json{{"type", "users"}, {"id", 1'000'000'000'000'000'000}}, error_code::bad_request));
    EXPECT_TRUE(fails_with(json{{"type", "users"}, {"id", -1'000'000'000'000'000'000}}, error_code::bad_request));
    EXPECT_TRUE(fails_with_text(R"({"type":"users","id":18446744073709551615})", error_code::bad_request));
    EXPECT_TRUE(fails_with_text(R"({"type":"users","id":1e3})", error_code::bad_request));
    EXPECT_TRUE(fails_with(json{{"type", "users"}, {"id", 2.5}}, error_code::bad_request));
    EXPECT_TRUE(fails_with(json{{"type", "users"}, {"id", true}}, error_code::bad_request));
    EXPECT_TRUE(fails_with(json{{"type", "users"}, {"id", nullptr}}, error_code::bad_request));
    EXPECT_TRUE(fails_with(json{{"type", "users"}, {"id", json::array()}}, error_code::bad_request));
    EXPECT_TRUE(fails_with(json{{"type", "users"}, {"id", json::object()}}, error_code::bad_request));
}

TEST(parse_request, not_a_json_object_is_bad_json) {
    for (const char* text : {"", " ", "{", "}", "{\"type\":}", "[]", "[{\"type\":\"users\"}]", "\"users\"", "1", "null",
                             "true", "{\"type\":\"users\"}{}", "{'type':'users'}"}) {
        EXPECT_TRUE(fails_with_text(text, error_code::bad_json)) << text;
    }
}

TEST(parse_request, invalid_utf8_is_bad_json_not_an_exception) {
    EXPECT_TRUE(fails_with_text("{\"type\":\"say\",\"room\":\"r\",\"text\":\"\xff\"}", error_code::bad_json));
    EXPECT_TRUE(fails_with_text("{\"type\":\"say\",\"room\":\"r\",\"text\":\"\xc3\"}", error_code::bad_json));
}

TEST(parse_request, deep_nesting_does_not_crash) {
    constexpr int depth = 32'000;  // as deep as a 64 KiB message goes
    std::string nested = std::string(depth, '[') + std::string(depth, ']');
    EXPECT_TRUE(fails_with_text(nested, error_code::bad_json));
    // Built as text: the test itself must not recurse through the nesting.
    auto result = parse_request("{\"type\":\"users\",\"x\":" + nested + "}");
    ASSERT_TRUE(result.value.has_value()) << result.message;
    EXPECT_EQ(result.value->type, request_type::users);
}

TEST(parse_request, type_must_be_a_string) {
    EXPECT_TRUE(fails_with(json{{"id", 1}}, error_code::bad_request, "1"));
    EXPECT_TRUE(fails_with(json{{"type", 1}, {"id", "x"}}, error_code::bad_request, "\"x\""));
    EXPECT_TRUE(fails_with(json{{"type", nullptr}}, error_code::bad_request));
    EXPECT_TRUE(fails_with(json::object(), error_code::bad_request));
}

TEST(parse_request, unknown_types_keep_the_id) {
    EXPECT_TRUE(fails_with(json{{"type", "shout"}, {"id", 9}}, error_code::unknown_type, "9"));
    EXPECT_TRUE(fails_with(json{{"type", ""}}, error_code::unknown_type));
    EXPECT_TRUE(fails_with(json{{"type", "Login"}}, error_code::unknown_type)) << "names are case-sensitive";
    auto result = parse_request(json{{"type", "shout"}}.dump());
    EXPECT_NE(result.message.find("shout"), std::string::npos) << result.message;
}

TEST(parse_request, a_long_unknown_type_is_cut_at_a_character_boundary) {
    // 31 ASCII bytes, then two-byte characters: byte 32 falls inside one.
    std::string type = std::string(31, 't');
    for (int i = 0; i < 10; ++i) {
        type += "\xc3\xa9";
    }
    auto result = parse_request(json{{"type", type}}.dump());
    ASSERT_EQ(result.error, error_code::unknown_type);
    EXPECT_TRUE(is_valid_utf8(result.message)) << "the message goes back to the client as JSON text";
    EXPECT_NE(result.message.find(std::string(31, 't')), std::string::npos);
    EXPECT_EQ(result.message.find("\xc3\xa9\xc3\xa9"), std::string::npos) << "still cut short";
}

TEST(parse_request, required_fields_must_be_present_strings) {
    const json missing_or_wrong[] = {
        {{"type", "login"}},
        {{"type", "login"}, {"user", 1}},
        {{"type", "login"}, {"user", "a"}, {"token", 5}},
        {{"type", "join"}},
        {{"type", "join"}, {"room", json::array()}},
        {{"type", "leave"}},
        {{"type", "say"}, {"text", "x"}},
        {{"type", "say"}, {"room", "r"}},
        {{"type", "say"}, {"room", "r"}, {"text", nullptr}},
        {{"type", "dm"}, {"text", "x"}},
        {{"type", "dm"}, {"to", "b"}, {"text", 1}},
        {{"type", "history"}},
        {{"type", "typing"}, {"room", 3}},
    };
    for (json request : missing_or_wrong) {
        request["id"] = "i";
        EXPECT_TRUE(fails_with(request, error_code::bad_request, "\"i\"")) << request.dump();
    }
}

TEST(parse_request, counts_are_non_negative_integers) {
    constexpr auto max = std::numeric_limits<std::int64_t>::max();
    for (const char* field : {"after", "before", "limit"}) {
        json base{{"type", "history"}, {"room", "r"}};
        for (json bad : {json(-1), json(1.5), json("3"), json(true), json::array()}) {
            json request = base;
            request[field] = bad;
            EXPECT_TRUE(fails_with(request, error_code::bad_request)) << request.dump();
        }
        json request = base;
        request[field] = max;
        EXPECT_TRUE(parse_request(request.dump()).value.has_value()) << "INT64_MAX is allowed for " << field;
    }
    EXPECT_TRUE(
        fails_with_text(R"({"type":"history","room":"r","after":9223372036854775808})", error_code::bad_request));
    EXPECT_TRUE(fails_with_text(R"({"type":"join","room":"r","epoch":-5})", error_code::bad_request));
    EXPECT_TRUE(fails_with_text(R"({"type":"join","room":"r","after":2.0})", error_code::bad_request));
}

TEST(parse_request, members_takes_a_room_a_name_to_start_after_and_a_limit) {
    request first = parse_ok(json{{"type", "members"}, {"room", "big"}, {"id", 4}});
    EXPECT_EQ(first.type, request_type::members);
    EXPECT_EQ(first.room, "big");
    EXPECT_TRUE(first.after_name.empty());
    EXPECT_FALSE(first.limit);
    EXPECT_FALSE(first.after);
    request next = parse_ok(json{{"type", "members"}, {"room", "big"}, {"after", "m\u00e4x"}, {"limit", 500}});
    EXPECT_EQ(next.after_name, "m\xc3\xa4x");
    EXPECT_EQ(next.limit, 500);
    // A seq where a name belongs, a negative limit, no room: each a bad_request naming the field.
    EXPECT_TRUE(fails_with(json{{"type", "members"}, {"room", "big"}, {"after", 7}, {"id", 1}}, error_code::bad_request, "1"));
    EXPECT_TRUE(fails_with(json{{"type", "members"}, {"room", "big"}, {"limit", -1}}, error_code::bad_request));
    EXPECT_TRUE(fails_with(json{{"type", "members"}, {"after", "bob"}}, error_code::bad_request));
    // The parser reused for a members request after a history one keeps nothing of it.
    parse_result_request reused = parse_request(R"({"type":"members","room":"r","after":"zed"})");
    parse_request(R"({"type":"history","room":"r","after":3})", reused);
    ASSERT_TRUE(reused.value);
    EXPECT_TRUE(reused.value->after_name.empty());
}

TEST(parse_request, history_takes_before_or_after_not_both) {
    EXPECT_TRUE(fails_with(json{{"type", "history"}, {"room", "r"}, {"before", 5}, {"after", 1}, {"id", 3}},
                           error_code::bad_request, "3"));
}

TEST(name_rules, user_names) {
    EXPECT_TRUE(valid_user_name("a"));
    EXPECT_TRUE(valid_user_name("Az09_.-"));
    EXPECT_TRUE(valid_user_name(std::string(32, 'u')));
    EXPECT_FALSE(valid_user_name(""));
    EXPECT_FALSE(valid_user_name(std::string(33, 'u')));
    for (const char* bad : {"a b", "a/b", "a@b", "a:b", "\xc3\xa9", "a\n", "a+b", "a,b"}) {
        EXPECT_FALSE(valid_user_name(bad)) << bad;
    }
    EXPECT_FALSE(valid_user_name(std::string_view("ab\0", 3)));
}

TEST(name_rules, room_names) {
    EXPECT_TRUE(valid_room_name("lobby"));
    EXPECT_TRUE(valid_room_name(std::string(64, 'r')));
    EXPECT_FALSE(valid_room_name(std::string(65, 'r')));
    EXPECT_FALSE(valid_room_name(""));
    EXPECT_FALSE(valid_room_name("#general"));
    EXPECT_FALSE(valid_room_name("two words"));
}

}  // namespace
}  // namespace parley::protocol
