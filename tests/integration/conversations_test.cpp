// State that outlives a connection, against the real daemon: stored direct conversations,
// read markers shared by a user's sessions, `welcome`'s conversations, and, without tokens,
// nothing of a name reaching its next holder (docs/protocol.md, docs/security.md).
#include "temp_dir.hpp"
#include "test_support.hpp"
#include "tests/token_minter.hpp"

#include <algorithm>

namespace parley::integration {
namespace {

using test_tokens::token_for;

std::string token_config(int welcome_conversations = 200) {
    return "[auth]\nmode = \"token\"\ntoken_secret = \"" + test_tokens::token_secret +
           "\"\nmax_sessions_per_user = 3\n[history]\nwelcome_conversations = " +
           std::to_string(welcome_conversations) + "\n";
}

class ConversationsTest : public parley_test {
protected:
    std::vector<std::string> daemon_args() const override {
        auto args = relaxed_rate_args();
        // A file of the test's own, so a restart finds what was stored.
        args.insert(args.end(), {"--history-path", dir_.file("history.db"), "--set", "history.flush_interval_ms=20"});
        return args;
    }
    std::string daemon_config() const override { return token_config(); }

    // Logs user in with a token; returns the client and the welcome.
    std::pair<ws_client, json> token_login(const std::string& user) {
        ws_client client = connect();
        json reply = call(client, {{"type", "login"}, {"user", user}, {"token", token_for(user)}, {"id", "in"}});
        if (reply.value("type", "") != "welcome") {
            throw std::runtime_error("login got " + reply.dump());
        }
        return {std::move(client), std::move(reply)};
    }

    // Sends a dm with an id and returns its ack.
    static json dm(ws_client& from, const std::string& to, const std::string& text, int id) {
        json ack = call(from, {{"type", "dm"}, {"to", to}, {"text", text}, {"id", id}});
        if (ack.value("type", "") != "ack") {
            throw std::runtime_error("dm got " + ack.dump());
        }
        return ack;
    }

    // The texts of a dm_history reply's messages, oldest first.
    static std::vector<std::string> texts(const json& reply) {
        std::vector<std::string> out;
        for (const json& m : reply.at("messages")) {
            out.push_back(m.at("text").get<std::string>());
        }
        return out;
    }

    // The entry of welcome's conversations for `with` or `room`, or null.
    static json entry(const json& welcome, const std::string& field, const std::string& name) {
        for (const json& c : welcome.at("conversations")) {
            if (c.value(field, "") == name) {
                return c;
            }
        }
        return nullptr;
    }

    temp_dir dir_;
};

TEST_F(ConversationsTest, DmToSomeoneOfflineIsStoredAckedAndFoundAtTheirLogin) {
    auto [alice, alice_welcome] = token_login("alice");
    EXPECT_TRUE(alice_welcome.at("conversations").empty()) << alice_welcome;
    alice.send_json({{"type", "dm"}, {"to", "bob"}, {"text", "are you there?"}, {"id", 1}});
    const std::vector<json> replies = read_messages(alice, 2);
    EXPECT_EQ(replies[0], json({{"type", "dm"}, {"from", "alice"}, {"to", "bob"}, {"text", "are you there?"},
                                {"seq", 1}, {"ts", replies[0]["ts"]}}));
    EXPECT_EQ(replies[1], json({{"type", "ack"}, {"re", 1}, {"with", "bob"}, {"seq", 1}}));
    EXPECT_EQ(dm(alice, "bob", "call me", 2).value("seq", 0), 2);

    auto [bob, welcome] = token_login("bob");
    EXPECT_EQ(entry(welcome, "with", "alice"), json({{"with", "alice"}, {"seq", 2}, {"read", 0}, {"unread", 2}}))
        << welcome;
    json page = call(bob, {{"type", "dm_history"}, {"with", "alice"}, {"id", "h"}});
    ASSERT_EQ(page.value("type", ""), "dm_history") << page;
    EXPECT_EQ(page.value("with", ""), "alice");
    EXPECT_EQ(page.value("epoch", std::int64_t{0}), join_room(bob, "e").value("epoch", std::int64_t{-1}))
        << "the conversation's epoch is the store's";
    EXPECT_EQ(texts(page), (std::vector<std::string>{"are you there?", "call me"}));
    EXPECT_EQ(page["messages"][1], json({{"type", "dm"}, {"from", "alice"}, {"to", "bob"}, {"text", "call me"},
                                         {"seq", 2}, {"ts", page["messages"][1]["ts"]}}));
    // The sender's own messages count as read on the sender's side.
    auto [alice2, again] = token_login("alice");
    EXPECT_EQ(entry(again, "with", "bob"), json({{"with", "bob"}, {"seq", 2}, {"read", 2}, {"unread", 0}})) << again;
}

TEST_F(ConversationsTest, DmHistoryPagesLikeRoomHistory) {
    auto [alice, w1] = token_login("alice");
    auto [bob, w2] = token_login("bob");
    for (int i = 1; i <= 6; ++i) {
        dm(i % 2 ? alice : bob, i % 2 ? "bob" : "alice", "m" + std::to_string(i), i);
    }
    auto page = [&](json request) {
        request["type"] = "dm_history";
        request["with"] = "bob";
        request["id"] = "p";
        json reply = call(alice, request);
        if (reply.value("type", "") != "dm_history") {
            throw std::runtime_error("dm_history got " + reply.dump());
        }
        return texts(reply);
    };
    EXPECT_EQ(page({{"limit", 2}}), (std::vector<std::string>{"m5", "m6"}));
    EXPECT_EQ(page({{"before", 5}, {"limit", 2}}), (std::vector<std::string>{"m3", "m4"}));
    EXPECT_EQ(page({{"after", 4}}), (std::vector<std::string>{"m5", "m6"}));
    EXPECT_EQ(page({{"after", 0}, {"limit", 3}}), (std::vector<std::string>{"m1", "m2", "m3"}));
}

TEST_F(ConversationsTest, NobodyReadsAConversationTheyAreNotPartOf) {
    auto [alice, w1] = token_login("alice");
    dm(alice, "bob", "between us", 1);
    auto [carol, welcome] = token_login("carol");
    EXPECT_TRUE(welcome.at("conversations").empty()) << welcome;
    for (const std::string with : {"alice", "bob"}) {
        json reply = call(carol, {{"type", "dm_history"}, {"with", with}, {"id", "x"}});
        EXPECT_EQ(reply, json({{"type", "dm_history"}, {"with", with}, {"messages", json::array()}, {"re", "x"}}));
    }
    // Nor can she mark it read.
    expect_error_reply(carol, {{"type", "read"}, {"with", "bob"}, {"seq", 1}, {"id", "r"}}, "user_not_found");
}

TEST_F(ConversationsTest, ReadMarkersMoveForwardClampAndReachTheUsersOtherSessions) {
    auto [laptop, w1] = token_login("alice");
    auto [phone, w2] = token_login("alice");
    auto [bob, w3] = token_login("bob");
    for (ws_client* c : {&laptop, &phone, &bob}) {
        join_room(*c, "lobby");
    }
    for (int i = 1; i <= 3; ++i) {
        call(bob, {{"type", "say"}, {"room", "lobby"}, {"text", "b" + std::to_string(i)}, {"id", i}});
    }
    EXPECT_EQ(call(laptop, {{"type", "read"}, {"room", "lobby"}, {"seq", 2}, {"id", 1}}),
              json({{"type", "read"}, {"room", "lobby"}, {"seq", 2}, {"re", 1}}));
    EXPECT_EQ(wait_type(phone, "read"), json({{"type", "read"}, {"room", "lobby"}, {"seq", 2}}));
    // Backwards changes nothing, and tells nobody.
    EXPECT_EQ(call(laptop, {{"type", "read"}, {"room", "lobby"}, {"seq", 1}, {"id", 2}}).value("seq", 0), 2);
    // Past the end is the end.
    EXPECT_EQ(call(laptop, {{"type", "read"}, {"room", "lobby"}, {"seq", 999}, {"id", 3}}).value("seq", 0), 3);
    EXPECT_EQ(wait_type(phone, "read"), json({{"type", "read"}, {"room", "lobby"}, {"seq", 3}}))
        << "the phone heard of the backwards read, or missed the clamped one";
    // The phone marks a conversation; the laptop hears of it.
    dm(bob, "alice", "psst", 9);
    EXPECT_EQ(call(phone, {{"type", "read"}, {"with", "bob"}, {"seq", 1}, {"id", 4}}).value("seq", 0), 1);
    const json heard = read_until(laptop, is_type("read")).back();
    EXPECT_EQ(heard, json({{"type", "read"}, {"with", "bob"}, {"seq", 1}}));

    auto [tablet, welcome] = token_login("alice");
    EXPECT_EQ(entry(welcome, "room", "lobby"), json({{"room", "lobby"}, {"seq", 3}, {"read", 3}, {"unread", 0}}));
    EXPECT_EQ(entry(welcome, "with", "bob"), json({{"with", "bob"}, {"seq", 1}, {"read", 1}, {"unread", 0}}));
}

TEST_F(ConversationsTest, WelcomeListsNewestActivityFirstAndSurvivesARestart) {
    {
        auto [alice, w] = token_login("alice");
        auto [bob, w2] = token_login("bob");
        join_room(alice, "older");
        call(alice, {{"type", "say"}, {"room", "older"}, {"text", "x"}, {"id", 1}});
        call(alice, {{"type", "read"}, {"room", "older"}, {"seq", 1}, {"id", 2}});
        std::this_thread::sleep_for(milliseconds(5));  // distinct timestamps
        dm(bob, "alice", "one", 3);
        dm(bob, "alice", "two", 4);
        std::this_thread::sleep_for(milliseconds(5));
        dm(alice, "carol", "newest", 5);
    }
    restart_daemon();
    auto [alice, welcome] = token_login("alice");
    const json expected = json::array({
        {{"with", "carol"}, {"seq", 1}, {"read", 1}, {"unread", 0}},
        {{"with", "bob"}, {"seq", 2}, {"read", 0}, {"unread", 2}},
        {{"room", "older"}, {"seq", 1}, {"read", 1}, {"unread", 0}},
    });
    EXPECT_EQ(welcome.at("conversations"), expected) << welcome;
    json page = call(alice, {{"type", "dm_history"}, {"with", "bob"}, {"id", "h"}});
    EXPECT_EQ(texts(page), (std::vector<std::string>{"one", "two"}));
    // The conversation's seq continues after the restart.
    EXPECT_EQ(dm(alice, "bob", "three", 6).value("seq", 0), 3);
}

TEST_F(ConversationsTest, BadRequestsGetClearErrorsAndChangeNothing) {
    auto [alice, w] = token_login("alice");
    auto [bob, w2] = token_login("bob");
    join_room(alice, "lobby");
    dm(bob, "alice", "hi", 1);
    expect_error_reply(alice, {{"type", "read"}, {"room", "nowhere"}, {"seq", 1}, {"id", 1}}, "not_in_room");
    expect_error_reply(alice, {{"type", "read"}, {"with", "nobody"}, {"seq", 1}, {"id", 2}}, "user_not_found");
    expect_error_reply(alice, {{"type", "read"}, {"with", "bad name!"}, {"seq", 1}, {"id", 3}}, "invalid_name");
    expect_error_reply(alice, {{"type", "read"}, {"with", "bob"}, {"seq", "1"}, {"id", 4}}, "bad_request");
    expect_error_reply(alice, {{"type", "read"}, {"with", "bob"}, {"seq", -1}, {"id", 5}}, "bad_request");
    expect_error_reply(alice, {{"type", "read"}, {"with", "bob"}, {"id", 6}}, "bad_request");
    expect_error_reply(alice, {{"type", "read"}, {"room", "lobby"}, {"with", "bob"}, {"seq", 1}, {"id", 7}},
                       "bad_request");
    expect_error_reply(alice, {{"type", "read"}, {"seq", 1}, {"id", 8}}, "bad_request");
    expect_error_reply(alice, {{"type", "dm_history"}, {"id", 9}}, "bad_request");
    expect_error_reply(alice, {{"type", "dm_history"}, {"with", "bob"}, {"limit", 0}, {"id", 10}}, "bad_request");
    expect_error_reply(alice, {{"type", "dm_history"}, {"with", "bob"}, {"limit", 501}, {"id", 11}}, "bad_request");
    expect_error_reply(alice, {{"type", "dm_history"}, {"with", "bob"}, {"before", 2}, {"after", 1}, {"id", 12}},
                       "bad_request");
    expect_error_reply(alice, {{"type", "dm_history"}, {"with", "x y"}, {"id", 13}}, "invalid_name");
    // None of it moved a marker: the conversation is still unread.
    auto [again, welcome] = token_login("alice");
    EXPECT_EQ(entry(welcome, "with", "bob"), json({{"with", "bob"}, {"seq", 1}, {"read", 0}, {"unread", 1}}));
    EXPECT_TRUE(entry(welcome, "room", "lobby").is_null()) << welcome;
}

class FewConversationsTest : public ConversationsTest {
protected:
    std::string daemon_config() const override { return token_config(2); }
};

TEST_F(FewConversationsTest, WelcomeListsAtMostTheConfiguredNumber) {
    auto [alice, w] = token_login("alice");
    for (const std::string peer : {"p1", "p2", "p3"}) {
        dm(alice, peer, "hello " + peer, 1);
        std::this_thread::sleep_for(milliseconds(3));
    }
    auto [again, welcome] = token_login("alice");
    ASSERT_EQ(welcome.at("conversations").size(), 2u) << welcome;
    EXPECT_EQ(welcome["conversations"][0].value("with", ""), "p3");
    EXPECT_EQ(welcome["conversations"][1].value("with", ""), "p2");
}

// Without tokens a name is whoever holds it now: nothing of its last holder reaches the next.
class NoIdentityTest : public parley_test {};

TEST_F(NoIdentityTest, TheNextHolderOfANameSeesNothingOfTheFirst) {
    {
        ws_client first = login("alice");
        ws_client bob = login("bob");
        join_room(first, "lobby");
        join_room(bob, "lobby");
        call(bob, {{"type", "say"}, {"room", "lobby"}, {"text", "one"}, {"id", 1}});
        call(bob, {{"type", "say"}, {"room", "lobby"}, {"text", "two"}, {"id", 2}});
        EXPECT_EQ(call(first, {{"type", "read"}, {"room", "lobby"}, {"seq", 2}, {"id", 3}}).value("seq", 0), 2);
        // A dm is live only: it carries no seq, is acked without one, and has no history.
        json ack = call(bob, {{"type", "dm"}, {"to", "alice"}, {"text", "secret"}, {"id", 4}});
        EXPECT_EQ(ack, json({{"type", "ack"}, {"re", 4}}));
        const json got = wait_type(first, "dm");
        EXPECT_FALSE(got.contains("seq")) << got;
        expect_error_reply(first, {{"type", "read"}, {"with", "bob"}, {"seq", 1}, {"id", 5}}, "user_not_found");
        first.close_socket();
    }
    ws_client next = connect();
    const json welcome = login_retrying(next, "alice");
    ASSERT_EQ(welcome.value("type", ""), "welcome") << welcome;
    EXPECT_FALSE(welcome.contains("conversations")) << welcome;
    EXPECT_EQ(call(next, {{"type", "dm_history"}, {"with", "bob"}, {"id", 1}}),
              json({{"type", "dm_history"}, {"with", "bob"}, {"messages", json::array()}, {"re", 1}}));
    join_room(next, "lobby");
    // The first holder's marker (2) is not the next one's.
    EXPECT_EQ(call(next, {{"type", "read"}, {"room", "lobby"}, {"seq", 0}, {"id", 2}}).value("seq", -1), 0);
    // And a dm to someone offline is not kept for them.
    expect_error_reply(next, {{"type", "dm"}, {"to", "carol"}, {"text", "later"}, {"id", 3}}, "user_not_found");
}

}  // namespace
}  // namespace parley::integration
