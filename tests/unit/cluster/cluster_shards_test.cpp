// A node over two Redis shards, with Redis played by the test: a script runs on one server, so
// the says of one pass go in one call per shard, and a sync reads the seqs of rooms on the
// other shard there, after their channels are subscribed.

#include "rooms/cluster/cluster_keys.hpp"
#include "tests/unit/cluster/node_fixture.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace parley::cluster::tests {
namespace {

using rooms::tests::json;
using rooms::tests::test_client;

// The first room named "<stem>-N" on `shard` of two.
std::string room_on_shard(const std::string& stem, std::uint32_t shard) {
    for (int n = 0;; ++n) {
        std::string name = stem + "-" + std::to_string(n);
        if (shard_of_partition(partition_of(name), 2) == shard) {
            return name;
        }
    }
}

const std::string near_room = room_on_shard("near", 0);
const std::string far_room = room_on_shard("far", 1);

TEST(shard_routing, rooms_spread_over_the_shards_and_everything_else_stays_on_the_first) {
    EXPECT_EQ(keys::shard_of_key(keys::room_seq(far_room), 2), 1u);
    EXPECT_EQ(keys::shard_of_key(keys::room_channel(far_room), 2), 1u);
    EXPECT_EQ(keys::shard_of_key(keys::room_settings(far_room), 2), 1u);
    EXPECT_EQ(keys::shard_of_key(keys::room_seq(near_room), 2), 0u);
    EXPECT_EQ(keys::shard_of_key(keys::room_seq(far_room), 1), 0u) << "one server holds everything";
    for (const std::string& k : {std::string(keys::channel), keys::name_lease("alice"), keys::user_markers("alice"),
                                 keys::conversation_seq("dm:alice:bob"), keys::node_users("node-a")}) {
        EXPECT_EQ(keys::shard_of_key(k, 2), 0u) << k;
    }
    // Only a well-formed room key names a partition.
    EXPECT_EQ(keys::room_partition(keys::room_seq("lobby")), partition_of("lobby"));
    EXPECT_FALSE(keys::room_partition("parley:{p}:room:x:seq"));
    EXPECT_FALSE(keys::room_partition("parley:{p128}:room:x:seq"));
    EXPECT_FALSE(keys::room_partition("parley:{p12}:user:x:read"));
    EXPECT_FALSE(keys::room_partition("parley:{p1234}:room:x:seq"));
    // Every partition has a shard, and both shards get some.
    std::vector<int> per_shard(2);
    for (std::uint32_t p = 0; p < partition_count; ++p) {
        ++per_shard.at(shard_of_partition(p, 2));
    }
    EXPECT_GT(per_shard[0], 40);
    EXPECT_GT(per_shard[1], 40);
}

class two_shards_test : public cluster_node_test {
protected:
    two_shards_test() { redis_.shards = 2; }

    // alice, logged in while Redis was away (served here alone), in both rooms; then Redis
    // answers and the node begins its sync. Returns the snapshot's call and the rooms' state
    // reads, unanswered; the marker has not come yet.
    struct sync_begun {
        test_client* alice = nullptr;
        std::optional<sent_call> snapshot;
        std::optional<sent_call> near_state;
        std::optional<sent_call> far_state;
    };
    sync_begun begin_sync_in_both_rooms() {
        sync_begun s;
        s.alice = &login("alice");
        world_.join(*s.alice, near_room);
        world_.join(*s.alice, far_room);
        node_.on_redis_up();
        settle();
        s.snapshot = redis_.take("snapshot");
        s.near_state = redis_.take("room_state");
        s.far_state = redis_.take("room_state");
        EXPECT_TRUE(s.snapshot && s.near_state && s.far_state);
        if (s.near_state && room_of_state_call(*s.near_state) != near_room) {
            std::swap(s.near_state, s.far_state);
        }
        return s;
    }

    // The same, and the sync answered: the node is in sync with both rooms fed.
    test_client& alice_in_both_rooms() {
        sync_begun s = begin_sync_in_both_rooms();
        node_.on_channel_message(s.snapshot->args.at(3));
        redis_.answer(*s.snapshot, snapshot_reply({}));
        redis_.answer(*s.near_state, room_state_reply(0));
        redis_.answer(*s.far_state, room_state_reply(0));
        settle();
        answer_rebases();
        s.alice->take();
        EXPECT_FALSE(node_.degraded());
        return *s.alice;
    }
};

TEST_F(two_shards_test, a_sync_reads_each_room_on_its_shard_and_waits_for_them) {
    sync_begun s = begin_sync_in_both_rooms();
    ASSERT_TRUE(s.snapshot && s.near_state && s.far_state);
    EXPECT_TRUE(s.snapshot->keys.empty()) << "the snapshot reads the cluster's keys only";
    EXPECT_EQ(s.far_state->keys, (std::vector<std::string>{keys::room_seq(far_room), keys::room_members(far_room)}));
    EXPECT_EQ(keys::shard_of_key(s.far_state->keys.at(1), 2), 1u) << "a room's members live on its shard";
    node_.on_channel_message(s.snapshot->args.at(3));  // the marker
    redis_.answer(*s.snapshot, snapshot_reply({}));
    redis_.answer(*s.near_state, room_state_reply(0));
    settle();
    EXPECT_TRUE(node_.degraded()) << "in sync before the other shard's room was read";
    redis_.answer(*s.far_state, room_state_reply(0));
    settle();
    EXPECT_FALSE(node_.degraded());
}

TEST_F(two_shards_test, the_says_of_one_pass_go_in_one_call_per_shard) {
    test_client& alice = alice_in_both_rooms();

    const std::size_t before = redis_.batch_keys.size();
    alice.send({{"type", "say"}, {"room", near_room}, {"text", "one"}, {"id", 1}});
    alice.send({{"type", "say"}, {"room", far_room}, {"text", "two"}, {"id", 2}});
    alice.send({{"type", "say"}, {"room", near_room}, {"text", "three"}, {"id", 3}});
    settle();
    ASSERT_EQ(redis_.batch_keys.size(), before + 2) << "one call per shard";
    for (std::size_t i = before; i < redis_.batch_keys.size(); ++i) {
        const auto& batch = redis_.batch_keys[i];
        ASSERT_FALSE(batch.empty());
        const std::uint32_t shard = keys::shard_of_key(batch.front(), 2);
        for (const std::string& k : batch) {
            EXPECT_EQ(keys::shard_of_key(k, 2), shard) << k << " in a call to another shard";
        }
    }
    // The first shard's room keeps its says' order within its call.
    auto first = redis_.take("say");
    auto second = redis_.take("say");
    auto third = redis_.take("say");
    ASSERT_TRUE(first && second && third);
    EXPECT_NE(first->args.at(4).find("\"one\""), std::string::npos);
    EXPECT_NE(second->args.at(4).find("\"three\""), std::string::npos);
    EXPECT_NE(third->args.at(4).find("\"two\""), std::string::npos);
}

TEST_F(two_shards_test, says_wait_while_their_shards_batch_is_out_then_go_in_one_call) {
    test_client& alice = alice_in_both_rooms();
    redis_.calls.clear();
    const std::size_t before = redis_.say_batches;
    alice.send({{"type", "say"}, {"room", near_room}, {"text", "one"}});
    settle();
    ASSERT_EQ(redis_.say_batches, before + 1);
    auto one = redis_.take("say");
    ASSERT_TRUE(one);

    // While "one" is out, the near room's says wait; the far room's shard has nothing out.
    alice.send({{"type", "say"}, {"room", near_room}, {"text", "two"}});
    alice.send({{"type", "say"}, {"room", near_room}, {"text", "three"}});
    alice.send({{"type", "say"}, {"room", far_room}, {"text", "elsewhere"}});
    settle();
    ASSERT_EQ(redis_.say_batches, before + 2) << "only the far room's say went";
    auto elsewhere = redis_.take("say");
    ASSERT_TRUE(elsewhere);
    EXPECT_EQ(elsewhere->args.at(7), far_room);

    redis_.answer(*one, integer_reply(1));
    settle();
    EXPECT_EQ(redis_.say_batches, before + 3) << "two and three together, once one was answered";
    auto two = redis_.take("say");
    auto three = redis_.take("say");
    ASSERT_TRUE(two && three);
    EXPECT_NE(two->args.at(4).find("\"two\""), std::string::npos);
    EXPECT_NE(three->args.at(4).find("\"three\""), std::string::npos);

    // Another command never overtakes a say made before it: the waiting say goes first.
    redis_.calls.clear();
    alice.send({{"type", "say"}, {"room", near_room}, {"text", "four"}});
    alice.send({{"type", "typing"}, {"room", near_room}});
    settle();
    ASSERT_EQ(redis_.calls.size(), 2u);
    EXPECT_EQ(redis_.calls[0].script, "say");
    EXPECT_EQ(redis_.calls[1].argv.at(0), "SPUBLISH");
}

TEST_F(two_shards_test, a_lost_shard_detaches_only_its_rooms_and_they_catch_up_when_it_returns) {
    test_client& alice = alice_in_both_rooms();

    node_.on_shard_down(1);
    EXPECT_FALSE(node_.sequencing(far_room));
    EXPECT_TRUE(node_.sequencing(near_room)) << "a room of the first shard lost its service";
    EXPECT_TRUE(node_.health().degraded);
    EXPECT_EQ(node_.health().shards_down, 1u);
    alice.send({{"type", "say"}, {"room", far_room}, {"text", "alone"}, {"id", 1}});
    alice.send({{"type", "say"}, {"room", near_room}, {"text", "shared"}, {"id", 2}});
    settle();
    // The far room's say is served here, in a detached epoch; the near room's goes to Redis.
    ASSERT_EQ(redis_.count("say"), 1u);
    auto shared = redis_.take("say");
    EXPECT_EQ(shared->args.at(7), near_room);
    const auto detached = alice.received("joined");
    ASSERT_EQ(detached.size(), 1u);
    EXPECT_EQ(detached[0].value("room", ""), far_room);
    EXPECT_EQ(detached[0]["epoch"], node_.detached_epoch());
    EXPECT_EQ(seqs_received(alice), (std::vector<std::int64_t>{1})) << "the far room's say, numbered here";
    alice.take();

    // Back: the kept say goes to the far room's shard, then its counter is read and the room
    // starts over from its stream in the cluster's epoch.
    node_.on_shard_up(1);
    settle();
    EXPECT_FALSE(node_.health().degraded);
    auto kept = redis_.take("say");
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->args.at(7), far_room);
    EXPECT_NE(kept->args.at(4).find("\"text\":\"alone\""), std::string::npos);
    redis_.answer(*kept, integer_reply(1));
    auto position = redis_.take("room_state");
    ASSERT_TRUE(position);
    EXPECT_EQ(room_of_state_call(*position), far_room);
    redis_.answer(*position, room_state_reply(1));
    settle();
    answer_rebases({stream_entry_reply(far_room, "alice", "alone", 1, "a")});
    const auto back = alice.received("joined");
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0]["epoch"], cluster_epoch);
    EXPECT_TRUE(node_.sequencing(far_room));
}

TEST_F(two_shards_test, a_leave_made_while_the_rooms_shard_was_away_is_told_when_it_returns) {
    test_client& alice = alice_in_both_rooms();
    node_.on_shard_down(1);
    alice.send({{"type", "leave"}, {"room", far_room}});
    alice.send({{"type", "leave"}, {"room", near_room}});
    settle();
    std::vector<std::string> told;
    while (auto call = redis_.take_if("presence")) {
        told.push_back(call->args.at(0) + " " + call->args.at(3));
    }
    EXPECT_NE(std::find(told.begin(), told.end(), "L " + near_room), told.end());
    EXPECT_EQ(std::find(told.begin(), told.end(), "L " + far_room), told.end()) << "nothing goes to a shard that is away";

    node_.on_shard_up(1);
    settle();
    auto settled = redis_.take("room_members_of");
    ASSERT_TRUE(settled) << "the leave is told when the shard returns";
    EXPECT_EQ(settled->keys.at(0), keys::room_members(far_room));
    EXPECT_EQ(settled->args, (std::vector<std::string>{"a", far_room, keys::room_channel(far_room)}))
        << "this node holds nobody there now";
}

TEST_F(two_shards_test, a_shard_lost_while_the_sync_reads_it_leaves_its_rooms_for_its_return) {
    sync_begun s = begin_sync_in_both_rooms();
    ASSERT_TRUE(s.snapshot && s.near_state && s.far_state);
    node_.on_channel_message(s.snapshot->args.at(3));
    redis_.answer(*s.snapshot, snapshot_reply({}));
    redis_.answer(*s.near_state, room_state_reply(0));
    redis_.answer(*s.far_state, std::nullopt);  // lost with its shard, whose loss the link reports next
    node_.on_shard_down(1);
    settle();
    answer_rebases();
    EXPECT_FALSE(node_.degraded()) << "the sync waited for a shard that is gone";
    EXPECT_TRUE(node_.sequencing(near_room));
    EXPECT_FALSE(node_.sequencing(far_room));

    node_.on_shard_up(1);
    settle();
    auto position = redis_.take("room_state");
    ASSERT_TRUE(position);
    EXPECT_EQ(room_of_state_call(*position), far_room);
    redis_.answer(*position, room_state_reply(0));
    settle();
    answer_rebases();
    EXPECT_EQ(world_.hub().rooms().find(far_room)->log_position().first, cluster_epoch)
        << "the far room was not caught up with the cluster";
}

}  // namespace
}  // namespace parley::cluster::tests
