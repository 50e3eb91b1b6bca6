// login: first request, name rules, uniqueness, and the name coming free on disconnect.
#include "test_support.hpp"

namespace parley::integration {
namespace {

class LoginTest : public parley_test {};

TEST_F(LoginTest, WelcomeCarriesUserAndRe) {
    ws_client client = connect();
    const json reply = call(client, {{"type", "login"}, {"user", "alice"}, {"id", "l1"}});
    EXPECT_EQ(reply, json({{"type", "welcome"}, {"user", "alice"}, {"re", "l1"}}));
}

TEST_F(LoginTest, WelcomeWithoutIdHasNoRe) {
    ws_client client = connect();
    client.send_json({{"type", "login"}, {"user", "alice"}});
    EXPECT_EQ(expect_type(client, "welcome"), json({{"type", "welcome"}, {"user", "alice"}}));
}

TEST_F(LoginTest, EveryOtherRequestBeforeLoginIsNotLoggedIn) {
    ws_client client = connect();
    expect_error_reply(client, {{"type", "join"}, {"room", "r"}, {"id", 1}}, "not_logged_in");
    expect_error_reply(client, {{"type", "say"}, {"room", "r"}, {"text", "x"}, {"id", 2}}, "not_logged_in");
    expect_error_reply(client, {{"type", "dm"}, {"to", "x"}, {"text", "x"}, {"id", 3}}, "not_logged_in");
    expect_error_reply(client, {{"type", "users"}, {"id", 4}}, "not_logged_in");
    expect_error_reply(client, {{"type", "rooms"}, {"id", 5}}, "not_logged_in");
    expect_error_reply(client, {{"type", "history"}, {"room", "r"}, {"id", 6}}, "not_logged_in");
    expect_error_reply(client, {{"type", "leave"}, {"room", "r"}, {"id", 7}}, "not_logged_in");
    expect_error_reply(client, {{"type", "typing"}, {"room", "r"}, {"id", 8}}, "not_logged_in");
    // The connection is still usable.
    EXPECT_EQ(call(client, {{"type", "login"}, {"user", "late"}, {"id", 9}}).value("type", ""), "welcome");
}

TEST_F(LoginTest, SecondLoginIsAlreadyLoggedIn) {
    ws_client client = login("alice");
    expect_error_reply(client, {{"type", "login"}, {"user", "alice"}, {"id", 1}}, "already_logged_in");
    expect_error_reply(client, {{"type", "login"}, {"user", "other"}, {"id", 2}}, "already_logged_in");
    const json users = call(client, {{"type", "users"}, {"id", 3}});
    EXPECT_EQ(users["users"], json({"alice"}));
}

TEST_F(LoginTest, InvalidNamesAreRefused) {
    ws_client client = connect();
    int id = 0;
    for (const std::string& name : {std::string(), std::string(33, 'a'), std::string("has space"),
                                   std::string("a/b"), std::string("caf\xc3\xa9"), std::string("a:b"),
                                   std::string("tab\t")}) {
        expect_error_reply(client, {{"type", "login"}, {"user", name}, {"id", ++id}}, "invalid_name");
    }
    const json reply = call(client, {{"type", "login"}, {"user", "fine"}, {"id", ++id}});
    EXPECT_EQ(reply.value("type", ""), "welcome") << reply;
}

TEST_F(LoginTest, NamesUseTheWholeAlphabetUpToThirtyTwoChars) {
    for (const std::string& name : {std::string("A-z_0.9"), std::string(32, 'x'), std::string("."),
                                   std::string("-")}) {
        ws_client client = connect();
        const json reply = call(client, {{"type", "login"}, {"user", name}, {"id", 1}});
        EXPECT_EQ(reply, json({{"type", "welcome"}, {"user", name}, {"re", 1}}));
    }
}

TEST_F(LoginTest, MissingOrWrongTypedUserIsBadRequest) {
    ws_client client = connect();
    expect_error_reply(client, {{"type", "login"}, {"id", 1}}, "bad_request");
    expect_error_reply(client, {{"type", "login"}, {"user", 42}, {"id", 2}}, "bad_request");
    expect_error_reply(client, {{"type", "login"}, {"user", json::array({"a"})}, {"id", 3}}, "bad_request");
}

TEST_F(LoginTest, TakenNameIsRefusedAndConnectionStaysUsable) {
    ws_client alice = login("alice");
    ws_client second = connect();
    expect_error_reply(second, {{"type", "login"}, {"user", "alice"}, {"id", 1}}, "username_taken");
    const json reply = call(second, {{"type", "login"}, {"user", "alice2"}, {"id", 2}});
    EXPECT_EQ(reply.value("type", ""), "welcome") << reply;
}

TEST_F(LoginTest, NameIsFreeSoonAfterAbruptDisconnect) {
    ws_client first = login("bob");
    first.close_socket();
    ws_client second = connect();
    const json reply = login_retrying(second, "bob");
    EXPECT_EQ(reply.value("type", ""), "welcome") << "name still taken 2 s after disconnect: " << reply;
}

TEST_F(LoginTest, NameIsFreeSoonAfterCloseHandshake) {
    ws_client first = login("bob");
    first.send_close(1000);
    EXPECT_EQ(first.expect_close(), 1000);
    ws_client second = connect();
    const json reply = login_retrying(second, "bob");
    EXPECT_EQ(reply.value("type", ""), "welcome") << "name still taken 2 s after close: " << reply;
}

TEST_F(LoginTest, UsersAreSorted) {
    ws_client carol = login("carol");
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    const json reply = call(bob, {{"type", "users"}, {"id", "u"}});
    EXPECT_EQ(reply, json({{"type", "users"}, {"users", {"alice", "bob", "carol"}}, {"re", "u"}}));
}

TEST_F(LoginTest, UsersForgetsDisconnectedUser) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    bob.close_socket();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    json users;
    for (int id = 1;; ++id) {
        users = call(alice, {{"type", "users"}, {"id", id}})["users"];
        if (users == json({"alice"}) || std::chrono::steady_clock::now() >= deadline) {
            break;
        }
        std::this_thread::sleep_for(milliseconds(20));
    }
    EXPECT_EQ(users, json({"alice"}));
}

}  // namespace
}  // namespace parley::integration
