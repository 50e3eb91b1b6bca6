// The admin API against the real daemon: bearer token, listing users and rooms, kicking a user
// (close 4000), announcements to all and to a room, closing a room, moderation with its audit
// lines; 401, 403, 404, 405 and 400.
#include "http_response.hpp"
#include "test_support.hpp"
#include "tests/token_minter.hpp"

#include <thread>

namespace parley::integration {
namespace {

const std::string admin_token = "admin-test-token-0123456789";

class AdminTest : public parley_test {
protected:
    std::string daemon_config() const override { return "[admin]\ntoken = \"" + admin_token + "\"\n"; }

    http_response request(const std::string& method, const std::string& path, const std::string& body = {},
                          const std::string& token = admin_token) {
        std::string raw = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
        if (!token.empty()) {
            raw += "Authorization: Bearer " + token + "\r\n";
        }
        if (!body.empty()) {
            raw += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
        }
        raw += "\r\n" + body;
        ws_client client(port());
        return parse_http_response(client.raw_http(raw));
    }

    json ok_json(const std::string& method, const std::string& path, const json& body = nullptr) {
        http_response r = request(method, path, body.is_null() ? std::string() : body.dump());
        EXPECT_EQ(r.status, 200) << method << " " << path << ": " << r.body;
        EXPECT_EQ(r.header("content-type").value_or(""), "application/json");
        return json::parse(r.body, nullptr, false);
    }
};

TEST_F(AdminTest, WithoutTheTokenEveryEndpointIs401) {
    for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
             {"GET", "/admin/users"}, {"GET", "/admin/rooms"}, {"POST", "/admin/kick"},
             {"POST", "/admin/announce"}, {"POST", "/admin/close_room"}, {"GET", "/admin/unknown"}}) {
        for (const std::string& token : {std::string(), std::string("wrong-token-0123456789abc"),
                                         admin_token + "x", admin_token.substr(0, admin_token.size() - 1)}) {
            http_response r = request(method, path, "{}", token);
            EXPECT_EQ(r.status, 401) << method << " " << path << " with '" << token << "'";
            EXPECT_EQ(r.header("www-authenticate").value_or(""), "Bearer realm=\"parley admin\"");
        }
    }
}

// The admin page (server/web/admin/) under /admin/ needs no token (it holds no secret); the API
// beside it still does.
TEST_F(AdminTest, ThePageIsServedWithoutTheTokenAndTheApiStillWantsIt) {
    http_response page = request("GET", "/admin/", {}, "");
    ASSERT_EQ(page.status, 200) << page.body;
    EXPECT_EQ(page.header("content-type").value_or(""), "text/html; charset=utf-8");
    EXPECT_NE(page.body.find("/admin/admin.js"), std::string::npos);
    EXPECT_NE(page.header("content-security-policy").value_or("").find("script-src 'self'"), std::string::npos);
    http_response script = request("GET", "/admin/admin.js", {}, "");
    EXPECT_EQ(script.status, 200);
    EXPECT_EQ(script.header("content-type").value_or(""), "text/javascript; charset=utf-8");
    http_response bare = request("GET", "/admin", {}, "");
    EXPECT_EQ(bare.status, 308);
    EXPECT_EQ(bare.header("location").value_or(""), "/admin/");
    EXPECT_EQ(request("GET", "/admin/users", {}, "").status, 401);
    EXPECT_EQ(request("POST", "/admin/", "{}", "").status, 401);
    EXPECT_EQ(request("GET", "/admin/missing.js", {}, "").status, 401);
}

TEST_F(AdminTest, ListsUsersAndRooms) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "lobby");
    join_room(bob, "lobby");
    join_room(bob, "dev");
    EXPECT_EQ(ok_json("GET", "/admin/users"),
              json::parse(R"({"users":[{"name":"alice","connections":1},{"name":"bob","connections":1}]})"));
    EXPECT_EQ(ok_json("GET", "/admin/rooms"),
              json::parse(R"({"rooms":[{"name":"dev","members":1},{"name":"lobby","members":2}]})"));
}

TEST_F(AdminTest, KickClosesTheUsersConnectionWith4000AndFreesTheName) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "r");
    join_room(bob, "r");
    wait_type(alice, "presence");
    EXPECT_EQ(ok_json("POST", "/admin/kick", {{"user", "bob"}, {"reason", "spam"}}),
              json({{"user", "bob"}, {"connections", 1}}));
    EXPECT_EQ(bob.expect_close(), 4000);
    const json leave = wait_type(alice, "presence");
    EXPECT_EQ(leave.value("event", ""), "leave");
    // bob's worker sends the leave before it gives up his name, and alice is served by another
    // worker: the listing may still show him for a moment after the leave arrives.
    json users;
    for (int attempt = 0; attempt < 100; ++attempt) {
        users = call(alice, {{"type", "users"}, {"id", "u"}})["users"];
        if (users == json({"alice"})) {
            break;
        }
        std::this_thread::sleep_for(milliseconds(20));
    }
    EXPECT_EQ(users, json({"alice"})) << "bob is gone and alice is untouched";
    ws_client bob_again = connect();
    EXPECT_EQ(login_retrying(bob_again, "bob").value("type", ""), "welcome") << "the name is free again";
    http_response missing = request("POST", "/admin/kick", R"({"user":"nobody"})");
    EXPECT_EQ(missing.status, 404) << missing.body;
}

TEST_F(AdminTest, AnnouncesToEveryoneOrToOneRoom) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "r");
    EXPECT_EQ(ok_json("POST", "/admin/announce", {{"text", "restart at noon"}}), json({{"room", nullptr}}));
    EXPECT_EQ(wait_type(alice, "system").value("text", ""), "restart at noon");
    EXPECT_EQ(wait_type(bob, "system").value("text", ""), "restart at noon");

    EXPECT_EQ(ok_json("POST", "/admin/announce", {{"text", "r only"}, {"room", "r"}}), json({{"room", "r"}}));
    EXPECT_EQ(wait_type(alice, "system").value("text", ""), "r only");
    // bob is in no room: the next thing he gets is the reply to his own request.
    EXPECT_EQ(call(bob, {{"type", "users"}, {"id", "u"}}).value("type", ""), "users");

    EXPECT_EQ(request("POST", "/admin/announce", R"({"text":"x","room":"nope"})").status, 404);
}

TEST_F(AdminTest, ClosingARoomRemovesItsMembers) {
    ws_client alice = login("alice");
    join_room(alice, "r");
    EXPECT_EQ(ok_json("POST", "/admin/close_room", {{"room", "r"}, {"reason", "cleanup"}}),
              json({{"room", "r"}, {"members", 1}}));
    EXPECT_EQ(wait_type(alice, "left").value("room", ""), "r");
    EXPECT_EQ(wait_type(alice, "system").value("text", ""), "the room 'r' was closed by an administrator: cleanup");
    EXPECT_EQ(ok_json("GET", "/admin/rooms"), json::parse(R"({"rooms":[]})"));
    EXPECT_EQ(request("POST", "/admin/close_room", R"({"room":"r"})").status, 404);
}

TEST_F(AdminTest, BadRequestsAreRefusedAndTheDaemonKeepsServing) {
    http_response wrong_method = request("GET", "/admin/kick");
    EXPECT_EQ(wrong_method.status, 405);
    EXPECT_EQ(wrong_method.header("allow").value_or(""), "POST");
    EXPECT_EQ(request("POST", "/admin/users").status, 405);
    EXPECT_EQ(request("GET", "/admin/nothing").status, 404);
    for (const std::string body : {"", "not json", "[1,2]", R"({"user":5})", R"({"user":""})", R"({})"}) {
        http_response r = request("POST", "/admin/kick", body);
        EXPECT_EQ(r.status, 400) << "body: " << body;
        EXPECT_TRUE(json::parse(r.body, nullptr, false).contains("error")) << r.body;
    }
    EXPECT_EQ(request("POST", "/admin/announce", json({{"text", std::string(5000, 'x')}}).dump()).status, 400)
        << "longer than max_text_bytes";
    EXPECT_EQ(request("POST", "/admin/kick", std::string(70000, ' ')).status, 413);
    ws_client alice = login("alice");
    EXPECT_EQ(call(alice, {{"type", "users"}, {"id", 1}})["users"], json({"alice"}));
}

class AdminOffTest : public parley_test {};

TEST_F(AdminOffTest, WithoutAnAdminTokenTheApiDoesNotExist) {
    ws_client client(port());
    http_response r = parse_http_response(client.raw_http(
        "GET /admin/users HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \r\nConnection: close\r\n\r\n"));
    EXPECT_EQ(r.status, 404);
    ws_client again(port());
    http_response page = parse_http_response(
        again.raw_http("GET /admin/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
    EXPECT_EQ(page.status, 404) << "the admin page is off with the API";
}

// The admin API's moderation, in token mode (roles, bans and mutes are about identities).
class AdminModerationTest : public AdminTest {
protected:
    std::string daemon_config() const override {
        return AdminTest::daemon_config() + "[auth]\nmode = \"token\"\ntoken_secret = \"" + test_tokens::token_secret +
               "\"\n";
    }
    ws_client holder_of(const std::string& user) {
        ws_client client = connect();
        const json reply =
            call(client, {{"type", "login"}, {"user", user}, {"token", test_tokens::token_for(user)}, {"id", "in"}});
        EXPECT_EQ(reply.value("type", ""), "welcome") << reply;
        return client;
    }
    // The daemon's audit lines so far.
    std::vector<std::string> audit_lines() const {
        std::vector<std::string> out;
        for (const std::string& line : daemon_->output()) {
            if (line.find("admin audit: ") != std::string::npos) {
                out.push_back(line);
            }
        }
        return out;
    }
};

TEST_F(AdminModerationTest, ABanMuteRoleAndTopicFromTheApiTakeEffectAndAreAudited) {
    ws_client mike = holder_of("mike");
    ws_client olivia = holder_of("olivia");
    join_room(olivia, "den");
    join_room(mike, "den");
    ok_json("POST", "/admin/moderate", {{"room", "den"}, {"action", "set_topic"}, {"text", "Be kind"}});
    ok_json("POST", "/admin/moderate",
            {{"room", "den"}, {"action", "ban"}, {"user", "mike"}, {"reason", "spam"}, {"duration_s", 600}});
    const json event = read_until(olivia, [](const json& m) {
                           return m.value("type", "") == "moderation" && m.value("action", "") == "ban";
                       }).back();
    EXPECT_EQ(event.value("by", ""), "@admin");
    EXPECT_EQ(event.value("user", ""), "mike");
    EXPECT_TRUE(event.contains("until"));
    wait_type(mike, "left");
    expect_error_reply(mike, {{"type", "join"}, {"room", "den"}, {"id", "j"}}, "banned");
    ok_json("POST", "/admin/moderate", {{"room", "den"}, {"action", "set_role"}, {"user", "mike"}, {"role", "moderator"}});
    ok_json("POST", "/admin/moderate", {{"room", "quiet"}, {"action", "mute"}, {"user", "olivia"}});
    EXPECT_EQ(join_room(olivia, "quiet").value("mutes", json::array()).size(), 1u) << "a mute before anyone joined";
    expect_error_reply(olivia, {{"type", "say"}, {"room", "quiet"}, {"text", "hi"}, {"id", "s"}}, "muted");

    // The audit line reaches the test through the daemon's output pipe, which may lag the reply.
    ASSERT_TRUE(daemon_->wait_for_line(R"(admin audit: {"action":"mute")", 0)) << daemon_->tail();
    const std::vector<std::string> lines = audit_lines();
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_NE(lines[1].find(R"("action":"ban")"), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find(R"("user":"mike")"), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find(R"("reason":"spam")"), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find(R"("until":)"), std::string::npos) << lines[1];
    EXPECT_NE(lines[2].find(R"("role":"moderator")"), std::string::npos) << lines[2];
}

TEST_F(AdminModerationTest, TheApiDeletesAnyMessageLeavingATombstone) {
    ws_client olivia = holder_of("olivia");
    join_room(olivia, "den");
    const std::int64_t seq =
        call(olivia, {{"type", "say"}, {"room", "den"}, {"text", "oops, a secret"}, {"id", 1}}).at("seq").get<std::int64_t>();
    ok_json("POST", "/admin/moderate", {{"room", "den"}, {"action", "delete"}, {"seq", seq}});
    const json event = read_until(olivia, is_type("deleted")).back();
    EXPECT_EQ(event.value("target", 0), seq);
    EXPECT_EQ(event.value("by", ""), "@admin");
    const json page = call(olivia, {{"type", "history"}, {"room", "den"}, {"id", "h"}});
    EXPECT_EQ(page.dump().find("oops"), std::string::npos) << page;
    EXPECT_EQ(request("POST", "/admin/moderate", json{{"room", "den"}, {"action", "delete"}, {"seq", seq}}.dump()).status,
              404)
        << "deleted already";
    EXPECT_EQ(request("POST", "/admin/moderate", json{{"room", "nowhere"}, {"action", "delete"}, {"seq", 1}}.dump()).status,
              404);
    ASSERT_TRUE(daemon_->wait_for_line(R"(admin audit: {"action":"delete")", 0)) << daemon_->tail();
    const std::vector<std::string> lines = audit_lines();
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find(R"("seq":)" + std::to_string(seq)), std::string::npos) << lines[0];
}

TEST_F(AdminModerationTest, BadModerationRequestsChangeNothing) {
    ws_client olivia = holder_of("olivia");
    join_room(olivia, "den");
    auto status_of = [this](const json& body) { return request("POST", "/admin/moderate", body.dump()).status; };
    EXPECT_EQ(status_of({{"room", "den"}, {"action", "ban"}, {"user", "mike"}, {"duration_s", 0}}), 400);
    EXPECT_EQ(status_of({{"room", "den"}, {"action", "set_role"}, {"user", "mike"}, {"role", "king"}}), 400);
    EXPECT_EQ(status_of({{"room", "den"}, {"action", "promote"}, {"user", "mike"}}), 400);
    EXPECT_EQ(status_of({{"room", "den"}, {"action", "ban"}, {"user", "no spaces"}}), 400);
    EXPECT_EQ(status_of({{"room", "den"}, {"action", "kick"}, {"user", "nobody"}}), 404);
    EXPECT_EQ(status_of({{"room", "den"}, {"action", "unmute"}, {"user", "olivia"}}), 404);
    EXPECT_EQ(status_of({{"room", "den"}, {"action", "set_role"}, {"user", "olivia"}, {"role", "member"}}), 409)
        << "the creator is the room's only owner";
    EXPECT_TRUE(audit_lines().empty()) << "nothing was done";
    EXPECT_EQ(call(olivia, {{"type", "say"}, {"room", "den"}, {"text", "still here"}, {"id", 1}}).value("type", ""),
              "ack");
}

TEST_F(AdminTest, WithoutTokensTheApiBansNobody) {
    ws_client mike = login("mike");
    join_room(mike, "den");
    EXPECT_EQ(request("POST", "/admin/moderate", json{{"room", "den"}, {"action", "ban"}, {"user", "mike"}}.dump()).status,
              403);
    ok_json("POST", "/admin/moderate", {{"room", "den"}, {"action", "set_topic"}, {"text", "Open to all"}});
    EXPECT_EQ(join_room(mike, "den").value("topic", ""), "Open to all") << "a topic is about the room, not a name";
}

}  // namespace
}  // namespace parley::integration
