// Token mode against the real daemon: logins prove their names with signed tokens, a user may
// hold several connections that all get the user's dms and presence, private rooms admit only
// their members, and a refused login is closed while everyone else is served.
#include "test_support.hpp"
#include "tests/token_minter.hpp"

namespace parley::integration {
namespace {

using test_tokens::sign_token;
using test_tokens::token_for;
using test_tokens::now_seconds;

class AuthTest : public parley_test {
protected:
    std::string daemon_config() const override {
        return "[auth]\nmode = \"token\"\ntoken_secret = \"" + test_tokens::token_secret +
               "\"\nmax_sessions_per_user = 2\n"
               "[[rooms.permanent]]\nname = \"staff\"\nprivate = true\nmembers = [\"alice\"]\n";
    }

    ws_client token_login(const std::string& user) {
        ws_client client = connect();
        const json reply = call(client, {{"type", "login"}, {"user", user}, {"token", token_for(user)}, {"id", "in"}});
        EXPECT_EQ(reply.value("type", ""), "welcome") << reply;
        return client;
    }

    // The login is answered with unauthorized, then the connection is closed with 1008.
    void expect_refused(const json& login, const std::string& message) {
        ws_client client = connect();
        const json reply = call(client, login);
        EXPECT_EQ(reply.value("type", ""), "error") << reply;
        EXPECT_EQ(reply.value("code", ""), "unauthorized") << reply;
        EXPECT_EQ(reply.value("message", ""), message) << reply;
        EXPECT_EQ(client.expect_close(), 1008);
    }
};

TEST_F(AuthTest, OnlyAValidTokenForTheNameLogsIn) {
    ws_client bystander = token_login("bob");
    join_room(bystander, "lobby");

    expect_refused({{"type", "login"}, {"user", "alice"}, {"id", 1}}, "login needs a token");
    expect_refused({{"type", "login"}, {"user", "alice"}, {"token", token_for("mallory")}, {"id", 2}},
                   "the token is for another user");
    expect_refused({{"type", "login"}, {"user", "alice"}, {"token", sign_token({{"sub", "alice"}, {"exp", now_seconds() - 3600}})}, {"id", 3}},
                   "the token has expired");
    expect_refused({{"type", "login"}, {"user", "alice"},
                    {"token", sign_token({{"sub", "alice"}, {"exp", now_seconds() + 60}},
                                         "a-different-secret-0123456789abcdefgh")},
                    {"id", 4}},
                   "the token was not accepted");
    std::string tampered = token_for("alice");
    tampered[tampered.size() / 2] = tampered[tampered.size() / 2] == 'A' ? 'B' : 'A';
    expect_refused({{"type", "login"}, {"user", "alice"}, {"token", tampered}, {"id", 5}},
                   "the token was not accepted");

    // Everyone else was served all along.
    const json ack = call(bystander, {{"type", "say"}, {"room", "lobby"}, {"text", "still here"}, {"id", "s"}});
    EXPECT_EQ(ack.value("type", ""), "ack") << ack;
    ws_client alice = token_login("alice");
    EXPECT_EQ(call(alice, {{"type", "users"}, {"id", "u"}})["users"], json({"alice", "bob"}));
}

TEST_F(AuthTest, OneUserOnTwoConnectionsGetsDmsOnBothAndLeavesPresenceWithTheLast) {
    ws_client laptop = token_login("alice");
    ws_client phone = token_login("alice");
    {
        ws_client third = connect();
        const json reply =
            call(third, {{"type", "login"}, {"user", "alice"}, {"token", token_for("alice")}, {"id", "3rd"}});
        EXPECT_EQ(reply.value("code", ""), "username_taken") << "max_sessions_per_user is 2: " << reply;
    }
    ws_client bob = token_login("bob");
    join_room(bob, "r");
    join_room(laptop, "r");
    wait_type(bob, "presence");
    json joined = join_room(phone, "r");
    EXPECT_EQ(joined["members"], json({"alice", "bob"}));

    bob.send_json({{"type", "dm"}, {"to", "alice"}, {"text", "to both"}});
    for (ws_client* c : {&laptop, &phone}) {
        const json dm = wait_type(*c, "dm");
        EXPECT_EQ(dm.value("text", ""), "to both");
        EXPECT_EQ(dm.value("from", ""), "bob");
    }

    laptop.close_socket();
    // Still a member through the phone: a say from bob reaches it, and no leave came first.
    bob.send_json({{"type", "say"}, {"room", "r"}, {"text", "ping"}, {"id", "p"}});
    std::vector<json> before_ack = read_until(bob, [](const json& m) { return m.value("type", "") == "ack"; });
    EXPECT_EQ(count_if(before_ack, is_type("presence")), 0u);
    wait_type(phone, "message");

    phone.close_socket();
    const json leave = wait_type(bob, "presence");
    EXPECT_EQ(leave.value("user", ""), "alice");
    EXPECT_EQ(leave.value("event", ""), "leave");
}

TEST_F(AuthTest, APrivateRoomAdmitsItsMembersOnly) {
    ws_client alice = token_login("alice");
    ws_client bob = token_login("bob");
    EXPECT_EQ(join_room(alice, "staff").value("room", ""), "staff");
    const json refused = call(bob, {{"type", "join"}, {"room", "staff"}, {"id", "j"}});
    EXPECT_EQ(refused.value("code", ""), "unauthorized") << refused;
    const json listed = call(bob, {{"type", "rooms"}, {"id", "l"}});
    EXPECT_EQ(listed["rooms"], json::array()) << "a private room is not shown to others";

    // A token naming the room opens it.
    ws_client carol = connect();
    const json welcome = call(carol, {{"type", "login"}, {"user", "carol"},
                                      {"token", sign_token({{"sub", "carol"}, {"exp", now_seconds() + 60},
                                                            {"rooms", {"staff"}}})},
                                      {"id", "in"}});
    ASSERT_EQ(welcome.value("type", ""), "welcome") << welcome;
    EXPECT_EQ(join_room(carol, "staff")["members"], json({"alice", "carol"}));
}

}  // namespace
}  // namespace parley::integration
