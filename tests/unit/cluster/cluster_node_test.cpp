// The cluster's logic with Redis played by the test (fake_redis.hpp): the sync and its marker,
// a seq gap fetched from the stream, a say whose answer was lost, a name lost to another node,
// Redis lost and regained, and the failure contract (nothing waits for an answer that never
// comes).

#include "rooms/cluster/cluster_keys.hpp"
#include "tests/unit/cluster/node_fixture.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace parley::cluster::tests {
namespace {

using rooms::tests::json;
using rooms::tests::test_client;

TEST_F(cluster_node_test, events_before_the_marker_are_in_the_snapshot_and_later_ones_follow_it) {
    test_client& alice = login("alice");
    world_.join(alice, "lobby");
    settle();
    alice.take();

    const std::string carol_joins =
        format_event(event_type::join, "b", "lobby", "carol", json_of(protocol::encode_presence("lobby", "carol", true)));
    const std::string dave_joins =
        format_event(event_type::join, "b", "lobby", "dave", json_of(protocol::encode_presence("lobby", "dave", true)));
    // dave joined (and left) before the snapshot was read: it does not list him. bob is in the
    // snapshot. carol joined after the marker: the snapshot does not list her, her event does.
    bool applied_before_snapshot = false;
    sync({{"b", {"bob", "carol"}, {"lobby\nbob"}}}, {{"lobby", 0}}, {dave_joins}, {carol_joins},
         [&] { applied_before_snapshot = !alice.received("presence").empty(); });
    answer_rebases();

    EXPECT_FALSE(applied_before_snapshot) << "an event after the marker was applied before the snapshot";
    std::vector<std::string> joined_presence;
    for (const auto& p : alice.received("presence")) {
        joined_presence.push_back(p.value("user", ""));
    }
    // bob announced by the snapshot, then carol by the event that came after the marker.
    EXPECT_EQ(joined_presence, (std::vector<std::string>{"bob", "carol"}));
    test_client& erin = login("erin", 1);
    json joined = world_.join(erin, "lobby");
    EXPECT_EQ(joined["members"], (json{"alice", "bob", "carol", "erin"})) << joined.dump();
    EXPECT_FALSE(node_.health().degraded);
    EXPECT_EQ(node_.health().remote_nodes, 1u);
}

TEST_F(cluster_node_test, a_seq_gap_fetches_the_missing_range_and_holds_later_messages_behind_it) {
    test_client& alice = login("alice");
    world_.join(alice, "lobby");
    sync({}, {{"lobby", 0}});
    answer_rebases();
    alice.take();

    node_.on_channel_message(message_event("b", "lobby", "bob", "one", 1));
    node_.on_channel_message(message_event("b", "lobby", "bob", "four", 4));
    settle();
    auto fetch = redis_.take("read_log oldest");
    ASSERT_TRUE(fetch);
    EXPECT_EQ(fetch->keys, (std::vector<std::string>{keys::room_stream("lobby"), keys::room_revised("lobby")}));
    EXPECT_EQ(fetch->args, (std::vector<std::string>{"2", "3", "2", "0"}));
    node_.on_channel_message(message_event("b", "lobby", "bob", "five", 5));
    settle();
    EXPECT_EQ(seqs_received(alice), (std::vector<std::int64_t>{1})) << "applied past a gap";

    redis_.answer(*fetch, array_reply({stream_entry_reply("lobby", "bob", "two", 2),
                                       stream_entry_reply("lobby", "bob", "three", 3)}));
    settle();
    EXPECT_EQ(seqs_received(alice), (std::vector<std::int64_t>{1, 2, 3, 4, 5}));
    EXPECT_EQ(redis_.count("read_log oldest"), 0u) << "fetched more than the gap";
}

TEST_F(cluster_node_test, a_fetch_lost_with_the_connection_does_not_leave_the_room_waiting) {
    test_client& alice = login("alice");
    world_.join(alice, "lobby");
    sync({}, {{"lobby", 0}});
    answer_rebases();
    alice.take();

    node_.on_channel_message(message_event("b", "lobby", "bob", "three", 3));
    settle();
    auto fetch = redis_.take("read_log oldest");
    ASSERT_TRUE(fetch);
    redis_.answer(*fetch, std::nullopt);  // lost with the connection; the link reports down next
    settle();
    node_.on_redis_down();
    // Back: the room is caught up by the sync, and new messages are applied, not queued forever.
    sync({}, {{"lobby", 3}});
    auto catch_up = redis_.take("read_log oldest");
    ASSERT_TRUE(catch_up);
    EXPECT_EQ(catch_up->args, (std::vector<std::string>{"1", "3", "3", "0"}));
    redis_.answer(*catch_up, array_reply({stream_entry_reply("lobby", "bob", "one", 1),
                                          stream_entry_reply("lobby", "bob", "two", 2),
                                          stream_entry_reply("lobby", "bob", "three", 3)}));
    node_.on_channel_message(message_event("b", "lobby", "bob", "four", 4));
    settle();
    EXPECT_EQ(seqs_received(alice), (std::vector<std::int64_t>{1, 2, 3, 4}));
}

TEST_F(cluster_node_test, a_say_whose_answer_was_lost_is_sent_again_once_and_acked_once) {
    test_client& alice = login("alice");
    world_.join(alice, "lobby");
    sync({}, {{"lobby", 0}});
    answer_rebases();
    alice.take();

    alice.send({{"type", "say"}, {"room", "lobby"}, {"text", "hello"}, {"id", 7}});
    settle();
    auto first = redis_.take("say");
    ASSERT_TRUE(first);
    EXPECT_EQ(first->args.at(11), "0");
    redis_.answer(*first, std::nullopt);  // the connection went before the answer
    settle();
    node_.on_redis_down();
    EXPECT_EQ(redis_.count("say"), 0u) << "sent again while Redis is away";

    // Back: sent again, marked as such (the script looks for it before storing it). Redis had
    // not stored it: it does now, as seq 1, and publishes it before the sync's marker.
    std::string ticket;
    sync({}, {{"lobby", 1}}, {}, {}, [&] {
        auto again = redis_.take("say");
        ASSERT_TRUE(again);
        EXPECT_EQ(again->args.at(11), "1");
        EXPECT_EQ(again->args.at(10), first->args.at(10)) << "sent again under another number";
        EXPECT_EQ(redis_.count("say"), 0u) << "sent again more than once";
        ticket = again->args.at(3);
        redis_.answer(*again, integer_reply(1));
    });
    // The message was published before the marker: the node reads it from the stream.
    auto catch_up = redis_.take("read_log oldest");
    ASSERT_TRUE(catch_up);
    redis_.answer(*catch_up, array_reply({stream_entry_reply("lobby", "alice", "hello", 1, "a", ticket)}));
    settle();
    EXPECT_EQ(seqs_received(alice), (std::vector<std::int64_t>{1}));
    auto acks = alice.received("ack");
    ASSERT_EQ(acks.size(), 1u);
    EXPECT_EQ(acks[0]["re"], 7);
    EXPECT_EQ(acks[0]["seq"], 1);
    EXPECT_EQ(redis_.count("say"), 0u);
}

TEST_F(cluster_node_test, a_name_taken_by_another_node_closes_its_session_here) {
    test_client& alice = login("alice");
    test_client& bob = login("bob", 1);
    sync({}, {});
    alice.take();
    redis_.calls.clear();  // what the sync sent (its own renewal among them)

    node_.heartbeat();
    settle();
    EXPECT_TRUE(redis_.take("heartbeat"));
    auto renew = redis_.take("renew_names");
    ASSERT_TRUE(renew);
    ASSERT_EQ(renew->keys, (std::vector<std::string>{keys::name_lease("alice"), keys::users_index(partition_of("alice")),
                                                     keys::name_lease("bob"), keys::users_index(partition_of("bob"))}));
    EXPECT_EQ(renew->args.at(2), "alice") << "a lease taken again is listed again";
    redis_.answer(*renew, array_reply({integer_reply(1)}));  // the first lease is another node's now
    settle();

    ASSERT_EQ(alice.output.closes.size(), 1u);
    EXPECT_EQ(alice.output.closes[0].code, protocol::close_code::policy_violation);
    auto notices = alice.received("system");
    ASSERT_EQ(notices.size(), 1u);
    EXPECT_NE(notices[0].value("text", "").find("in use on another node"), std::string::npos) << notices[0].dump();
    EXPECT_TRUE(bob.output.closes.empty());
    EXPECT_EQ(node_.health().names_lost, 1u);
    // The lost name is no longer this node's to renew.
    node_.heartbeat();
    settle();
    auto next = redis_.take("renew_names");
    ASSERT_TRUE(next);
    EXPECT_EQ(next->keys, (std::vector<std::string>{keys::name_lease("bob"), keys::users_index(partition_of("bob"))}));
}

TEST_F(cluster_node_test, redis_lost_moves_a_room_to_a_detached_epoch_and_back) {
    test_client& alice = login("alice");
    world_.join(alice, "lobby");
    sync({}, {{"lobby", 0}});
    answer_rebases();
    alice.take();
    ASSERT_EQ(world_.hub().rooms().find("lobby")->log_position().first, cluster_epoch);

    node_.on_redis_down();
    EXPECT_TRUE(node_.health().degraded);
    alice.send({{"type", "say"}, {"room", "lobby"}, {"text", "alone"}, {"id", 1}});
    settle();
    EXPECT_EQ(redis_.count("say"), 0u);
    auto detached = alice.received("joined");
    ASSERT_EQ(detached.size(), 1u) << "members were not told of the detached epoch";
    EXPECT_EQ(detached[0]["epoch"], node_.detached_epoch());
    EXPECT_NE(node_.detached_epoch(), cluster_epoch);
    EXPECT_EQ(seqs_received(alice), (std::vector<std::int64_t>{1}));
    alice.take();

    // Back: the kept say goes to the shared history, and the room starts over from the stream
    // in the cluster's epoch.
    sync({}, {{"lobby", 1}}, {}, {}, [&] {
        auto kept = redis_.take("say");
        ASSERT_TRUE(kept);
        EXPECT_EQ(kept->args.at(7), "lobby");
        EXPECT_NE(kept->args.at(4).find("\"text\":\"alone\""), std::string::npos);
        redis_.answer(*kept, integer_reply(1));
    });
    answer_rebases({stream_entry_reply("lobby", "alice", "alone", 1, "a")});
    auto back = alice.received("joined");
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0]["epoch"], cluster_epoch);
    EXPECT_FALSE(back[0].contains("re"));
    EXPECT_EQ(world_.hub().rooms().find("lobby")->log_position(), (std::pair<std::int64_t, std::int64_t>{cluster_epoch, 1}));
    EXPECT_FALSE(node_.health().degraded);
}

TEST_F(cluster_node_test, a_history_page_that_redis_cannot_serve_is_answered_unavailable) {
    test_client& alice = login("alice");
    sync({}, {});
    join_fed(alice, "lobby", 80);  // the stream's newest messages: none in memory here
    alice.take();

    alice.send({{"type", "history"}, {"room", "lobby"}, {"before", 50}, {"limit", 10}, {"id", 3}});
    settle();
    auto read = redis_.take("read_log newest");
    ASSERT_TRUE(read);
    redis_.answer(*read, std::nullopt);  // lost before its answer
    settle();
    json reply = alice.take_one();
    EXPECT_TRUE(rooms::tests::is_error(reply, "unavailable", 3));

    node_.on_redis_down();
    alice.send({{"type", "history"}, {"room", "lobby"}, {"before", 50}, {"limit", 10}, {"id", 4}});
    settle();
    EXPECT_EQ(redis_.count("read_log newest"), 0u);
    EXPECT_TRUE(rooms::tests::is_error(alice.take_one(), "unavailable", 4));
}

TEST_F(cluster_node_test, a_say_redis_refuses_is_answered_unavailable_with_or_without_an_id) {
    test_client& alice = login("alice");
    world_.join(alice, "lobby");
    sync({}, {{"lobby", 0}});
    answer_rebases();
    alice.take();

    alice.send({{"type", "say"}, {"room", "lobby"}, {"text", "one"}, {"id", 5}});
    alice.send({{"type", "say"}, {"room", "lobby"}, {"text", "two"}});
    settle();
    for (int i = 0; i < 2; ++i) {
        auto say = redis_.take("say");
        ASSERT_TRUE(say);
        redis_reply error;
        error.type = redis_reply::kind::error;
        error.text = "OOM command not allowed when used memory > 'maxmemory'";
        redis_.answer(*say, error);
    }
    settle();
    auto replies = alice.take();
    ASSERT_EQ(replies.size(), 2u) << json(replies).dump();
    EXPECT_TRUE(rooms::tests::is_error(replies[0], "unavailable", 5));
    EXPECT_TRUE(rooms::tests::is_error(replies[1], "unavailable"));
    EXPECT_TRUE(seqs_received(alice).empty());
}

TEST_F(cluster_node_test, the_says_of_one_pass_go_in_one_script_call_and_one_publication_per_room) {
    test_client& alice = login("alice");
    world_.join(alice, "lobby");
    world_.join(alice, "kitchen");
    sync({}, {{"lobby", 0}, {"kitchen", 0}});
    answer_rebases();
    alice.take();
    const std::size_t batches_before = redis_.say_batches;
    const std::uint64_t events_before = node_.health().events_received;

    alice.send({{"type", "say"}, {"room", "lobby"}, {"text", "one"}, {"id", 1}});
    alice.send({{"type", "say"}, {"room", "kitchen"}, {"text", "two"}, {"id", 2}});
    alice.send({{"type", "say"}, {"room", "lobby"}, {"text", "three"}, {"id", 3}});
    settle();
    EXPECT_EQ(redis_.say_batches, batches_before + 1) << "the three says went in more than one call";
    ASSERT_EQ(redis_.count("say"), 3u);
    // Grouped by room, each room's in order. The script publishes on each room's channel "Y",
    // the room's entry id (first seq and count), then the room's block of says as given.
    EXPECT_EQ(redis_.published_on,
              (std::vector<std::string>{keys::room_channel("lobby"), keys::room_channel("kitchen")}));
    ASSERT_EQ(redis_.published_blocks.size(), 2u);
    const std::string lobby_batch = "Y1-2\n" + redis_.published_blocks[0];
    const std::string kitchen_batch = "Y1-1\n" + redis_.published_blocks[1];
    std::vector<std::int64_t> seqs = {1, 2, 1};
    const std::vector<std::string> texts = {"one", "three", "two"};
    for (std::size_t i = 0; i < 3; ++i) {
        auto say = redis_.take("say");
        ASSERT_TRUE(say);
        EXPECT_EQ(say->args.at(7), i == 2 ? "kitchen" : "lobby") << "out of order";
        EXPECT_EQ(say->keys.at(0), i == 2 ? keys::room_seq("kitchen") : keys::room_seq("lobby"));
        // The JSON written back from the block is the one the sender's worker made.
        const auto made = protocol::encode_message_around_seq(i == 2 ? "kitchen" : "lobby", "alice", texts[i],
                                                              std::stoll(say->args.at(2)));
        EXPECT_EQ(say->args.at(4), made.before);
        EXPECT_EQ(say->args.at(5), made.after);
        redis_.answer(*say, integer_reply(seqs[i]));
    }
    settle();
    EXPECT_TRUE(alice.received("ack").empty()) << "acked before the messages came back";

    node_.on_channel_message(lobby_batch, keys::room_channel("lobby"));
    node_.on_channel_message(kitchen_batch, keys::room_channel("kitchen"));
    settle();
    std::vector<std::string> seen;
    for (const json& reply : alice.take()) {
        seen.push_back(reply.value("type", "") + ":" + reply.value("room", "") + ":" +
                       std::to_string(reply.value("seq", 0)));
    }
    EXPECT_EQ(seen, (std::vector<std::string>{"ack:lobby:1", "message:lobby:1", "ack:lobby:2", "message:lobby:2",
                                              "ack:kitchen:1", "message:kitchen:1"}));
    EXPECT_EQ(node_.health().events_received, events_before + 3);
}

TEST_F(cluster_node_test, depart_finishes_when_redis_cannot_answer) {
    login("alice");
    sync({}, {});
    bool done = false;
    node_.depart([&] { done = true; });
    settle();
    auto freed = redis_.take("release_leases");
    ASSERT_TRUE(freed);
    EXPECT_EQ(freed->keys, (std::vector<std::string>{keys::name_lease("alice"), keys::users_index(partition_of("alice"))}));
    auto depart = redis_.take("depart");
    ASSERT_TRUE(depart);
    EXPECT_FALSE(done);
    redis_.answer(*depart, std::nullopt);
    settle();
    EXPECT_TRUE(done);
}

}  // namespace
}  // namespace parley::cluster::tests
