// Two parleyd nodes in token mode over two standalone redis-servers (cluster.redis lists both):
// each room lives on the shard of its partition, the cluster's own data (names, presence,
// direct conversations, read markers) on the first, and everything a user sees is the same as
// over one Redis (docs/cluster.md, "Several Redis servers").
#include "cluster_nodes.hpp"
#include "redis_shards.hpp"
#include "run_parleyd.hpp"
#include "temp_dir.hpp"
#include "test_support.hpp"
#include "tests/token_minter.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <map>

namespace parley::integration {
namespace {

using test_tokens::token_for;

class ClusterShardsTest : public ::testing::Test {
protected:
    void SetUp() override {
        for (auto& shard : shards_) {
            shard = std::make_unique<redis_process>(redis_process::persistence::append_only);
        }
        for (const char* id : {"node-a", "node-b"}) {
            start_node(id);
        }
    }

    void TearDown() override { stop_cluster_nodes(nodes_); }

    void start_node(const std::string& id) {
        const std::string config = "[cluster]\nredis = [\"redis://127.0.0.1:" + std::to_string(shards_[0]->port()) +
                                   "\", \"redis://127.0.0.1:" + std::to_string(shards_[1]->port()) +
                                   "\"]\nnode_id = \"" + id + "\"\n[auth]\nmode = \"token\"\ntoken_secret = \"" +
                                   test_tokens::token_secret + "\"\n";
        auto node = start_cluster_node(id, config);
        nodes_[id] = std::move(node);
    }

    // Logs user in on node `id` with a token; returns the client and its welcome. A name
    // released on another node a moment ago may still be held there: asked again, bounded.
    std::pair<ws_client, json> login_on(const std::string& id, const std::string& user) {
        ws_client client(nodes_.at(id)->port());
        client.upgrade();
        json welcome = login_retrying(client, user, milliseconds(5000), token_for(user));
        if (welcome.value("type", "") != "welcome") {
            throw std::runtime_error("login of " + user + " on " + id + " got " + welcome.dump());
        }
        return {std::move(client), std::move(welcome)};
    }

    std::string metrics_of(const std::string& id) {
        ws_client client(nodes_.at(id)->port());
        return client.raw_http("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    }

    // What the shard `i` holds under key (GET), "" when nothing.
    std::string get(std::size_t i, const std::string& key) const {
        std::string text = shards_[i]->command_text({"GET", key});
        while (!text.empty() && text.back() == '\n') {
            text.pop_back();
        }
        return text;
    }

    std::array<std::unique_ptr<redis_process>, 2> shards_;
    std::map<std::string, std::unique_ptr<daemon_process>> nodes_;
};

// Reads until count `message` frames have come (other frames, presence and moderation, pass).
std::vector<json> read_said(ws_client& client, std::size_t count) {
    std::vector<json> said;
    while (said.size() < count) {
        for (json& m : read_until(client, is_type("message"), milliseconds(10000))) {
            if (m.value("type", "") == "message") {
                said.push_back(std::move(m));
            }
        }
    }
    return said;
}

// The seqs and texts of the `message` frames among messages, in arrival order.
std::vector<std::pair<std::int64_t, std::string>> said_in(const std::vector<json>& messages, const std::string& room) {
    std::vector<std::pair<std::int64_t, std::string>> out;
    for (const json& m : messages) {
        if (m.value("type", "") == "message" && m.value("room", "") == room) {
            out.emplace_back(m["seq"].get<std::int64_t>(), m.value("text", ""));
        }
    }
    return out;
}

TEST_F(ClusterShardsTest, EachRoomLivesOnItsShardAndItsSaysReachEveryNodeOnceInOrder) {
    const std::string first = room_on_shard("hall", 0);
    const std::string second = room_on_shard("hall", 1);
    auto [alice, alice_welcome] = login_on("node-a", "alice");
    auto [bob, bob_welcome] = login_on("node-b", "bob");
    for (const std::string& room : {first, second}) {
        join_room(alice, room);
        join_room(bob, room);
        read_until(alice, [&room](const json& m) {
            return m.value("type", "") == "presence" && m.value("user", "") == "bob" && m.value("room", "") == room;
        });
    }

    // Says from both nodes into both rooms, interleaved.
    constexpr int rounds = 10;
    for (int i = 0; i < rounds; ++i) {
        for (const std::string& room : {first, second}) {
            alice.send_json({{"type", "say"}, {"room", room}, {"text", "a" + std::to_string(i)}});
            bob.send_json({{"type", "say"}, {"room", room}, {"text", "b" + std::to_string(i)}});
        }
    }
    const std::size_t each = 4 * rounds;  // every message of both rooms reaches both members
    const std::vector<json> at_alice = read_said(alice, each);
    const std::vector<json> at_bob = read_said(bob, each);
    for (const std::string& room : {first, second}) {
        const auto seen_a = said_in(at_alice, room);
        const auto seen_b = said_in(at_bob, room);
        ASSERT_EQ(seen_a.size(), static_cast<std::size_t>(2 * rounds)) << room;
        EXPECT_EQ(seen_a, seen_b) << room << ": one order on both nodes";
        // Seq 1 is the room's ownership by its maker (a set_role event); the says follow it.
        for (std::size_t i = 0; i < seen_a.size(); ++i) {
            EXPECT_EQ(seen_a[i].first, static_cast<std::int64_t>(i + 2)) << room << ": numbered once, without gaps";
        }
    }

    // The room's counter and stream are on its own shard, and nothing of it on the other.
    for (const auto& [room, home] : {std::pair{first, 0}, std::pair{second, 1}}) {
        EXPECT_EQ(get(home, room_key(room, ":seq")), std::to_string(2 * rounds + 1)) << room;
        EXPECT_EQ(get(1 - home, room_key(room, ":seq")), "") << room << " has a counter on the other shard";
        EXPECT_EQ(shards_[1 - home]->command_text({"EXISTS", room_key(room, ":log")}), "0\n") << room;
    }
    // Names and the cluster's own keys are on the first shard only.
    EXPECT_EQ(shards_[0]->command_text({"SISMEMBER", "parley:{cluster}:nodes", "node-b"}), "1\n");
    EXPECT_EQ(shards_[1]->command_text({"EXISTS", "parley:{cluster}:nodes"}), "0\n");

    // History read through either node is the shard's.
    const json page = call(bob, {{"type", "history"}, {"room", second}, {"limit", 100}, {"id", 99}});
    ASSERT_GE(page.value("messages", json::array()).size(), static_cast<std::size_t>(2 * rounds)) << page;
    EXPECT_EQ(page["messages"].back().value("seq", 0), 2 * rounds + 1);
}

TEST_F(ClusterShardsTest, MarkersAndConversationsSpanTheShards) {
    const std::string elsewhere = room_on_shard("den", 1);
    {
        auto [carol, welcome] = login_on("node-a", "carol");
        auto [dave, dave_welcome] = login_on("node-b", "dave");
        join_room(carol, elsewhere);
        join_room(dave, elsewhere);
        for (int i = 1; i <= 3; ++i) {
            ASSERT_EQ(call(dave, {{"type", "say"}, {"room", elsewhere}, {"text", "m" + std::to_string(i)}, {"id", i}})
                          .value("type", ""),
                      "ack");
        }
        read_said(carol, 3);
        // A marker on the first shard, checked against the room's counter on the second: seq 1
        // is carol's ownership of the room she made, the says 2 to 4.
        EXPECT_EQ(call(carol, {{"type", "read"}, {"room", elsewhere}, {"seq", 2}, {"id", 10}}),
                  (json{{"type", "read"}, {"room", elsewhere}, {"seq", 2}, {"re", 10}}));
        EXPECT_EQ(call(carol, {{"type", "read"}, {"room", elsewhere}, {"seq", 50}, {"id", 11}}),
                  (json{{"type", "read"}, {"room", elsewhere}, {"seq", 4}, {"re", 11}}))
            << "a marker never passes the room's last seq";
        dave.send_json({{"type", "dm"}, {"to", "carol"}, {"text", "psst"}, {"id", 12}});
        read_until(carol, is_type("dm"));
        carol.close_socket();
    }
    // On the other node, welcome puts the room's marker (stopped at its last seq) and counts
    // together from both shards, and the conversation from the first.
    auto [carol, welcome] = login_on("node-b", "carol");
    json room_entry = nullptr;
    json dm_entry = nullptr;
    for (const json& c : welcome.value("conversations", json::array())) {
        if (c.value("room", "") == elsewhere) {
            room_entry = c;
        }
        if (c.value("with", "") == "dave") {
            dm_entry = c;
        }
    }
    EXPECT_EQ(room_entry, (json{{"room", elsewhere}, {"seq", 4}, {"read", 4}, {"unread", 0}})) << welcome;
    EXPECT_EQ(dm_entry, (json{{"with", "dave"}, {"seq", 1}, {"read", 0}, {"unread", 1}})) << welcome;
}

TEST_F(ClusterShardsTest, AMuteInARoomOfTheSecondShardHoldsOnTheOtherNode) {
    const std::string room = room_on_shard("court", 1);
    auto [olivia, welcome] = login_on("node-a", "olivia");
    join_room(olivia, room);  // the first to join owns it
    ASSERT_EQ(call(olivia, {{"type", "say"}, {"room", room}, {"text", "hi"}, {"id", 1}}).value("type", ""), "ack");
    auto [mike, mike_welcome] = login_on("node-b", "mike");
    join_room(mike, room);
    const json muted = call(olivia, {{"type", "mute"}, {"room", room}, {"user", "mike"}, {"id", 2}});
    ASSERT_EQ(muted.value("type", ""), "ack") << muted;
    read_until(mike, is_type("moderation"));
    expect_error_reply(mike, {{"type", "say"}, {"room", room}, {"text", "hello?"}, {"id", 3}}, "muted");
    EXPECT_NE(shards_[1]->command_text({"HGETALL", room_key(room, ":settings")}).find("mike"), std::string::npos)
        << "the mute is kept with the room, on its shard";
}

TEST_F(ClusterShardsTest, LosingOneShardDetachesOnlyItsRoomsAndNothingSaidThereIsLost) {
    const std::string near = room_on_shard("yard", 0);
    const std::string far = room_on_shard("yard", 1);
    auto [erin, erin_welcome] = login_on("node-a", "erin");
    auto [frank, frank_welcome] = login_on("node-b", "frank");
    for (const std::string& room : {near, far}) {
        join_room(erin, room);
        join_room(frank, room);
    }
    ASSERT_EQ(call(erin, {{"type", "say"}, {"room", far}, {"text", "before"}, {"id", 1}}).value("type", ""), "ack");
    read_until(frank, is_chat("before"));

    const std::size_t lines_a = nodes_.at("node-a")->line_count();
    const std::size_t lines_b = nodes_.at("node-b")->line_count();
    shards_[1]->stop();
    ASSERT_TRUE(nodes_.at("node-a")->wait_for_line("lost redis shard 2", lines_a, milliseconds(15000)));
    ASSERT_TRUE(nodes_.at("node-b")->wait_for_line("lost redis shard 2", lines_b, milliseconds(15000)));
    for (const std::string& line : nodes_.at("node-a")->output()) {
        EXPECT_EQ(line.find("lost redis;"), std::string::npos) << "the node as a whole was cut off: " << line;
    }
    EXPECT_NE(metrics_of("node-a").find("parley_cluster_shards_down 1"), std::string::npos);

    // The room on the first shard keeps the cluster's service: numbered by Redis, seen on node B.
    const json shared = call(erin, {{"type", "say"}, {"room", near}, {"text", "still shared"}, {"id", 2}});
    ASSERT_EQ(shared.value("type", ""), "ack") << shared;
    const json seen = read_until(frank, is_chat("still shared")).back();
    EXPECT_EQ(seen.value("seq", 0), shared.value("seq", -1));
    // A direct message lives on the first shard too.
    erin.send_json({{"type", "dm"}, {"to", "frank"}, {"text", "psst"}, {"id", 3}});
    EXPECT_EQ(read_until(frank, is_type("dm")).back().value("text", ""), "psst");
    // The room on the lost shard is served by each node alone meanwhile, and its says are kept.
    ASSERT_EQ(call(erin, {{"type", "say"}, {"room", far}, {"text", "during"}, {"id", 4}}).value("type", ""), "ack");
    expect_error_reply(erin, {{"type", "set_topic"}, {"room", far}, {"text", "t"}, {"id", 5}}, "unavailable");

    shards_[1]->start();
    ASSERT_TRUE(nodes_.at("node-a")->wait_for_line("redis shard 2 answers again", lines_a, milliseconds(20000)));
    ASSERT_TRUE(nodes_.at("node-b")->wait_for_line("redis shard 2 answers again", lines_b, milliseconds(20000)));

    // Once back, the room's history on either node holds both says, once each.
    const auto deadline = std::chrono::steady_clock::now() + milliseconds(15000);
    std::vector<std::string> texts;
    while (std::chrono::steady_clock::now() < deadline) {
        const json page = call(frank, {{"type", "history"}, {"room", far}, {"limit", 50}, {"id", 6}});
        texts.clear();
        for (const json& m : page.value("messages", json::array())) {
            if (m.value("type", "") == "message") {
                texts.push_back(m.value("text", ""));
            }
        }
        if (texts == std::vector<std::string>{"before", "during"}) {
            break;
        }
        std::this_thread::sleep_for(milliseconds(100));
    }
    EXPECT_EQ(texts, (std::vector<std::string>{"before", "during"}));
    const json after = call(frank, {{"type", "say"}, {"room", far}, {"text", "after"}, {"id", 7}});
    ASSERT_EQ(after.value("type", ""), "ack") << after;
    EXPECT_EQ(read_until(erin, is_chat("after")).back().value("seq", 0), after.value("seq", -1))
        << "numbered by the cluster again, and seen on the other node";
    EXPECT_NE(metrics_of("node-a").find("parley_cluster_shards_down 0"), std::string::npos);
}

// A cluster of one Redis gets a second one: `parleyd --cluster-rebalance` moves the rooms whose
// partition now lives there, and a node listing both servers carries on with their history.
TEST(ClusterRebalanceTest, AServerAddedAndTheKeysRebalancedKeepEveryRoomsHistory) {
    redis_process first(redis_process::persistence::append_only);
    redis_process second(redis_process::persistence::append_only);
    const auto url = [](const redis_process& r) { return "\"redis://127.0.0.1:" + std::to_string(r.port()) + "\""; };
    const std::string tail = "\nnode_id = \"node-a\"\n[auth]\nmode = \"token\"\ntoken_secret = \"" +
                             std::string(test_tokens::token_secret) + "\"\n";
    const std::string one_server = "[cluster]\nredis = [" + url(first) + "]" + tail;
    const std::string two_servers = "[cluster]\nredis = [" + url(first) + ", " + url(second) + "]" + tail;
    const std::string moving = room_on_shard("hall", 1);
    const std::string staying = room_on_shard("hall", 0);
    const auto start = [](const std::string& config) {
        auto node = std::make_unique<daemon_process>(relaxed_rate_args(), config);
        if (!node->wait_for_line("cluster: node node-a in sync", 0, milliseconds(15000))) {
            throw std::runtime_error("node-a did not get in sync:\n" + node->tail(30));
        }
        return node;
    };
    const auto login = [](daemon_process& node, const std::string& user) {
        ws_client client(node.port());
        client.upgrade();
        const json welcome = login_retrying(client, user, milliseconds(5000), token_for(user));
        EXPECT_EQ(welcome.value("type", ""), "welcome") << welcome;
        return client;
    };

    {
        auto node = start(one_server);
        ws_client alice = login(*node, "alice");
        for (const std::string& room : {moving, staying}) {
            join_room(alice, room);
            for (int i = 1; i <= 3; ++i) {
                ASSERT_EQ(call(alice, {{"type", "say"}, {"room", room}, {"text", room + "-" + std::to_string(i)},
                                       {"id", i}})
                              .value("type", ""),
                          "ack");
            }
        }
        alice.close_socket();
        EXPECT_TRUE(node->stop().exited);
    }
    // Seq 1 is alice's ownership of each room she made, the says 2 to 4.
    ASSERT_EQ(first.command_text({"GET", room_key(moving, ":seq")}), "4\n");
    const std::string moving_keys = first.command_text({"KEYS", room_key(moving, ":*")});
    const auto key_count = static_cast<std::size_t>(std::count(moving_keys.begin(), moving_keys.end(), '\n'));
    ASSERT_GE(key_count, 2u) << moving_keys;

    temp_dir dir;
    std::ofstream(dir.file("parley.toml")) << two_servers;
    const run_result moved = run_parleyd({"--config", dir.file("parley.toml"), "--cluster-rebalance"},
                                         milliseconds(60000));
    ASSERT_TRUE(moved.exited && moved.code == 0) << moved.output;
    EXPECT_NE(moved.output.find("moved " + std::to_string(key_count) + " key(s)"), std::string::npos)
        << moved.output << "; the moved room's keys: " << moving_keys;
    EXPECT_EQ(second.command_text({"GET", room_key(moving, ":seq")}), "4\n");
    EXPECT_EQ(first.command_text({"EXISTS", room_key(moving, ":seq"), room_key(moving, ":log")}), "0\n");
    EXPECT_EQ(first.command_text({"GET", room_key(staying, ":seq")}), "4\n") << "a room that did not move";

    auto node = start(two_servers);
    ws_client alice = login(*node, "alice");
    const json joined = join_room(alice, moving);
    std::vector<std::string> texts;
    for (const json& m : joined.value("history", json::array())) {
        if (m.value("type", "") == "message") {
            texts.push_back(m.value("text", ""));
        }
    }
    EXPECT_EQ(texts, (std::vector<std::string>{moving + "-1", moving + "-2", moving + "-3"})) << joined;
    const json next = call(alice, {{"type", "say"}, {"room", moving}, {"text", "on"}, {"id", 9}});
    EXPECT_EQ(next.value("seq", 0), 5) << "the room's numbering goes on from its moved counter";
    alice.close_socket();
    EXPECT_TRUE(node->stop().exited);

    const run_result again = run_parleyd({"--config", dir.file("parley.toml"), "--cluster-rebalance"},
                                         milliseconds(60000));
    EXPECT_TRUE(again.exited && again.code == 0) << again.output;
    EXPECT_NE(again.output.find("moved 0 key(s)"), std::string::npos) << again.output;
}

// A key the new server has already is left where it is and named; a server that does not
// answer stops the rebalance with its address. Either way the exit status says it.
TEST(ClusterRebalanceTest, AConflictOrAnUnreachableServerIsReported) {
    redis_process first(redis_process::persistence::none);
    redis_process second(redis_process::persistence::none);
    const std::string room = room_on_shard("clash", 1);
    first.command_text({"SET", room_key(room, ":seq"), "7"});
    second.command_text({"SET", room_key(room, ":seq"), "2"});
    temp_dir dir;
    const auto config = [&](std::uint16_t second_port) {
        std::ofstream(dir.file("parley.toml"))
            << "[cluster]\nredis = [\"redis://127.0.0.1:" << first.port() << "\", \"redis://127.0.0.1:" << second_port
            << "\"]\n";
    };
    config(second.port());
    const run_result clash = run_parleyd({"--config", dir.file("parley.toml"), "--cluster-rebalance"},
                                         milliseconds(60000));
    EXPECT_TRUE(clash.exited && clash.code == 1) << clash.output;
    EXPECT_NE(clash.output.find("left " + room_key(room, ":seq") + " where it is"), std::string::npos) << clash.output;
    EXPECT_EQ(first.command_text({"GET", room_key(room, ":seq")}), "7\n");
    EXPECT_EQ(second.command_text({"GET", room_key(room, ":seq")}), "2\n");

    reserved_port nobody;  // a port nothing listens on
    config(nobody.port());
    const run_result unreachable = run_parleyd({"--config", dir.file("parley.toml"), "--cluster-rebalance"},
                                               milliseconds(60000));
    EXPECT_TRUE(unreachable.exited && unreachable.code == 1) << unreachable.output;
    EXPECT_NE(unreachable.output.find("cannot reach redis shard 2 (127.0.0.1:" + std::to_string(nobody.port()) + ")"),
              std::string::npos)
        << unreachable.output;
}

}  // namespace
}  // namespace parley::integration
