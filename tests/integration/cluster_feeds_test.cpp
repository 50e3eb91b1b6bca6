// Which rooms' messages reach which node, on two parleyd nodes sharing one real redis-server: a
// node reads the messages of the rooms it has members in, and no others; a join into a room
// another node is busy in misses nothing and gets nothing twice; a room nobody here is in any
// more stops being read a little later (docs/cluster.md, "Rooms a node feeds").

#include "http_response.hpp"
#include "cluster_nodes.hpp"
#include "redis_shards.hpp"
#include "test_support.hpp"

#include <atomic>
#include <map>
#include <thread>

namespace parley::integration {
namespace {

// Heartbeats every 500 ms: a room nobody is in stops being fed after one to two of them.
constexpr int feeds_name_ttl_ms = 1500;
const std::string feeds_admin_token = "feeds-admin-token-0123456789";

class ClusterFeedsTest : public ::testing::Test {
protected:
    void SetUp() override {
        servers_ = std::make_unique<redis_shards>(redis_process::persistence::none);
        redis_ = &servers_->first();
        for (const char* id : {"node-a", "node-b"}) {
            const std::string config = "[cluster]\n" + servers_->config_lines() +
                                       "node_id = \"" + id + "\"\nname_ttl_ms = " +
                                       std::to_string(feeds_name_ttl_ms) + "\n[admin]\ntoken = \"" + feeds_admin_token +
                                       "\"\n";
            auto node = start_cluster_node(id, config);
            nodes_[id] = std::move(node);
        }
    }
    void TearDown() override { stop_cluster_nodes(nodes_); }
    ws_client login_on(const std::string& id, const std::string& user) {
        ws_client client(nodes_.at(id)->port());
        client.upgrade();
        const json welcome = call(client, {{"type", "login"}, {"user", user}, {"id", "in"}});
        EXPECT_EQ(welcome.value("type", ""), "welcome") << welcome;
        return client;
    }
    // A sample of the node's /metrics.
    long long metric(const std::string& id, const std::string& name) {
        ws_client client(nodes_.at(id)->port());
        const std::string body =
            parse_http_response(
                client.raw_http("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))
                .body;
        const std::string key = "\n" + name + " ";
        const std::size_t at = body.find(key);
        if (at == std::string::npos) {
            ADD_FAILURE() << "no " << name << " in /metrics";
            return -1;
        }
        return std::stoll(body.substr(at + key.size()));
    }
    long long messages_read(const std::string& id) { return metric(id, "parley_cluster_messages_received_total"); }

    std::unique_ptr<redis_shards> servers_;
    redis_process* redis_ = nullptr;  // the first of them (the only one, unless the test runs over shards)
    std::map<std::string, std::unique_ptr<daemon_process>> nodes_;
};

TEST_F(ClusterFeedsTest, ANodeReadsOnlyTheMessagesOfRoomsItHasMembersIn) {
    ws_client alice = login_on("node-a", "alice");
    ws_client bob = login_on("node-b", "bob");
    join_room(alice, "east");
    join_room(bob, "west");
    const long long a_before = messages_read("node-a");
    const long long b_before = messages_read("node-b");

    constexpr int says = 40;
    for (int i = 0; i < says; ++i) {
        bob.send_json({{"type", "say"}, {"room", "west"}, {"text", "w" + std::to_string(i)}});
    }
    alice.send_json({{"type", "say"}, {"room", "east"}, {"text", "only one"}});
    std::size_t seen = 0;
    read_until(bob, [&seen](const json& e) { return (seen += e.value("type", "") == "message") == says; });
    read_until(alice, is_type("message"));

    // node-b read west's messages and none of east's; node-a east's one and none of west's.
    EXPECT_EQ(messages_read("node-b") - b_before, says);
    EXPECT_EQ(messages_read("node-a") - a_before, 1);
    EXPECT_EQ(metric("node-a", "parley_cluster_rooms_fed"), 1);
}

TEST_F(ClusterFeedsTest, JoinsAndLeavesReachOnlyTheNodesFeedingTheRoom) {
    ws_client alice = login_on("node-a", "alice");
    ws_client bob = login_on("node-b", "bob");
    ws_client carol = login_on("node-b", "carol");
    join_room(alice, "east");
    join_room(carol, "west");
    // Acked once node-a read it back from east's channel, so alice's join, published on that
    // channel before it, is counted already too.
    ASSERT_EQ(call(alice, {{"type", "say"}, {"room", "east"}, {"text", "before"}, {"id", "b"}}).value("type", ""),
              "ack");
    const long long a_before = metric("node-a", "parley_cluster_events_received_total");
    constexpr int rounds = 10;
    for (int i = 0; i < rounds; ++i) {
        join_room(bob, "west");
        ASSERT_EQ(call(bob, {{"type", "leave"}, {"room", "west"}, {"id", i}}).value("type", ""), "left");
    }
    // carol, in west on bob's node, saw every one of them, in order.
    std::size_t joins = 0;
    std::size_t leaves = 0;
    read_until(carol, [&](const json& e) {
        if (e.value("type", "") == "presence" && e.value("user", "") == "bob") {
            (e.value("event", "") == "join" ? joins : leaves) += 1;
            EXPECT_EQ(joins, leaves + (e.value("event", "") == "join" ? 1 : 0)) << e;
        }
        return leaves == rounds;
    });
    // A say into east after them: once node-a has it, anything west sent before has arrived too
    // if it was coming (one subscriber connection, in Redis's order).
    ASSERT_EQ(call(alice, {{"type", "say"}, {"room", "east"}, {"text", "after"}, {"id", "s"}}).value("type", ""), "ack");
    EXPECT_EQ(metric("node-a", "parley_cluster_events_received_total") - a_before, 1)
        << "node-a, with nobody in west, heard of west's joins and leaves";
}

TEST_F(ClusterFeedsTest, TheRoomListIsTheClustersOnEveryNode) {
    ws_client alice = login_on("node-a", "alice");
    ws_client bob = login_on("node-a", "bob");
    ws_client carol = login_on("node-b", "carol");
    join_room(alice, "lobby");
    join_room(bob, "lobby");
    join_room(alice, "den");
    // carol's node feeds no room: the list comes from the cluster's partitions (kept a second).
    const auto listed = [&carol] {
        std::map<std::string, long long> out;
        const json reply = call(carol, {{"type", "rooms"}, {"id", "r"}});
        EXPECT_EQ(reply.value("type", ""), "rooms") << reply;
        for (const json& r : reply["rooms"]) {
            out[r.value("name", "")] = r.value("members", -1LL);
        }
        return out;
    };
    const std::map<std::string, long long> both{{"den", 1}, {"lobby", 2}};
    auto seen = listed();
    for (int i = 0; i < 40 && seen != both; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        seen = listed();
    }
    EXPECT_EQ(seen, both);
    EXPECT_EQ(metric("node-b", "parley_cluster_rooms_fed"), 0);
    ASSERT_EQ(call(alice, {{"type", "leave"}, {"room", "den"}, {"id", 1}}).value("type", ""), "left");
    const std::map<std::string, long long> lobby_only{{"lobby", 2}};
    for (int i = 0; i < 40 && seen != lobby_only; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        seen = listed();
    }
    EXPECT_EQ(seen, lobby_only) << "an empty room leaves the list";
}

TEST_F(ClusterFeedsTest, AJoinWhileAnotherNodeSaysMissesNothingAndGetsNothingTwice) {
    ws_client bob = login_on("node-b", "bob");
    join_room(bob, "busy");
    // bob says on and on, from before alice's join until 50 says after it was answered.
    std::atomic<int> said{0};
    std::atomic<bool> answered{false};
    std::thread sayer([&] {
        int after = 0;
        while (after < 50 && said < 5000) {
            bob.send_json({{"type", "say"}, {"room", "busy"}, {"text", "n" + std::to_string(said.load())}});
            ++said;
            after += answered ? 1 : 0;
            std::this_thread::sleep_for(milliseconds(1));
        }
    });
    while (said < 30) {
        std::this_thread::sleep_for(milliseconds(1));
    }
    ws_client alice = login_on("node-a", "alice");
    const json joined = call(alice, {{"type", "join"}, {"room", "busy"}, {"id", "j"}});
    answered = true;
    sayer.join();
    ASSERT_EQ(joined.value("type", ""), "joined") << joined;
    std::vector<std::int64_t> seqs;
    for (const json& m : joined.value("history", json::array())) {
        if (m.value("type", "") == "message") {
            seqs.push_back(m["seq"].get<std::int64_t>());
        }
    }
    ASSERT_FALSE(seqs.empty()) << "the join came after 30 says";
    const std::size_t shown_in_joined = seqs.size();
    // Then everything said after, up to the last say (bob's are the room's only messages).
    const std::int64_t last = said;
    while (seqs.back() < last) {
        const json e = read_until(alice, is_type("message"), milliseconds(10000)).back();
        seqs.push_back(e["seq"].get<std::int64_t>());
    }
    for (std::size_t i = 1; i < seqs.size(); ++i) {
        ASSERT_EQ(seqs[i], seqs[i - 1] + 1) << "at " << i << ": a seq missed or repeated";
    }
    EXPECT_EQ(seqs.back(), last);
    EXPECT_GE(seqs.size() - shown_in_joined, 50u) << "the says after the join came live";
}

TEST_F(ClusterFeedsTest, ARoomNobodyHereIsInAnyMoreIsNoLongerRead) {
    ws_client alice = login_on("node-a", "alice");
    ws_client bob = login_on("node-b", "bob");
    join_room(alice, "den");
    join_room(bob, "den");
    EXPECT_EQ(call(alice, {{"type", "leave"}, {"room", "den"}, {"id", "l"}}).value("type", ""), "left");
    // Fed for one to two heartbeats more, then unsubscribed.
    const auto deadline = std::chrono::steady_clock::now() + milliseconds(5000);
    while (metric("node-a", "parley_cluster_rooms_fed") != 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(milliseconds(100));
    }
    ASSERT_EQ(metric("node-a", "parley_cluster_rooms_fed"), 0);
    const long long before = messages_read("node-a");
    for (int i = 0; i < 10; ++i) {
        bob.send_json({{"type", "say"}, {"room", "den"}, {"text", "after"}});
    }
    std::size_t seen = 0;
    read_until(bob, [&seen](const json& e) { return (seen += e.value("type", "") == "message") == 10; });
    EXPECT_EQ(messages_read("node-a") - before, 0);

    // Back in: the room is caught up first, its newest messages included.
    const json joined = call(alice, {{"type", "join"}, {"room", "den"}, {"id", "j"}});
    ASSERT_EQ(joined.value("type", ""), "joined") << joined;
    ASSERT_FALSE(joined["history"].empty());
    EXPECT_EQ(joined["history"].back().value("seq", 0), 10);
}

TEST_F(ClusterFeedsTest, TypingAndAnnouncementsReachTheRoomsMembersOnEveryNode) {
    ws_client alice = login_on("node-a", "alice");
    ws_client bob = login_on("node-b", "bob");
    join_room(alice, "den");
    join_room(bob, "den");
    read_until(alice, [](const json& e) { return e.value("type", "") == "presence" && e.value("user", "") == "bob"; });
    bob.send_json({{"type", "typing"}, {"room", "den"}});
    EXPECT_EQ(read_until(alice, is_type("typing")).back().value("user", ""), "bob");

    const std::string body = json{{"room", "den"}, {"text", "maintenance at noon"}}.dump();
    ws_client admin(nodes_.at("node-b")->port());
    const http_response answered = parse_http_response(admin.raw_http(
        "POST /admin/announce HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer " +
        feeds_admin_token + "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\n\r\n" + body));
    ASSERT_EQ(answered.status, 200) << answered.body;
    EXPECT_EQ(read_until(alice, is_type("system")).back().value("text", ""), "maintenance at noon")
        << "the announcement crossed to node-a";
}

}  // namespace
}  // namespace parley::integration
