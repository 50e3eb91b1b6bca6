// A node on a Redis Cluster, with Redis played by the test: a script's keys must share one slot,
// so the says of one pass go in one call per partition, a name's lease and the node's users are
// written in two steps, and a sync reads every fed room's seq with a GET of its own. And the slot
// map read from CLUSTER SLOTS.

#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/slot_map.hpp"
#include "tests/unit/cluster/node_fixture.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace parley::cluster::tests {
namespace {

using rooms::tests::json;
using rooms::tests::test_client;

redis_reply range(long long first, long long last, const std::string& host, long long port) {
    redis_reply master = array_reply({string_reply(host), integer_reply(port), string_reply("id-" + std::to_string(port))});
    redis_reply replica = array_reply({string_reply(host), integer_reply(port + 1000), string_reply("replica")});
    return array_reply({integer_reply(first), integer_reply(last), std::move(master), std::move(replica)});
}

TEST(slot_map, every_slot_has_its_master_and_the_cluster_keys_master_comes_first) {
    const std::uint16_t own = key_slot(keys::epoch);
    // Three masters; the one serving the cluster's own slot is met last in the answer, and one
    // announces no host (it does not know its address): it gets the host that was asked.
    std::vector<redis_reply> ranges;
    ranges.push_back(range(0, 5000, "10.0.0.1", 7001));
    ranges.push_back(range(5001, own - 1, "", 7002));
    ranges.push_back(range(own, own, "10.0.0.3", 7003));
    ranges.push_back(range(own + 1, 16383, "10.0.0.1", 7001));
    std::string why;
    const auto map = read_cluster_slots(array_reply(std::move(ranges)), "10.0.0.9", why);
    ASSERT_TRUE(map) << why;
    ASSERT_EQ(map->masters.size(), 3u);
    EXPECT_EQ(map->masters[0].port, 7003) << "the master of the cluster's own keys is the first shard";
    EXPECT_EQ(map->masters[1].port, 7001);
    EXPECT_EQ(map->masters[2].host, "10.0.0.9");
    EXPECT_EQ(map->masters[2].port, 7002);
    ASSERT_EQ(map->owner.size(), slot_count);
    EXPECT_EQ(map->owner[0], 1);
    EXPECT_EQ(map->owner[5001], 2);
    EXPECT_EQ(map->owner[own], 0);
    EXPECT_EQ(map->owner[16383], 1);
}

TEST(slot_map, a_slot_without_a_master_or_a_malformed_answer_is_not_a_map) {
    std::string why;
    std::vector<redis_reply> ranges;
    ranges.push_back(range(0, 100, "10.0.0.1", 7001));
    ranges.push_back(range(102, 16383, "10.0.0.2", 7002));
    EXPECT_FALSE(read_cluster_slots(array_reply(std::move(ranges)), "h", why));
    EXPECT_NE(why.find("slot 101"), std::string::npos) << why;

    EXPECT_FALSE(read_cluster_slots(redis_reply{redis_reply::kind::error, 0, "ERR This instance has cluster support "
                                                                            "disabled", {}},
                                    "h", why));
    EXPECT_NE(why.find("cluster support disabled"), std::string::npos) << why;

    std::vector<redis_reply> backwards;
    backwards.push_back(range(200, 100, "10.0.0.1", 7001));
    EXPECT_FALSE(read_cluster_slots(array_reply(std::move(backwards)), "h", why));
    EXPECT_FALSE(read_cluster_slots(string_reply("no"), "h", why));
}

// Two rooms whose keys live in different slots.
const std::string room_a = "lobby";
const std::string room_b = [] {
    for (int n = 0;; ++n) {
        std::string name = "hall-" + std::to_string(n);
        if (key_slot(keys::room_seq(name)) != key_slot(keys::room_seq(room_a))) {
            return name;
        }
    }
}();

class per_slot_test : public cluster_node_test {
protected:
    per_slot_test() { redis_.per_slot = true; }

    // Logs a user in: the lease is claimed alone (its user's slot), then the node's users are
    // written (the cluster's slot).
    test_client& login_in_two_steps(const std::string& user) {
        test_client& c = world_.connect(0);
        c.send({{"type", "login"}, {"user", user}});
        settle();
        EXPECT_EQ(redis_.count("claim_name"), 0u) << "no script spans the lease's and the node's slots";
        auto claim = redis_.take("claim_lease");
        EXPECT_TRUE(claim);
        if (!claim) {
            return c;
        }
        EXPECT_EQ(claim->keys, (std::vector<std::string>{keys::name_lease(user), keys::users_index(partition_of(user))}));
        redis_.answer(*claim, integer_reply(1));
        settle();
        auto users = redis_.take("node_user");
        EXPECT_TRUE(users);
        if (users) {
            EXPECT_EQ(users->keys, std::vector<std::string>{keys::node_users("a")});
            EXPECT_EQ(users->args.at(0), "+");
            EXPECT_EQ(users->args.at(1), user);
        }
        EXPECT_EQ(c.take_one().value("type", ""), "welcome");
        return c;
    }
};

TEST_F(per_slot_test, no_script_spans_two_slots_and_the_says_of_one_pass_go_in_one_call_per_partition) {
    sync({}, {});
    test_client& alice = login_in_two_steps("alice");
    join_fed(alice, room_a);
    join_fed(alice, room_b);
    alice.take();

    const std::size_t before = redis_.batch_keys.size();
    alice.send({{"type", "say"}, {"room", room_a}, {"text", "one"}, {"id", 1}});
    alice.send({{"type", "say"}, {"room", room_b}, {"text", "two"}, {"id", 2}});
    alice.send({{"type", "say"}, {"room", room_a}, {"text", "three"}, {"id", 3}});
    settle();
    ASSERT_EQ(redis_.batch_keys.size(), before + 2) << "one call per partition";
    std::set<std::uint16_t> slots;
    for (std::size_t i = before; i < redis_.batch_keys.size(); ++i) {
        slots.insert(key_slot(redis_.batch_keys[i].front()));
    }
    EXPECT_EQ(slots.size(), 2u);
    // Each room's says keep their order within its call.
    auto first = redis_.take("say");
    ASSERT_TRUE(first);
    EXPECT_EQ(first->keys.at(0), keys::room_seq(room_a));
    EXPECT_NE(first->args.at(4).find("one"), std::string::npos);

    // Leaving releases the name in two steps as well.
    world_.disconnect(alice);
    settle();
    auto released = redis_.take("release_leases");
    ASSERT_TRUE(released);
    EXPECT_EQ(released->keys,
              (std::vector<std::string>{keys::name_lease("alice"), keys::users_index(partition_of("alice"))}));
    auto gone = redis_.take("node_user");
    ASSERT_TRUE(gone);
    EXPECT_EQ(gone->args.at(0), "-");
    EXPECT_TRUE(redis_.cross_slot_calls.empty()) << redis_.cross_slot_calls.front().front();
}

TEST_F(per_slot_test, a_sync_reads_every_fed_rooms_seq_apart_from_the_snapshot) {
    sync({}, {});
    test_client& alice = login_in_two_steps("alice");
    join_fed(alice, room_a);
    alice.take();
    // Redis goes and returns: the sync's snapshot reads the cluster's slot only.
    node_.on_redis_down();
    settle();
    redis_.answer_all(std::nullopt);
    settle();
    node_.on_redis_up();
    settle();
    auto snapshot = redis_.take("snapshot");
    ASSERT_TRUE(snapshot);
    EXPECT_TRUE(snapshot->keys.empty()) << "the snapshot script runs in the cluster's slot";
    auto get = redis_.take("room_state");
    ASSERT_TRUE(get);
    EXPECT_EQ(room_of_state_call(*get), room_a);
    node_.on_channel_message(snapshot->args.at(3));
    redis_.answer(*snapshot, snapshot_reply({}));
    settle();
    EXPECT_TRUE(node_.degraded()) << "in sync before the room's seq was read";
    redis_.answer(*get, room_state_reply(0));
    settle();
    answer_rebases();
    EXPECT_FALSE(node_.degraded());
    EXPECT_TRUE(redis_.cross_slot_calls.empty());
}

}  // namespace
}  // namespace parley::cluster::tests
