// The admin API's handlers without a socket: the token, the routes and methods, bodies that are
// not what they should be, and what each action answers and does to the chat.

#include "server/admin_api.hpp"

#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace parley::server::tests {
namespace {

namespace http = boost::beast::http;
using json = nlohmann::json;
using rooms::tests::chat_world;
using rooms::tests::test_client;

constexpr std::string_view token = "s3cret-admin-token";
constexpr std::string_view bearer = "Bearer s3cret-admin-token";

config::settings admin_settings() {
    config::settings s = rooms::tests::test_settings();
    s.admin_token = std::string(token);
    return s;
}

class admin_api : public ::testing::Test {
protected:
    admin_reply call(http::verb method, std::string_view path, std::string_view body = {},
                     std::string_view authorization = bearer) {
        return handle_admin(method, path, authorization, body, world_.hub(), settings_);
    }
    admin_reply post(std::string_view path, const json& body) { return call(http::verb::post, path, body.dump()); }
    static json body_of(const admin_reply& reply) {
        json j = json::parse(reply.body, nullptr, false);
        EXPECT_FALSE(j.is_discarded()) << reply.body;
        return j;
    }
    static std::string error_of(const admin_reply& reply) { return body_of(reply).value("error", ""); }

    config::settings settings_ = admin_settings();
    chat_world world_{settings_};
};

TEST_F(admin_api, without_a_configured_token_the_api_is_off) {
    const config::settings off = rooms::tests::test_settings();  // admin.token empty
    chat_world world(off);
    admin_reply reply = handle_admin(http::verb::get, "/admin/users", bearer, {}, world.hub(), off);
    EXPECT_EQ(reply.status, http::status::not_found);
    EXPECT_FALSE(reply.challenge);
    reply = handle_admin(http::verb::get, "/admin/users", "Bearer ", {}, world.hub(), off);
    EXPECT_EQ(reply.status, http::status::not_found) << "an empty token never matches the empty setting";
}

TEST_F(admin_api, a_missing_or_wrong_token_gets_401_with_a_challenge) {
    for (std::string_view authorization :
         {std::string_view{}, std::string_view("Bearer"), std::string_view("Bearer "), std::string_view("Bearer wrong"),
          std::string_view("Basic czNjcmV0LWFkbWluLXRva2Vu"), std::string_view("Bearer s3cret-admin-toke"),
          std::string_view("Bearer s3cret-admin-token2"), std::string_view("s3cret-admin-token")}) {
        admin_reply reply = call(http::verb::get, "/admin/users", {}, authorization);
        EXPECT_EQ(reply.status, http::status::unauthorized) << authorization;
        EXPECT_TRUE(reply.challenge) << authorization;
        EXPECT_EQ(error_of(reply), "a valid admin bearer token is required");
    }
    // The token is checked before the path: nothing is revealed about which paths exist.
    EXPECT_EQ(call(http::verb::get, "/admin/nothing", {}, "Bearer wrong").status, http::status::unauthorized);
}

TEST_F(admin_api, the_scheme_is_case_insensitive_and_the_token_is_not) {
    EXPECT_EQ(call(http::verb::get, "/admin/users", {}, "bearer s3cret-admin-token").status, http::status::ok);
    EXPECT_EQ(call(http::verb::get, "/admin/users", {}, "BEARER s3cret-admin-token").status, http::status::ok);
    EXPECT_EQ(call(http::verb::get, "/admin/users", {}, "Bearer S3CRET-ADMIN-TOKEN").status,
              http::status::unauthorized);
}

TEST_F(admin_api, an_unknown_path_is_404) {
    admin_reply reply = call(http::verb::get, "/admin/nothing");
    EXPECT_EQ(reply.status, http::status::not_found);
    EXPECT_EQ(error_of(reply), "no admin endpoint /admin/nothing");
    EXPECT_EQ(call(http::verb::get, "/admin").status, http::status::not_found);
    EXPECT_EQ(call(http::verb::get, "/admin/").status, http::status::not_found);
}

TEST_F(admin_api, a_wrong_method_is_405_naming_the_right_one) {
    struct expectation {
        http::verb method;
        std::string_view path;
        std::string_view allow;
    };
    for (const expectation& e : {expectation{http::verb::post, "/admin/users", "GET"},
                                 expectation{http::verb::delete_, "/admin/rooms", "GET"},
                                 expectation{http::verb::get, "/admin/kick", "POST"},
                                 expectation{http::verb::put, "/admin/announce", "POST"},
                                 expectation{http::verb::get, "/admin/close_room", "POST"}}) {
        admin_reply reply = call(e.method, e.path, "{}");
        EXPECT_EQ(reply.status, http::status::method_not_allowed) << e.path;
        EXPECT_EQ(reply.allow, e.allow) << e.path;
        EXPECT_EQ(error_of(reply), "use " + std::string(e.allow)) << e.path;
    }
}

TEST_F(admin_api, users_and_rooms_are_listed) {
    EXPECT_EQ(body_of(call(http::verb::get, "/admin/users")), json::parse(R"({"users":[]})"));
    test_client& alice = world_.login("alice", 0);
    world_.login("bob", 1);
    world_.join(alice, "garden");
    admin_reply users = call(http::verb::get, "/admin/users");
    EXPECT_EQ(users.status, http::status::ok);
    EXPECT_EQ(body_of(users), json::parse(R"({"users":[{"name":"alice","connections":1},
                                                         {"name":"bob","connections":1}]})"));
    admin_reply listed = call(http::verb::get, "/admin/rooms");
    EXPECT_EQ(listed.status, http::status::ok);
    bool garden = false;
    const json rooms = body_of(listed);
    for (const json& room : rooms["rooms"]) {
        if (room["name"] == "garden") {
            garden = true;
            EXPECT_EQ(room["members"], 1);
        }
    }
    EXPECT_TRUE(garden) << listed.body;
}

TEST_F(admin_api, a_body_that_is_not_a_json_object_is_400) {
    for (std::string_view path : {"/admin/kick", "/admin/announce", "/admin/close_room"}) {
        for (std::string_view body : {"", "not json", "[1,2]", "\"user\"", "{\"user\":"}) {
            admin_reply reply = call(http::verb::post, path, body);
            EXPECT_EQ(reply.status, http::status::bad_request) << path << " " << body;
            EXPECT_EQ(error_of(reply), "the body must be a JSON object") << path << " " << body;
        }
    }
}

TEST_F(admin_api, a_missing_or_invalid_field_is_400_naming_it) {
    EXPECT_EQ(error_of(post("/admin/kick", json::object())), "field 'user' is required");
    EXPECT_EQ(error_of(post("/admin/kick", {{"user", nullptr}})), "field 'user' is required");
    EXPECT_EQ(error_of(post("/admin/kick", {{"user", ""}})), "field 'user' must be a non-empty string");
    EXPECT_EQ(error_of(post("/admin/kick", {{"user", 7}})), "field 'user' must be a non-empty string");
    EXPECT_EQ(error_of(post("/admin/kick", {{"user", "alice"}, {"reason", 3}})),
              "field 'reason' must be a non-empty string");
    EXPECT_EQ(error_of(post("/admin/announce", {{"room", "lobby"}})), "field 'text' is required");
    EXPECT_EQ(error_of(post("/admin/announce", {{"text", "hi"}, {"room", false}})),
              "field 'room' must be a non-empty string");
    EXPECT_EQ(error_of(post("/admin/close_room", {{"reason", "x"}})), "field 'room' is required");
    EXPECT_EQ(post("/admin/close_room", {{"reason", "x"}}).status, http::status::bad_request);
}

TEST_F(admin_api, kick_closes_the_users_connections_or_says_they_are_not_online) {
    test_client& alice = world_.login("alice", 0);
    admin_reply missing = post("/admin/kick", {{"user", "nobody"}});
    EXPECT_EQ(missing.status, http::status::not_found);
    EXPECT_EQ(error_of(missing), "no user 'nobody' is online");

    admin_reply kicked = post("/admin/kick", {{"user", "alice"}, {"reason", "spam"}});
    EXPECT_EQ(kicked.status, http::status::ok);
    EXPECT_EQ(body_of(kicked), json::parse(R"({"user":"alice","connections":1})"));
    world_.run();
    ASSERT_EQ(alice.output.closes.size(), 1u);
    EXPECT_EQ(alice.output.closes[0].code, protocol::close_code::kicked);
    EXPECT_EQ(alice.output.closes[0].reason, "spam");
}

TEST_F(admin_api, announce_reaches_everyone_or_one_room) {
    test_client& in = world_.login("in", 0);
    test_client& out = world_.login("out", 1);
    world_.join(in, "r");
    world_.clear_all();

    admin_reply to_room = post("/admin/announce", {{"text", "hello r"}, {"room", "r"}});
    EXPECT_EQ(to_room.status, http::status::ok);
    EXPECT_EQ(body_of(to_room), json::parse(R"({"room":"r"})"));
    world_.run();
    EXPECT_EQ(in.received("system").size(), 1u);
    EXPECT_TRUE(out.take().empty());

    admin_reply everyone = post("/admin/announce", {{"text", "maintenance at noon"}});
    EXPECT_EQ(everyone.status, http::status::ok);
    EXPECT_EQ(body_of(everyone), json::parse(R"({"room":null})"));
    world_.run();
    auto lines = out.received("system");
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0].value("text", ""), "maintenance at noon");

    admin_reply no_room = post("/admin/announce", {{"text", "x"}, {"room", "nope"}});
    EXPECT_EQ(no_room.status, http::status::not_found);
    EXPECT_EQ(error_of(no_room), "no room 'nope' exists");
}

TEST_F(admin_api, an_announcement_over_the_text_limit_is_400) {
    std::string text(settings_.max_text_bytes + 1, 'x');
    admin_reply reply = post("/admin/announce", {{"text", text}});
    EXPECT_EQ(reply.status, http::status::bad_request);
    EXPECT_EQ(error_of(reply), "text is " + std::to_string(text.size()) + " bytes; the limit is " +
                                   std::to_string(settings_.max_text_bytes));
    EXPECT_EQ(post("/admin/announce", {{"text", std::string(settings_.max_text_bytes, 'x')}}).status,
              http::status::ok);
}

TEST_F(admin_api, close_room_removes_its_members_or_says_there_is_no_such_room) {
    test_client& a = world_.login("a", 0);
    test_client& b = world_.login("b", 1);
    world_.join(a, "r");
    world_.join(b, "r");
    world_.clear_all();
    admin_reply closed = post("/admin/close_room", {{"room", "r"}, {"reason", "off topic"}});
    EXPECT_EQ(closed.status, http::status::ok);
    EXPECT_EQ(body_of(closed), json::parse(R"({"room":"r","members":2})"));
    world_.run();
    EXPECT_EQ(a.received("left").size(), 1u);
    EXPECT_EQ(b.received("left").size(), 1u);

    admin_reply again = post("/admin/close_room", {{"room", "r"}});
    EXPECT_EQ(again.status, http::status::not_found);
    EXPECT_EQ(error_of(again), "no room 'r' exists");
}

}  // namespace
}  // namespace parley::server::tests
