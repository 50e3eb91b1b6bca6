// The cluster's keys in Redis, on a real redis-server: every key of a room, a conversation or a
// user carries its partition's hash tag ("parley:{pN}:room:ROOM:log", docs/cluster.md), and a
// Redis written by the first layout (no partitions) is moved over when a node of this version
// connects, so a cluster upgraded in place keeps its history.

#include "redis_process.hpp"
#include "test_support.hpp"

#include <cstdint>

namespace parley::integration {
namespace {

// The partitioned name of a key as docs/cluster.md gives it: "parley:{pN}:" + rest, N from the
// documented hash (FNV-1a, 64 bits, of the owner's name, modulo 128), computed here without the
// daemon's code.
std::string partitioned(const std::string& owner, const std::string& rest) {
    std::uint64_t hash = 14695981039346656037ULL;
    for (const unsigned char c : owner) {
        hash ^= c;
        hash *= 1099511628211ULL;
    }
    return "parley:{p" + std::to_string(hash % 128) + "}:" + rest;
}

class ClusterLayoutTest : public ::testing::Test {
protected:
    void SetUp() override { redis_ = std::make_unique<redis_process>(redis_process::persistence::none); }
    void TearDown() override {
        if (node_) {
            const exit_status status = node_->stop();
            EXPECT_TRUE(status.exited && status.code == 0) << "on SIGTERM: " << status.describe();
            if (HasFailure()) {
                std::cerr << "---- node (last lines):\n" << node_->tail(40);
            }
        }
    }
    void start_node() {
        const std::string config = "[cluster]\nredis = \"redis://127.0.0.1:" + std::to_string(redis_->port()) +
                                   "\"\nnode_id = \"node-a\"\n";
        node_ = std::make_unique<daemon_process>(relaxed_rate_args(), config);
        ASSERT_TRUE(node_->wait_for_line("cluster: node node-a in sync", 0, milliseconds(15000))) << node_->tail(30);
    }
    // Redis's reply as text (each element on a line of its own).
    std::string redis(const std::vector<std::string>& argv) const { return redis_->command_text(argv); }

    std::unique_ptr<redis_process> redis_;
    std::unique_ptr<daemon_process> node_;
};

TEST_F(ClusterLayoutTest, ARoomsKeysAndChannelCarryItsPartition) {
    start_node();
    ws_client alice(node_->port());
    alice.upgrade();
    ASSERT_EQ(call(alice, {{"type", "login"}, {"user", "alice"}, {"id", "in"}}).value("type", ""), "welcome");
    join_room(alice, "hall");
    const json ack = call(alice, {{"type", "say"}, {"room", "hall"}, {"text", "tagged"}, {"id", "s"}});
    ASSERT_EQ(ack.value("type", ""), "ack") << ack;
    EXPECT_EQ(redis({"GET", partitioned("hall", "room:hall:seq")}), "1\n");
    EXPECT_NE(redis({"XRANGE", partitioned("hall", "room:hall:log"), "-", "+"}).find("tagged"), std::string::npos);
    EXPECT_EQ(redis({"EXISTS", "parley:room:hall:log"}), "0\n");
    // The room's channel too: the node subscribed to it while alice is in the room.
    // A sharded channel (SSUBSCRIBE), which a Redis Cluster keeps on the room's own master.
    EXPECT_NE(redis({"PUBSUB", "SHARDCHANNELS", "parley:*"}).find(partitioned("hall", "room:hall:events")),
              std::string::npos)
        << redis({"PUBSUB", "SHARDCHANNELS", "parley:*"});
    // The cluster's own keys share the tag {cluster}: one slot.
    EXPECT_EQ(redis({"SISMEMBER", "parley:{cluster}:nodes", "node-a"}), "1\n");
    EXPECT_NE(redis({"GET", "parley:{cluster}:epoch"}), "");
    EXPECT_EQ(redis({"EXISTS", "parley:nodes", "parley:epoch"}), "0\n");
    EXPECT_EQ(redis({"GET", "parley:layout"}), "3\n");
}

TEST_F(ClusterLayoutTest, KeysOfTheFirstLayoutMoveToTheirPartitionsAndTheHistoryStays) {
    // Messages stored by this version, then put back under the first layout's names: what a
    // Redis of a cluster that ran the earlier version holds.
    start_node();
    {
        ws_client alice(node_->port());
        alice.upgrade();
        ASSERT_EQ(call(alice, {{"type", "login"}, {"user", "alice"}, {"id", "in"}}).value("type", ""), "welcome");
        join_room(alice, "hall");
        for (const char* text : {"before the upgrade", "and once more"}) {
            ASSERT_EQ(call(alice, {{"type", "say"}, {"room", "hall"}, {"text", text}, {"id", text}}).value("type", ""),
                      "ack");
        }
    }
    ASSERT_EQ(node_->stop().code, 0);
    node_.reset();
    for (const std::string kind : {"seq", "log"}) {
        ASSERT_EQ(redis({"RENAME", partitioned("hall", "room:hall:" + kind), "parley:room:hall:" + kind}), "OK\n");
    }
    redis({"HSET", "parley:user:ann:read", "hall", "2", "dm:ann:bob", "1"});
    redis({"SET", "parley:dm:ann:bob:seq", "1"});
    redis({"SADD", "parley:rooms", "hall"});
    redis({"DEL", "parley:layout"});
    // The second layout's cluster keys had no tag: the epoch is kept, the nodes are written again.
    const std::string epoch = redis({"GET", "parley:{cluster}:epoch"});
    ASSERT_NE(epoch, "");
    ASSERT_EQ(redis({"RENAME", "parley:{cluster}:epoch", "parley:epoch"}), "OK\n");
    redis({"SADD", "parley:nodes", "node-old"});
    redis({"SET", "parley:node:node-old", "1"});

    start_node();
    EXPECT_TRUE(node_->wait_for_line("moved 5 keys of an earlier layout", 0, milliseconds(5000))) << node_->tail(20);
    EXPECT_EQ(redis({"GET", "parley:{cluster}:epoch"}), epoch);
    EXPECT_EQ(redis({"EXISTS", "parley:epoch", "parley:nodes", "parley:node:node-old"}), "0\n");
    ws_client bob(node_->port());
    bob.upgrade();
    ASSERT_EQ(call(bob, {{"type", "login"}, {"user", "bob"}, {"id", "in"}}).value("type", ""), "welcome");
    const json joined = join_room(bob, "hall");
    ASSERT_EQ(joined.value("history", json::array()).size(), 2u) << joined;
    EXPECT_EQ(joined["history"][0].value("text", ""), "before the upgrade");
    EXPECT_EQ(joined["history"][1].value("seq", 0), 2);
    const json ack = call(bob, {{"type", "say"}, {"room", "hall"}, {"text", "after"}, {"id", "s"}});
    EXPECT_EQ(ack.value("seq", 0), 3) << "numbered on from the moved counter: " << ack;

    EXPECT_EQ(redis({"EXISTS", "parley:room:hall:seq", "parley:room:hall:log", "parley:user:ann:read",
                     "parley:dm:ann:bob:seq", "parley:rooms"}),
              "0\n");
    EXPECT_EQ(redis({"HGET", partitioned("ann", "user:ann:read"), "dm:ann:bob"}), "1\n");
    EXPECT_EQ(redis({"GET", partitioned("dm:ann:bob", "dm:ann:bob:seq")}), "1\n");

    // Moved once: a node that connects again finds the layout current.
    ASSERT_EQ(node_->stop().code, 0);
    start_node();
    EXPECT_FALSE(node_->wait_for_line("keys of an earlier layout", 0, milliseconds(300)));
    EXPECT_EQ(redis({"GET", "parley:layout"}), "3\n");
}

}  // namespace
}  // namespace parley::integration
