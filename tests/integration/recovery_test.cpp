// join with after/epoch: catching up on missed messages after a leave, disconnect or restart.
#include "test_support.hpp"

namespace parley::integration {
namespace {

class RecoveryTest : public parley_test {
protected:
    static void say(ws_client& client, const std::string& text) {
        client.send_json({{"type", "say"}, {"room", "r"}, {"text", text}});
    }

    static std::vector<std::string> texts(const json& messages) {
        std::vector<std::string> out;
        for (const json& m : messages) {
            out.push_back(m.value("text", ""));
        }
        return out;
    }
};

TEST_F(RecoveryTest, RejoinAfterLeaveRecoversExactlyTheMissedMessages) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "r");
    const json first = join_room(bob, "r");
    say(alice, "seen 1");
    say(alice, "seen 2");
    const json last_seen = read_until(bob, is_chat("seen 2")).back();
    call(bob, {{"type", "leave"}, {"room", "r"}, {"id", "leave"}});

    for (const char* text : {"missed 1", "missed 2", "missed 3"}) {
        say(alice, text);
    }
    read_until(alice, is_chat("missed 3"));

    const json joined = join_room(bob, "r", {{"after", last_seen["seq"]}, {"epoch", first["epoch"]}});
    EXPECT_EQ(joined["recovered"], true) << joined;
    EXPECT_EQ(joined["epoch"], first["epoch"]);
    EXPECT_EQ(texts(joined["history"]), (std::vector<std::string>{"missed 1", "missed 2", "missed 3"}));
    EXPECT_EQ(joined["history"][0]["seq"], last_seen["seq"].get<int>() + 1);
}

TEST_F(RecoveryTest, ReconnectRecoversTheMessagesMissedWhileAway) {
    ws_client alice = login("alice");
    json first;
    json last_seen;
    {
        ws_client bob = login("bob");
        join_room(alice, "r");
        first = join_room(bob, "r");
        say(alice, "before");
        last_seen = read_until(bob, is_chat("before")).back();
    }  // bob's connection drops
    say(alice, "while away");
    read_until(alice, is_chat("while away"));

    ws_client bob = connect();
    ASSERT_EQ(login_retrying(bob, "bob").value("type", ""), "welcome");
    const json joined = join_room(bob, "r", {{"after", last_seen["seq"]}, {"epoch", first["epoch"]}});
    EXPECT_EQ(joined["recovered"], true) << joined;
    EXPECT_EQ(texts(joined["history"]), std::vector<std::string>{"while away"});
}

TEST_F(RecoveryTest, NothingMissedIsAnEmptyRecoveredHistory) {
    ws_client alice = login("alice");
    const json first = join_room(alice, "r");
    say(alice, "only");
    const json message = read_until(alice, is_chat("only")).back();
    const json joined = join_room(alice, "r", {{"after", message["seq"]}, {"epoch", first["epoch"]}});
    EXPECT_EQ(joined["recovered"], true) << joined;
    EXPECT_EQ(joined["history"], json::array());
}

TEST_F(RecoveryTest, AfterZeroRecoversEverything) {
    ws_client alice = login("alice");
    const json first = join_room(alice, "r");
    say(alice, "a");
    say(alice, "b");
    read_until(alice, is_chat("b"));
    ws_client bob = login("bob");
    const json joined = join_room(bob, "r", {{"after", 0}, {"epoch", first["epoch"]}});
    EXPECT_EQ(joined["recovered"], true) << joined;
    EXPECT_EQ(texts(joined["history"]), (std::vector<std::string>{"a", "b"}));
}

TEST_F(RecoveryTest, EpochMismatchIsNotRecovered) {
    ws_client alice = login("alice");
    const json first = join_room(alice, "r");
    say(alice, "x");
    read_until(alice, is_chat("x"));
    ws_client bob = login("bob");
    const json joined = join_room(bob, "r", {{"after", 1}, {"epoch", first["epoch"].get<std::int64_t>() + 1}});
    EXPECT_EQ(joined["recovered"], false) << joined;
}

TEST_F(RecoveryTest, RestartChangesTheEpochAndResetsHistory) {
    json first;
    {
        ws_client alice = login("alice");
        first = join_room(alice, "r");
        say(alice, "lost on restart");
        read_until(alice, is_chat("lost on restart"));
    }
    restart_daemon();

    ws_client alice = login("alice");
    const json joined = join_room(alice, "r", {{"after", 1}, {"epoch", first["epoch"]}});
    EXPECT_NE(joined["epoch"], first["epoch"]) << "a memory store starts a new epoch";
    EXPECT_EQ(joined["recovered"], false) << joined;
    EXPECT_EQ(joined["history"], json::array());
    say(alice, "new");
    EXPECT_EQ(wait_type(alice, "message")["seq"], 1);
}

}  // namespace
}  // namespace parley::integration
