// What a node of a cluster keeps for identities (token mode), with Redis played by the test: a
// stored dm goes through one script with the conversation's and both users' keys, its sender
// gets copy then ack, its published event reaches the other sessions; read markers and welcome's
// conversations come from Redis; dm_history reads the conversation's stream; whatever Redis
// cannot do is answered `unavailable`, and a dm whose answer was lost is sent again once.

#include "rooms/cluster/cluster_keys.hpp"
#include "tests/token_minter.hpp"
#include "tests/unit/cluster/node_fixture.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace parley::cluster::tests {
namespace {

using rooms::tests::is_error;


class cluster_conversations_test : public cluster_node_test {
protected:
    cluster_conversations_test() : cluster_node_test(token_settings()) {}

    // Logs user in with a token; Redis answers the conversations script with `listed` (nothing
    // when the node is down: it does not ask). Returns the client and its welcome.
    std::pair<test_client*, json> token_login(std::string_view user, std::uint32_t worker = 0,
                                              const std::optional<redis_reply>& listed = array_reply()) {
        test_client& c = start_login(user, worker, test_tokens::token_for(user));
        if (redis_.count("conversations") > 0) {
            auto load = redis_.take("conversations");
            EXPECT_EQ(load->keys, (std::vector<std::string>{keys::user_markers(user)}));
            EXPECT_TRUE(c.output.frames.empty()) << "answered before the welcome";
            redis_.answer(*load, listed);
            settle();
        }
        json welcome = c.take_one();
        EXPECT_EQ(welcome.value("type", ""), "welcome") << welcome.dump();
        return {&c, welcome};
    }

    // The dm script's call, answered with seq; returns what the node then publishes (channel,
    // event), in order.
    std::vector<std::pair<std::string, std::string>> answer_dm(sent_call& call, std::int64_t seq) {
        redis_.answer(call, integer_reply(seq));
        settle();
        std::vector<std::pair<std::string, std::string>> published;
        while (auto p = redis_.take_if("SPUBLISH")) {
            published.emplace_back(p->argv.at(1), p->argv.at(2));
        }
        return published;
    }
};

TEST_F(cluster_conversations_test, a_dm_is_one_script_its_sender_gets_copy_then_ack_and_the_event_reaches_the_rest) {
    sync({}, {});
    test_client& alice = *token_login("alice").first;
    test_client& alice_phone = *token_login("alice", 1).first;
    test_client& bob = *token_login("bob", 1).first;

    alice.send({{"type", "dm"}, {"to", "bob"}, {"text", "psst"}, {"id", 5}});
    settle();
    auto call = redis_.take("dm");
    ASSERT_TRUE(call);
    EXPECT_EQ(call->keys, (std::vector<std::string>{keys::conversation_seq("dm:alice:bob"), keys::conversation_stream("dm:alice:bob"),
                                                    keys::user_markers("alice"), keys::user_markers("bob")}));
    EXPECT_EQ(call->args.at(5), "100") << "bounded like a room's stream";
    EXPECT_EQ(call->args.at(6), "dm:alice:bob");
    EXPECT_EQ(call->args.at(8), "0");
    EXPECT_TRUE(alice.output.frames.empty()) << "answered before Redis numbered it";

    const auto published = answer_dm(*call, 7);
    auto mine = alice.take();
    ASSERT_EQ(mine.size(), 2u) << json(mine).dump();
    EXPECT_EQ(mine[0], (json{{"type", "dm"}, {"from", "alice"}, {"to", "bob"}, {"text", "psst"}, {"seq", 7},
                             {"ts", mine[0]["ts"]}}));
    EXPECT_EQ(mine[1], (json{{"type", "ack"}, {"re", 5}, {"with", "bob"}, {"seq", 7}}));

    // Published on bob's channel and alice's (after the answer, so never twice): bob and alice's
    // other session get the same dm; the sender no second copy.
    ASSERT_EQ(published.size(), 2u);
    EXPECT_EQ(published[0].first, keys::user_channel("bob"));
    EXPECT_EQ(published[1].first, keys::user_channel("alice"));
    for (const auto& [channel, event] : published) {
        node_.on_channel_message(event);
    }
    settle();
    EXPECT_EQ(bob.take_one(), mine[0]);
    EXPECT_EQ(alice_phone.take_one(), mine[0]);
    EXPECT_TRUE(alice.take().empty());
}

TEST_F(cluster_conversations_test, a_dm_stored_by_another_node_reaches_the_recipient_here) {
    sync({}, {});
    test_client& bob = *token_login("bob").first;
    auto dm = protocol::encode_dm("alice", "bob", "hi", 1234, 3);
    node_.on_channel_message(format_event(event_type::stored_dm, "b", "bob", "alice", "0.1\n") + json_of(dm));
    settle();
    EXPECT_EQ(bob.take_one(), json::parse(json_of(dm)));
}

TEST_F(cluster_conversations_test, a_dm_redis_refuses_or_cannot_take_is_answered_unavailable) {
    sync({}, {});
    test_client& alice = *token_login("alice").first;
    alice.send({{"type", "dm"}, {"to", "bob"}, {"text", "one"}, {"id", 1}});
    alice.send({{"type", "dm"}, {"to", "bob"}, {"text", "two"}});
    settle();
    for (int i = 0; i < 2; ++i) {
        auto call = redis_.take("dm");
        ASSERT_TRUE(call);
        redis_.answer(*call, error_reply("OOM command not allowed when used memory > 'maxmemory'"));
    }
    settle();
    auto replies = alice.take();
    ASSERT_EQ(replies.size(), 2u) << json(replies).dump();
    EXPECT_TRUE(is_error(replies[0], "unavailable", 1));
    EXPECT_TRUE(is_error(replies[1], "unavailable"));

    node_.on_redis_down();
    alice.send({{"type", "dm"}, {"to", "bob"}, {"text", "three"}, {"id", 3}});
    settle();
    EXPECT_EQ(redis_.count("dm"), 0u);
    EXPECT_TRUE(is_error(alice.take_one(), "unavailable", 3));
}

TEST_F(cluster_conversations_test, a_dm_whose_answer_was_lost_is_sent_again_once_and_acked) {
    sync({}, {});
    test_client& alice = *token_login("alice").first;
    alice.send({{"type", "dm"}, {"to", "bob"}, {"text", "hello"}, {"id", 4}});
    settle();
    auto first = redis_.take("dm");
    ASSERT_TRUE(first);
    redis_.answer(*first, std::nullopt);  // the connection went before the answer
    settle();
    node_.on_redis_down();
    EXPECT_TRUE(alice.take().empty()) << "neither acked nor refused: it may be stored";

    // Back: sent again under its own number, marked as such (the script returns the seq it
    // stored it under the first time instead of storing it again).
    sync({}, {}, {}, {}, [&] {
        auto again = redis_.take("dm");
        ASSERT_TRUE(again);
        EXPECT_EQ(again->args.at(8), "1");
        EXPECT_EQ(again->args.at(7), first->args.at(7)) << "sent again under another number";
        EXPECT_EQ(again->args.at(3), first->args.at(3));
        redis_.answer(*again, integer_reply(1));
    });
    auto replies = alice.take();
    ASSERT_EQ(replies.size(), 2u) << json(replies).dump();
    EXPECT_EQ(replies[0].value("seq", 0), 1);
    EXPECT_EQ(replies[1], (json{{"type", "ack"}, {"re", 4}, {"with", "bob"}, {"seq", 1}}));
    EXPECT_EQ(redis_.count("dm"), 0u);
}

TEST_F(cluster_conversations_test, read_markers_are_saved_in_redis_and_reach_the_users_other_sessions) {
    sync({}, {});
    test_client& alice = *token_login("alice").first;
    test_client& phone = *token_login("alice", 1).first;

    alice.send({{"type", "read"}, {"with", "bob"}, {"seq", 9}, {"id", 1}});
    settle();
    auto call = redis_.take("read_marker");
    ASSERT_TRUE(call);
    EXPECT_EQ(call->keys, (std::vector<std::string>{keys::user_markers("alice"), keys::conversation_seq("dm:alice:bob")}));
    EXPECT_EQ(call->args, (std::vector<std::string>{"dm:alice:bob", "9", "1"}));
    redis_.answer(*call, array_reply({integer_reply(4), integer_reply(1)}));  // clamped to the last seq
    settle();
    EXPECT_EQ(alice.take_one(), (json{{"type", "read"}, {"with", "bob"}, {"seq", 4}, {"re", 1}}));
    EXPECT_EQ(phone.take_one(), (json{{"type", "read"}, {"with", "bob"}, {"seq", 4}}));

    // Unchanged: the reply only. No conversation: user_not_found. No answer: unavailable.
    const std::vector<std::pair<std::optional<redis_reply>, int>> answers{
        {array_reply({integer_reply(4), integer_reply(0)}), 2},
        {array_reply({integer_reply(-1), integer_reply(0)}), 3},
        {std::nullopt, 4}};
    for (const auto& [answer, re] : answers) {
        alice.send({{"type", "read"}, {"with", "bob"}, {"seq", 2}, {"id", re}});
        settle();
        auto next = redis_.take("read_marker");
        ASSERT_TRUE(next);
        redis_.answer(*next, answer);
        settle();
    }
    auto replies = alice.take();
    ASSERT_EQ(replies.size(), 3u) << json(replies).dump();
    EXPECT_EQ(replies[0], (json{{"type", "read"}, {"with", "bob"}, {"seq", 4}, {"re", 2}}));
    EXPECT_TRUE(is_error(replies[1], "user_not_found", 3));
    EXPECT_TRUE(is_error(replies[2], "unavailable", 4));
    EXPECT_TRUE(phone.take().empty());

    // A room's marker: the room's counter, in the same hash.
    join_fed(alice, "lobby");
    alice.take();
    alice.send({{"type", "read"}, {"room", "lobby"}, {"seq", 3}, {"id", 5}});
    settle();
    auto room_call = redis_.take("read_marker");
    ASSERT_TRUE(room_call);
    EXPECT_EQ(room_call->keys, (std::vector<std::string>{keys::user_markers("alice"), keys::room_seq("lobby")}));
    EXPECT_EQ(room_call->args, (std::vector<std::string>{"lobby", "3", "0"}));
    redis_.answer(*room_call, array_reply({integer_reply(0), integer_reply(1)}));  // the room has no message yet
    settle();
    EXPECT_EQ(alice.take_one(), (json{{"type", "read"}, {"room", "lobby"}, {"seq", 0}, {"re", 5}}));
    EXPECT_EQ(phone.take_one(), (json{{"type", "read"}, {"room", "lobby"}, {"seq", 0}}));

    node_.on_redis_down();
    alice.send({{"type", "read"}, {"with", "bob"}, {"seq", 2}, {"id", 6}});
    settle();
    EXPECT_EQ(redis_.count("read_marker"), 0u) << "asked Redis while it is away";
    EXPECT_TRUE(is_error(alice.take_one(), "unavailable", 6));
}

TEST_F(cluster_conversations_test, welcome_lists_what_redis_holds_newest_first_or_nothing_when_it_cannot_say) {
    sync({}, {});
    // field, marker, last seq, last ts: as the conversations script answers.
    auto listed = strings_reply({"dm:alice:bob", "2", "5", "2000",  //
                                 "lobby", "10", "10", "3000",        //
                                 "dm:alice:carol", "0", "1", "1000", //
                                 "dm:bob:carol", "0", "1", "9000",   // not alice's: never listed
                                 "empty", "0", "0", "0"});           // nothing in it
    json welcome = token_login("alice", 0, listed).second;
    EXPECT_EQ(welcome["conversations"],
              (json{{{"room", "lobby"}, {"seq", 10}, {"read", 10}, {"unread", 0}},
                    {{"with", "bob"}, {"seq", 5}, {"read", 2}, {"unread", 3}},
                    {{"with", "carol"}, {"seq", 1}, {"read", 0}, {"unread", 1}}}))
        << welcome.dump();

    // Redis cannot answer: welcome without conversations (unknown, not none).
    json unknown = token_login("alice", 1, std::nullopt).second;
    EXPECT_FALSE(unknown.contains("conversations")) << unknown.dump();
    node_.on_redis_down();
    json detached = token_login("alice", 1).second;
    EXPECT_FALSE(detached.contains("conversations")) << detached.dump();
}

TEST_F(cluster_conversations_test, dm_history_reads_the_conversations_stream) {
    sync({}, {});
    test_client& bob = *token_login("bob").first;
    bob.send({{"type", "dm_history"}, {"with", "alice"}, {"before", 10}, {"limit", 2}, {"id", 8}});
    settle();
    auto read = redis_.take("XREVRANGE");
    ASSERT_TRUE(read);
    EXPECT_EQ(read->argv,
              (std::vector<std::string>{"XREVRANGE", keys::conversation_stream("dm:alice:bob"), "9-1", "1-1", "COUNT", "2"}));
    auto entry = [](std::int64_t seq) {
        return array_reply({string_reply(keys::stream_id(seq)),
                            strings_reply({"j", json_of(protocol::encode_dm("alice", "bob", "m" + std::to_string(seq),
                                                                            1000 + seq, seq)),
                                           "t", std::to_string(1000 + seq), "n", "b:1:1"})});
    };
    redis_.answer(*read, array_reply({entry(9), entry(8)}));  // newest first, as XREVRANGE gives
    settle();
    json page = bob.take_one();
    ASSERT_EQ(page.value("type", ""), "dm_history") << page.dump();
    EXPECT_EQ(page["re"], 8);
    ASSERT_EQ(page["messages"].size(), 2u);
    EXPECT_EQ(page["messages"][0]["seq"], 8);
    EXPECT_EQ(page["messages"][1]["seq"], 9);

    bob.send({{"type", "dm_history"}, {"with", "alice"}, {"after", 3}, {"limit", 5}, {"id", 9}});
    settle();
    auto forward = redis_.take("XRANGE");
    ASSERT_TRUE(forward);
    EXPECT_EQ(forward->argv,
              (std::vector<std::string>{"XRANGE", keys::conversation_stream("dm:alice:bob"), "4-1", "+", "COUNT", "5"}));
    redis_.answer(*forward, std::nullopt);
    settle();
    EXPECT_TRUE(is_error(bob.take_one(), "unavailable", 9));
}

// Without tokens a name is not an identity: a node of a cluster stores nothing for it either.
TEST_F(cluster_node_test, without_tokens_a_dm_is_live_only_and_nothing_is_asked_of_redis) {
    sync({}, {});
    test_client& alice = login("alice");
    alice.send({{"type", "dm"}, {"to", "bob"}, {"text", "hi"}, {"id", 1}});
    alice.send({{"type", "read"}, {"with", "bob"}, {"seq", 1}, {"id", 2}});
    alice.send({{"type", "dm_history"}, {"with", "bob"}, {"id", 3}});
    settle();
    // The dm only goes to bob's channel, live (nobody reads it: bob is not logged in).
    auto live = redis_.take("SPUBLISH");
    ASSERT_TRUE(live);
    EXPECT_EQ(live->argv.at(1), keys::user_channel("bob"));
    redis_.answer(*live, integer_reply(0));
    settle();
    auto replies = alice.take();
    ASSERT_EQ(replies.size(), 3u) << json(replies).dump();
    EXPECT_TRUE(is_error(replies[0], "user_not_found", 2));
    EXPECT_EQ(replies[1], (json{{"type", "dm_history"}, {"with", "bob"}, {"messages", json::array()}, {"re", 3}}));
    EXPECT_TRUE(is_error(replies[2], "user_not_found", 1));
    for (const char* name : {"dm", "read_marker", "conversations", "XREVRANGE", "XRANGE"}) {
        EXPECT_EQ(redis_.count(name), 0u) << name;
    }
}

}  // namespace
}  // namespace parley::cluster::tests
