// Two parleyd nodes on a Redis Cluster of three masters that the test creates (cluster.mode =
// "redis-cluster", the masters given as seeds): each room's keys and channel live on the master
// of their slot, the cluster's own keys on one master, and when the test moves a room's slot to
// another master while the nodes run, the nodes follow the new slot map and the room goes on,
// nothing lost or repeated; when the master of a room's slot dies and its replica takes over,
// likewise. Both changes stay local to the masters concerned: no node is cut off as a whole, and
// a room on another master keeps the cluster's service (docs/cluster.md, "A Redis Cluster").
#include "cluster_nodes.hpp"
#include "redis_shards.hpp"
#include "test_support.hpp"

#include <map>
#include <sstream>

namespace parley::integration {
namespace {

class RedisClusterModeTest : public ::testing::Test {
protected:
    // A Redis Cluster of three masters (each with `replicas` replicas), and two nodes on it.
    void start(std::size_t replicas) {
        redis_ = std::make_unique<redis_shards>(redis_process::persistence::append_only, 3, replicas);
        for (const char* id : {"node-a", "node-b"}) {
            const std::string config = "[cluster]\n" + redis_->config_lines() + "node_id = \"" + id + "\"\n";
            nodes_[id] = start_cluster_node(id, config);
        }
    }

    void TearDown() override { stop_cluster_nodes(nodes_); }

    ws_client login_on(const std::string& id, const std::string& user) {
        ws_client client(nodes_.at(id)->port());
        client.upgrade();
        const json welcome = login_retrying(client, user, milliseconds(5000));
        if (welcome.value("type", "") != "welcome") {
            throw std::runtime_error("login of " + user + " got " + welcome.dump());
        }
        return client;
    }

    static std::string line(const redis_process& server, const std::vector<std::string>& argv) {
        std::string text = server.command_text(argv);
        while (!text.empty() && text.back() == '\n') {
            text.pop_back();
        }
        return text;
    }

    // Moves every key of `slot` from one master to another and gives it the slot, as
    // redis-cli --cluster reshard does: importing and migrating, MIGRATE, then the new owner.
    void move_slot(const std::string& slot, redis_process& from, redis_process& to) {
        const std::string from_id = line(from, {"CLUSTER", "MYID"});
        const std::string to_id = line(to, {"CLUSTER", "MYID"});
        ASSERT_EQ(line(to, {"CLUSTER", "SETSLOT", slot, "IMPORTING", from_id}), "OK");
        ASSERT_EQ(line(from, {"CLUSTER", "SETSLOT", slot, "MIGRATING", to_id}), "OK");
        const std::string listed = from.command_text({"CLUSTER", "GETKEYSINSLOT", slot, "1000"});
        std::vector<std::string> migrate = {"MIGRATE", "127.0.0.1", std::to_string(to.port()), "", "0", "5000", "KEYS"};
        std::istringstream keys(listed);
        for (std::string key; std::getline(keys, key);) {
            migrate.push_back(key);
        }
        ASSERT_GT(migrate.size(), 7u) << "the room's slot holds its keys";
        ASSERT_EQ(line(from, migrate), "OK");
        for (std::size_t i = 0; i < redis_->count(); ++i) {
            ASSERT_EQ(line(redis_->at(i), {"CLUSTER", "SETSLOT", slot, "NODE", to_id}), "OK");
        }
    }

    std::unique_ptr<redis_shards> redis_;
    std::map<std::string, std::unique_ptr<daemon_process>> nodes_;
};

TEST_F(RedisClusterModeTest, KeysLiveOnTheirSlotsMastersAndARoomFollowsItsMovedSlot) {
    start(0);
    // The room on a master other than the one holding the cluster's own keys, so that its move
    // is local to the two masters concerned (docs/cluster.md, "A Redis Cluster").
    std::string lobby;
    for (int n = 0; lobby.empty(); ++n) {
        const std::string name = "lobby-" + std::to_string(n);
        if (&redis_->holding(room_key(name, ":seq")) != &redis_->first()) {
            lobby = name;
        }
    }
    ws_client alice = login_on("node-a", "alice");
    ws_client bob = login_on("node-b", "bob");
    join_room(alice, lobby);
    join_room(bob, lobby);
    for (const char* text : {"one", "two"}) {
        ASSERT_EQ(call(alice, {{"type", "say"}, {"room", lobby}, {"text", text}, {"id", text}}).value("type", ""),
                  "ack");
    }
    read_until(bob, is_chat("two"));

    // The room's keys on its slot's master only; the cluster's own keys on the first.
    const std::string seq_key = room_key(lobby, ":seq");
    redis_process& owner = redis_->holding(seq_key);
    EXPECT_EQ(line(owner, {"GET", seq_key}), "2");
    std::size_t holders = 0;
    for (std::size_t i = 0; i < redis_->count(); ++i) {
        holders += line(redis_->at(i), {"EXISTS", seq_key}) == "1" ? 1 : 0;
    }
    EXPECT_EQ(holders, 1u);
    EXPECT_EQ(line(redis_->first(), {"SISMEMBER", "parley:{cluster}:nodes", "node-b"}), "1");
    // The room's channel is a sharded one, on the same master (both nodes feed the room).
    EXPECT_EQ(owner.command_text({"PUBSUB", "SHARDNUMSUB", room_key(lobby, ":events")}),
              room_key(lobby, ":events") + "\n2\n");

    // The slot moves to the third master while the nodes run.
    redis_process* target = nullptr;
    for (std::size_t i = 0; i < redis_->count() && target == nullptr; ++i) {
        if (&redis_->at(i) != &owner && &redis_->at(i) != &redis_->first()) {
            target = &redis_->at(i);
        }
    }
    const std::size_t lines_a = nodes_.at("node-a")->line_count();
    const std::size_t lines_b = nodes_.at("node-b")->line_count();
    const std::string slot = line(owner, {"CLUSTER", "KEYSLOT", seq_key});
    move_slot(slot, owner, *target);
    ASSERT_EQ(&redis_->holding(seq_key), target);

    // Said right away: refused where it was sent (MOVED) or the channel dropped, then the node
    // reads the new map, takes the two masters down and up again (their rooms resync), and
    // stores it on the new master, once.
    alice.send_json({{"type", "say"}, {"room", lobby}, {"text", "three"}, {"id", "three"}});
    EXPECT_TRUE(nodes_.at("node-a")->wait_for_line("reading the redis cluster's slot map again", lines_a,
                                                   milliseconds(10000)));
    const std::vector<json> to_bob = read_until(bob, is_chat("three"), milliseconds(15000));
    ASSERT_TRUE(nodes_.at("node-a")->wait_for_line("answers again", lines_a, milliseconds(15000)));
    ASSERT_EQ(call(alice, {{"type", "say"}, {"room", lobby}, {"text", "four"}, {"id", "four"}}).value("type", ""),
              "ack");
    const std::vector<json> later = read_until(bob, is_chat("four"), milliseconds(10000));

    std::vector<std::pair<std::int64_t, std::string>> said;
    for (const auto* frames : {&to_bob, &later}) {
        for (const json& m : *frames) {
            if (m.value("type", "") == "message") {
                said.emplace_back(m["seq"].get<std::int64_t>(), m.value("text", ""));
            }
        }
    }
    const std::vector<std::pair<std::int64_t, std::string>> expected = {{3, "three"}, {4, "four"}};
    EXPECT_EQ(said, expected) << "numbered on from the moved counter, each once";
    EXPECT_EQ(line(*target, {"GET", seq_key}), "4");
    EXPECT_EQ(line(owner, {"CLUSTER", "COUNTKEYSINSLOT", slot}), "0") << "nothing written where it was";

    // Joined afresh on node-b, the history has all four, once.
    ws_client carol = login_on("node-b", "carol");
    const json joined = join_room(carol, lobby);
    ASSERT_EQ(joined.value("history", json::array()).size(), 4u) << joined;
    EXPECT_EQ(joined["history"][2].value("text", ""), "three");
    for (const auto& [id, first_line] : {std::pair{"node-a", lines_a}, std::pair{"node-b", lines_b}}) {
        const std::vector<std::string> output = nodes_.at(id)->output();
        for (std::size_t i = first_line; i < output.size(); ++i) {
            EXPECT_EQ(output[i].find("lost redis;"), std::string::npos) << id << " was cut off as a whole: " << output[i];
        }
    }
}

TEST_F(RedisClusterModeTest, AFailoverDetachesOnlyTheLostMastersRoomsAndLosesNothing) {
    start(1);
    // The room lives on a master other than the one holding the cluster's own keys (losing that
    // one is losing Redis as a whole); the hall on a master that stays up.
    std::string room;
    for (int n = 0; room.empty(); ++n) {
        const std::string name = "lobby-" + std::to_string(n);
        if (&redis_->holding(room_key(name, ":seq")) != &redis_->first()) {
            room = name;
        }
    }
    redis_process& master = redis_->holding(room_key(room, ":seq"));
    std::string hall;
    for (int n = 0; hall.empty(); ++n) {
        const std::string name = "hall-" + std::to_string(n);
        if (&redis_->holding(room_key(name, ":seq")) != &master) {
            hall = name;
        }
    }
    ws_client alice = login_on("node-a", "alice");
    ws_client bob = login_on("node-b", "bob");
    for (const std::string& name : {room, hall}) {
        join_room(alice, name);
        join_room(bob, name);
        ASSERT_EQ(call(alice, {{"type", "say"}, {"room", name}, {"text", "before"}, {"id", "b-" + name}}).value("type", ""),
                  "ack");
        read_until(bob, is_chat("before"));
    }

    // The master of the room's slot dies; after the cluster's node timeout its replica takes
    // the slot over.
    const std::string seq_key = room_key(room, ":seq");
    const std::size_t lines_a = nodes_.at("node-a")->line_count();
    const std::size_t lines_b = nodes_.at("node-b")->line_count();
    master.stop();
    ASSERT_TRUE(nodes_.at("node-a")->wait_for_line("lost redis shard", lines_a, milliseconds(10000)));
    // Said while the cluster cannot serve the slot: served on node-a alone, and kept.
    alice.send_json({{"type", "say"}, {"room", room}, {"text", "during"}, {"id", "d"}});
    // The hall keeps the cluster's service meanwhile: numbered on by Redis, and heard on node-b.
    alice.send_json({{"type", "say"}, {"room", hall}, {"text", "hall during"}, {"id", "hd"}});
    const std::vector<json> to_bob = read_until(bob, is_chat("hall during"), milliseconds(10000));
    EXPECT_EQ(to_bob.back().value("seq", std::int64_t{0}), 2) << to_bob.back();

    // The promoted replica is a shard of its own: the room resyncs when it answers, and the node
    // as a whole was never cut off.
    for (const char* id : {"node-a", "node-b"}) {
        ASSERT_TRUE(nodes_.at(id)->wait_for_line("following the redis cluster's new slot map",
                                                 id == std::string("node-a") ? lines_a : lines_b, milliseconds(30000)))
            << nodes_.at(id)->tail(30);
        ASSERT_TRUE(nodes_.at(id)->wait_for_line("answers again", id == std::string("node-a") ? lines_a : lines_b,
                                                 milliseconds(30000)))
            << nodes_.at(id)->tail(30);
    }
    for (const char* id : {"node-a", "node-b"}) {
        for (const std::string& line : nodes_.at(id)->output()) {
            EXPECT_EQ(line.find("lost redis;"), std::string::npos) << id << " was cut off as a whole: " << line;
        }
    }
    redis_process& promoted = redis_->holding(seq_key);
    ASSERT_NE(&promoted, &master) << "the replica serves the slot now";

    // Everything alice heard since the master died, up to her own "after".
    alice.send_json({{"type", "say"}, {"room", room}, {"text", "after"}, {"id", "a"}});
    const std::vector<json> later = read_until(alice, is_chat("after"), milliseconds(10000));
    EXPECT_EQ(count_if(later, [](const json& m) { return m.value("type", "") == "ack" && m.value("re", json()) == "a"; }),
              1u);
    read_until(bob, is_chat("after"), milliseconds(10000));
    // Only the lost master's room started over under alice (a detached epoch, then the cluster's
    // history back); the hall never did.
    for (const json& m : later) {
        if (m.value("type", "") == "joined" && !m.contains("re")) {
            EXPECT_NE(m.value("room", ""), hall) << "the hall started over: " << m;
        }
    }
    EXPECT_GE(count_if(later,
                       [&](const json& m) {
                           return m.value("type", "") == "joined" && !m.contains("re") && m.value("room", "") == room;
                       }),
              1u)
        << "the room's members are told it detached";

    // The room's history on the new master holds each message once, in one numbering.
    ws_client carol = login_on("node-b", "carol");
    const json joined = join_room(carol, room);
    std::vector<std::string> texts;
    std::vector<std::int64_t> seqs;
    for (const json& m : joined.value("history", json::array())) {
        texts.push_back(m.value("text", ""));
        seqs.push_back(m.value("seq", std::int64_t{0}));
    }
    const std::vector<std::string> expected = {"before", "during", "after"};
    EXPECT_EQ(texts, expected) << joined;
    const std::vector<std::int64_t> numbered = {1, 2, 3};
    EXPECT_EQ(seqs, numbered) << joined;
}

}  // namespace
}  // namespace parley::integration
