// Users and live dms across nodes (cluster_node_link.cpp, cluster_node_presence.cpp), with Redis
// played by the test: a name is listed in its partition's users index with its lease, and its
// node reads the user's own channel; `users` is read from the partitions and kept a second; a
// live dm to a user of another node goes on that user's channel, and the sender hears whether
// anyone got it.

#include "rooms/cluster/cluster_keys.hpp"
#include "tests/unit/cluster/node_fixture.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace parley::cluster::tests {
namespace {

using rooms::tests::is_error;
using rooms::tests::json;
using rooms::tests::test_client;

bool subscribed_to(const fake_redis& redis, const std::string& channel) {
    return std::find(redis.subscribed.begin(), redis.subscribed.end(), channel) != redis.subscribed.end();
}

TEST_F(cluster_node_test, a_name_is_listed_in_its_partition_and_its_channel_read_while_held) {
    sync({}, {});
    test_client& alice = start_login("alice");
    // (start_login answered the claim; what it was sent is checked through the release below.)
    EXPECT_EQ(alice.take_one().value("type", ""), "welcome");
    EXPECT_TRUE(subscribed_to(redis_, keys::user_channel("alice"))) << "alice's dms would not reach this node";

    world_.disconnect(alice);
    settle();
    auto released = redis_.take("release_name");
    ASSERT_TRUE(released);
    EXPECT_EQ(released->keys, (std::vector<std::string>{keys::name_lease("alice"), keys::node_users("a"),
                                                        keys::users_index(partition_of("alice"))}));
    EXPECT_FALSE(subscribed_to(redis_, keys::user_channel("alice")));
}

TEST_F(cluster_node_test, the_user_list_is_read_from_the_partitions_merged_and_kept_a_second) {
    sync({}, {});
    test_client& alice = login("alice");
    alice.send({{"type", "users"}, {"id", 1}});
    settle();
    auto read = redis_.take("users_index");
    ASSERT_TRUE(read);
    EXPECT_EQ(read->keys.size(), partition_count);
    EXPECT_EQ(read->keys.front(), keys::users_index(0));
    redis_.answer(*read, strings_reply({"bob", "b", "alice", "a", "carol", "c"}));
    settle();
    EXPECT_EQ(alice.take_one()["users"], (json{"alice", "bob", "carol"}));
    EXPECT_EQ(node_.health().remote_users, 2u);

    alice.send({{"type", "users"}, {"id", 2}});
    settle();
    EXPECT_EQ(redis_.count("users_index"), 0u) << "read again within the second";
    EXPECT_EQ(alice.take_one()["users"], (json{"alice", "bob", "carol"}));
}

TEST_F(cluster_node_test, a_live_dm_goes_on_the_recipients_channel_and_the_sender_hears_if_it_arrived) {
    sync({}, {});
    test_client& alice = login("alice");
    alice.send({{"type", "dm"}, {"to", "bob"}, {"text", "psst"}, {"id", 1}});
    settle();
    EXPECT_TRUE(alice.take().empty()) << "answered before anyone got it";
    auto sent = redis_.take("SPUBLISH");
    ASSERT_TRUE(sent);
    EXPECT_EQ(sent->argv.at(1), keys::user_channel("bob"));
    redis_.answer(*sent, integer_reply(1));
    settle();
    auto mine = alice.take();
    ASSERT_EQ(mine.size(), 2u);
    EXPECT_EQ(mine[0].value("text", ""), "psst");
    EXPECT_EQ(mine[1].value("type", ""), "ack");

    alice.send({{"type", "dm"}, {"to", "nobody"}, {"text", "hi"}, {"id", 2}});
    settle();
    auto nobody = redis_.take("SPUBLISH");
    ASSERT_TRUE(nobody);
    redis_.answer(*nobody, integer_reply(0));  // no node reads nobody's channel
    settle();
    EXPECT_TRUE(is_error(alice.take_one(), "user_not_found", 2));
}

TEST_F(cluster_node_test, a_dm_from_a_users_channel_reaches_the_user_here_even_during_a_sync) {
    sync({}, {});
    test_client& bob = login("bob");
    node_.on_redis_down();
    settle();
    redis_.answer_all(std::nullopt);
    node_.on_redis_up();
    settle();
    ASSERT_GT(redis_.count("snapshot"), 0u) << "the sync is under way";
    const auto dm = protocol::encode_dm("alice", "bob", "hello", 1234);
    node_.on_channel_message(format_event(event_type::dm, "b", "bob", "bob", json_of(dm)));
    settle();
    EXPECT_EQ(bob.take_one(), json::parse(json_of(dm)));
}

}  // namespace
}  // namespace parley::cluster::tests
