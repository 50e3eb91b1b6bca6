// Three parleyd nodes sharing one real redis-server: rooms, presence, users, dms, names and
// history across nodes; a node killed; Redis stopped and started again.
#include "http_response.hpp"
#include "cluster_nodes.hpp"
#include "redis_shards.hpp"
#include "test_support.hpp"

#include <csignal>
#include <map>
#include <set>

namespace parley::integration {
namespace {

constexpr int name_ttl_ms = 2000;

class ClusterTest : public ::testing::Test {
protected:
    void SetUp() override {
        // Kept on disk, as a production Redis is: a restart loses nothing.
        servers_ = std::make_unique<redis_shards>(redis_process::persistence::append_only);
        redis_ = &servers_->first();
        for (const char* id : {"node-a", "node-b", "node-c"}) {
            start_node(id);
        }
    }

    void TearDown() override {
        stop_cluster_nodes(nodes_);
        if (HasFailure()) {
            std::cerr << "---- redis:\n" << redis_->log_tail();
        }
    }

    std::string config_for(const std::string& id) const {
        return "[cluster]\n" + servers_->config_lines() + "node_id = \"" + id +
               "\"\nname_ttl_ms = " + std::to_string(name_ttl_ms) + "\n";
    }

    daemon_process& start_node(const std::string& id) {
        auto node = start_cluster_node(id, config_for(id));
        auto& slot = nodes_[id];
        slot = std::move(node);
        return *slot;
    }

    daemon_process& node(const std::string& id) { return *nodes_.at(id); }

    ws_client login_on(const std::string& id, const std::string& user) {
        ws_client client(node(id).port());
        client.upgrade();
        client.send_json({{"type", "login"}, {"user", user}});
        const json welcome = expect_type(client, "welcome");
        EXPECT_EQ(welcome.value("user", ""), user);
        return client;
    }

    http_response get(const std::string& id, const std::string& path) {
        ws_client client(node(id).port());
        return parse_http_response(
            client.raw_http("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
    }

    // Polls `users` on client until it lists every name in wanted (presence crosses nodes
    // asynchronously), and returns the last answer.
    std::vector<std::string> wait_users(ws_client& client, const std::set<std::string>& wanted) {
        std::vector<std::string> users;
        for (int attempt = 0; attempt < 100; ++attempt) {
            users = call(client, {{"type", "users"}, {"id", attempt}})["users"].get<std::vector<std::string>>();
            std::set<std::string> have(users.begin(), users.end());
            if (std::includes(have.begin(), have.end(), wanted.begin(), wanted.end())) {
                return users;
            }
            std::this_thread::sleep_for(milliseconds(50));
        }
        return users;
    }

    std::unique_ptr<redis_shards> servers_;
    redis_process* redis_ = nullptr;  // the first of them (the only one, unless the test runs over shards)
    std::map<std::string, std::unique_ptr<daemon_process>> nodes_;
};

// The seqs of the `message` frames in messages, in arrival order.
std::vector<std::int64_t> seqs_of(const std::vector<json>& messages) {
    std::vector<std::int64_t> out;
    for (const auto& m : messages) {
        if (m.value("type", "") == "message") {
            out.push_back(m["seq"].get<std::int64_t>());
        }
    }
    return out;
}

TEST_F(ClusterTest, SaysOnTwoNodesReachEveryMemberOnEveryNodeOnceAndInOneOrder) {
    ws_client alice = login_on("node-a", "alice");
    ws_client bob = login_on("node-b", "bob");
    ws_client carol = login_on("node-c", "carol");
    join_room(alice, "lobby");
    join_room(bob, "lobby");
    join_room(carol, "lobby");
    // Everyone sees everyone: the presence of those who joined after crosses the nodes.
    read_until(alice, [](const json& m) { return m.value("type", "") == "presence" && m.value("user", "") == "carol"; });
    read_until(bob, [](const json& m) { return m.value("type", "") == "presence" && m.value("user", "") == "carol"; });

    constexpr int each = 30;
    for (int i = 0; i < each; ++i) {
        alice.send_json({{"type", "say"}, {"room", "lobby"}, {"text", "a" + std::to_string(i)}, {"id", i}});
        bob.send_json({{"type", "say"}, {"room", "lobby"}, {"text", "b" + std::to_string(i)}});
    }
    std::map<std::string, std::vector<json>> got;
    for (auto [name, client] : {std::pair<std::string, ws_client*>{"alice", &alice}, {"bob", &bob}, {"carol", &carol}}) {
        std::vector<json> messages;
        while (seqs_of(messages).size() < 2 * each) {
            messages.push_back(next_message(*client, milliseconds(10000)));
        }
        got[name] = messages;
    }
    std::vector<std::int64_t> expected;
    for (std::int64_t seq = 1; seq <= 2 * each; ++seq) {
        expected.push_back(seq);
    }
    std::vector<std::string> order;
    for (const auto& m : got["carol"]) {
        if (m.value("type", "") == "message") {
            order.push_back(m["text"]);
        }
    }
    for (const auto& [name, messages] : got) {
        EXPECT_EQ(seqs_of(messages), expected) << name << ": every seq once, in order";
        std::vector<std::string> texts;
        for (const auto& m : messages) {
            if (m.value("type", "") == "message") {
                texts.push_back(m["text"]);
                expect_message_object(m, "lobby", m["text"].get<std::string>()[0] == 'a' ? "alice" : "bob",
                                      m["text"]);
            }
        }
        EXPECT_EQ(texts, order) << name << " saw another order than carol";
    }
    // Alice's acks: one per say, each before her own copy of that message.
    std::map<std::int64_t, std::size_t> ack_at;
    std::map<std::int64_t, std::size_t> message_at;
    const auto& alice_got = got["alice"];
    for (std::size_t i = 0; i < alice_got.size(); ++i) {
        if (alice_got[i].value("type", "") == "ack") {
            ack_at[alice_got[i]["seq"].get<std::int64_t>()] = i;
        } else if (alice_got[i].value("type", "") == "message") {
            message_at[alice_got[i]["seq"].get<std::int64_t>()] = i;
        }
    }
    // The last acks may trail the last messages bob sent: read until all have come.
    while (ack_at.size() < each) {
        json m = next_message(alice, milliseconds(10000));
        ASSERT_EQ(m.value("type", ""), "ack") << m.dump();
        ack_at[m["seq"].get<std::int64_t>()] = SIZE_MAX;
    }
    for (const auto& [seq, index] : ack_at) {
        ASSERT_TRUE(message_at.count(seq)) << "an ack for seq " << seq << " that is not alice's message";
        EXPECT_LT(index, message_at[seq]) << "the ack of seq " << seq << " came after the message";
        EXPECT_EQ(alice_got[message_at[seq]]["from"], "alice");
    }
}

TEST_F(ClusterTest, JoinedListsMembersOfEveryNodeAndRoomsCountsThem) {
    ws_client alice = login_on("node-a", "alice");
    ws_client bob = login_on("node-b", "bob");
    join_room(alice, "lobby");
    join_room(bob, "lobby");
    read_until(alice, [](const json& m) { return m.value("type", "") == "presence" && m.value("user", "") == "bob"; });
    ws_client carol = login_on("node-c", "carol");
    json joined = join_room(carol, "lobby");
    std::vector<std::string> members = joined["members"].get<std::vector<std::string>>();
    EXPECT_EQ(members, (std::vector<std::string>{"alice", "bob", "carol"}));
    json rooms = call(carol, {{"type", "rooms"}, {"id", 1}});
    ASSERT_EQ(rooms["rooms"].size(), 1u) << rooms.dump();
    EXPECT_EQ(rooms["rooms"][0]["name"], "lobby");
    EXPECT_EQ(rooms["rooms"][0]["members"], 3);

    // Leaving on one node is seen on the others.
    call(bob, {{"type", "leave"}, {"room", "lobby"}, {"id", 2}});
    json presence = wait_type(carol, "presence");
    EXPECT_EQ(presence["user"], "bob");
    EXPECT_EQ(presence["event"], "leave");
}

TEST_F(ClusterTest, UsersListsEveryNodesUsers) {
    ws_client alice = login_on("node-a", "alice");
    ws_client bob = login_on("node-b", "bob");
    ws_client carol = login_on("node-c", "carol");
    auto users = wait_users(alice, {"alice", "bob", "carol"});
    EXPECT_EQ(users, (std::vector<std::string>{"alice", "bob", "carol"}));
    bob.close_socket();
    // bob's logout crosses too.
    for (int attempt = 0; attempt < 100; ++attempt) {
        users = call(carol, {{"type", "users"}, {"id", attempt}})["users"].get<std::vector<std::string>>();
        if (users.size() == 2) {
            break;
        }
        std::this_thread::sleep_for(milliseconds(50));
    }
    EXPECT_EQ(users, (std::vector<std::string>{"alice", "carol"}));
}

TEST_F(ClusterTest, DirectMessagesReachUsersOnOtherNodes) {
    ws_client alice = login_on("node-a", "alice");
    ws_client bob = login_on("node-c", "bob");
    wait_users(alice, {"bob"});
    json ack = call(alice, {{"type", "dm"}, {"to", "bob"}, {"text", "psst"}, {"id", 7}});
    (void)ack;
    json dm = wait_type(bob, "dm");
    EXPECT_EQ(dm["from"], "alice");
    EXPECT_EQ(dm["to"], "bob");
    EXPECT_EQ(dm["text"], "psst");
    bob.send_json({{"type", "dm"}, {"to", "alice"}, {"text", "yes?"}});
    json back = read_until(alice, [](const json& m) { return m.value("type", "") == "dm" && m.value("from", "") == "bob"; })
                    .back();
    EXPECT_EQ(back["text"], "yes?");
    expect_error_reply(alice, {{"type", "dm"}, {"to", "nobody"}, {"text", "hi"}, {"id", 8}}, "user_not_found");
}

TEST_F(ClusterTest, ANameIsHeldOnceAcrossTheCluster) {
    ws_client alice = login_on("node-a", "alice");
    ws_client other(node("node-b").port());
    other.upgrade();
    expect_error_reply(other, {{"type", "login"}, {"user", "alice"}, {"id", 1}}, "username_taken");
    alice.close_socket();
    json reply = login_retrying(other, "alice", milliseconds(5000));
    EXPECT_EQ(reply.value("type", ""), "welcome") << reply.dump();
}

TEST_F(ClusterTest, AKilledNodesNamesAndMembersGoAfterTheLease) {
    ws_client watcher = login_on("node-a", "watcher");
    join_room(watcher, "lobby");
    {
        ws_client doomed = login_on("node-c", "doomed");
        join_room(doomed, "lobby");
        read_until(watcher,
                   [](const json& m) { return m.value("type", "") == "presence" && m.value("user", "") == "doomed"; });
        node("node-c").send_signal(SIGKILL);
        ASSERT_TRUE(node("node-c").wait_exit(milliseconds(5000)));
    }
    // Held until the lease runs out: nobody renews it any more.
    ws_client again(node("node-b").port());
    again.upgrade();
    const auto killed_at = std::chrono::steady_clock::now();
    expect_error_reply(again, {{"type", "login"}, {"user", "doomed"}, {"id", 1}}, "username_taken");
    json reply = login_retrying(again, "doomed", milliseconds(4 * name_ttl_ms));
    EXPECT_EQ(reply.value("type", ""), "welcome") << reply.dump();
    EXPECT_LT(std::chrono::steady_clock::now() - killed_at, milliseconds(3 * name_ttl_ms));
    // The dead node's members left the room (as disconnected), seen on the live nodes.
    json leave = read_until(watcher, [](const json& m) {
                     return m.value("type", "") == "presence" && m.value("user", "") == "doomed" &&
                            m.value("event", "") == "leave";
                 }).back();
    EXPECT_EQ(leave["room"], "lobby");
    nodes_.erase("node-c");
}

TEST_F(ClusterTest, ADeadNodesMembersLeaveEachOfTheirRoomsExactlyOnce) {
    ws_client ann = login_on("node-a", "ann");
    ws_client ben = login_on("node-b", "ben");
    join_room(ann, "lobby");
    join_room(ben, "lobby");
    join_room(ben, "den");
    {
        ws_client doomed = login_on("node-c", "doomed");
        join_room(doomed, "lobby");
        join_room(doomed, "den");
        for (ws_client* w : {&ann, &ben}) {
            read_until(*w, [](const json& m) { return m.value("type", "") == "presence" && m.value("user", "") == "doomed"; });
        }
        read_until(ben, [](const json& m) {
            return m.value("type", "") == "presence" && m.value("user", "") == "doomed" && m.value("room", "") == "den";
        });
        node("node-c").send_signal(SIGKILL);
        ASSERT_TRUE(node("node-c").wait_exit(milliseconds(5000)));
        nodes_.erase("node-c");
    }
    // Both live nodes find it dead and clear its rooms; each leave is told once all the same.
    std::map<std::string, int> ann_left;
    std::map<std::string, int> ben_left;
    const auto count_leaves = [](ws_client& client, std::map<std::string, int>& left) {
        while (auto m = client.recv_json(milliseconds(100))) {
            if (m->value("type", "") == "presence" && m->value("user", "") == "doomed" &&
                m->value("event", "") == "leave") {
                ++left[m->value("room", "")];
            }
        }
    };
    const auto until = std::chrono::steady_clock::now() + milliseconds(4 * name_ttl_ms);
    while (std::chrono::steady_clock::now() < until) {
        count_leaves(ann, ann_left);
        count_leaves(ben, ben_left);
    }
    EXPECT_EQ(ann_left, (std::map<std::string, int>{{"lobby", 1}}));
    EXPECT_EQ(ben_left, (std::map<std::string, int>{{"den", 1}, {"lobby", 1}}));
    const json listed = call(ann, {{"type", "rooms"}, {"id", "r"}});
    std::map<std::string, int> counted;
    for (const json& r : listed["rooms"]) {
        counted[r.value("name", "")] = r.value("members", 0);
    }
    EXPECT_EQ(counted, (std::map<std::string, int>{{"den", 1}, {"lobby", 2}})) << "the dead node's members still counted";
}

TEST_F(ClusterTest, HistoryIsTheSameOnEveryNode) {
    ws_client alice = login_on("node-a", "alice");
    join_room(alice, "lobby");
    for (int i = 1; i <= 60; ++i) {
        alice.send_json({{"type", "say"}, {"room", "lobby"}, {"text", "m" + std::to_string(i)}});
    }
    read_until(alice, is_chat("m60"), milliseconds(10000));
    ws_client bob = login_on("node-b", "bob");
    json joined = join_room(bob, "lobby");
    ASSERT_EQ(joined["history"].size(), 50u);
    EXPECT_EQ(joined["history"].front()["text"], "m11");
    EXPECT_EQ(joined["history"].back()["seq"], 60);
    ws_client carol = login_on("node-c", "carol");
    json carol_joined = join_room(carol, "lobby");
    EXPECT_EQ(carol_joined["epoch"], joined["epoch"]);
    EXPECT_EQ(carol_joined["history"], joined["history"]);
    json older = call(carol, {{"type", "history"}, {"room", "lobby"}, {"before", 11}, {"limit", 100}, {"id", 3}});
    ASSERT_EQ(older["messages"].size(), 10u) << older.dump();
    EXPECT_EQ(older["messages"].front()["text"], "m1");
    EXPECT_EQ(older["messages"].back()["seq"], 10);
    // A node started later reads the same history.
    daemon_process& late = start_node("node-d");
    ws_client dave(late.port());
    dave.upgrade();
    dave.send_json({{"type", "login"}, {"user", "dave"}});
    expect_type(dave, "welcome");
    json dave_joined = join_room(dave, "lobby");
    EXPECT_EQ(dave_joined["history"], joined["history"]);
}

TEST_F(ClusterTest, WithoutRedisNodesServeTheirOwnUsersAndCatchUpWhenItReturns) {
    ws_client alice = login_on("node-a", "alice");
    ws_client dave = login_on("node-a", "dave");
    ws_client bob = login_on("node-b", "bob");
    join_room(alice, "lobby");
    join_room(dave, "lobby");
    join_room(bob, "lobby");
    alice.send_json({{"type", "say"}, {"room", "lobby"}, {"text", "before"}});
    read_until(bob, is_chat("before"));
    read_until(dave, is_chat("before"));

    const std::size_t lines_a = node("node-a").line_count();
    const std::size_t lines_b = node("node-b").line_count();
    redis_->stop();
    ASSERT_TRUE(node("node-a").wait_for_line("lost redis;", lines_a));
    EXPECT_EQ(get("node-a", "/healthz").body, "degraded");
    EXPECT_NE(get("node-a", "/metrics").body.find("parley_cluster_degraded 1"), std::string::npos);

    // node-a goes on serving its room: a fresh `joined` tells its members the seqs are local now.
    alice.send_json({{"type", "say"}, {"room", "lobby"}, {"text", "while down"}, {"id", 5}});
    json fresh = wait_type(dave, "joined");
    EXPECT_FALSE(fresh.contains("re"));
    EXPECT_EQ(fresh["recovered"], false);
    json local = read_until(dave, is_chat("while down")).back();
    EXPECT_EQ(local["seq"], 2);
    json ack = wait_reply(alice, 5);
    EXPECT_EQ(ack["type"], "ack");

    redis_->start();
    ASSERT_TRUE(node("node-a").wait_for_line("in sync", lines_a, milliseconds(20000)));
    ASSERT_TRUE(node("node-b").wait_for_line("in sync", lines_b, milliseconds(20000)));
    EXPECT_EQ(get("node-a", "/healthz").body, "ok");

    // The message said while cut off joined the shared history, once, and everyone gets it.
    bob.send_json({{"type", "say"}, {"room", "lobby"}, {"text", "after"}});
    read_until(dave, is_chat("after"), milliseconds(10000));
    for (auto* client : {&alice, &bob, &dave}) {
        json history = call(*client, {{"type", "history"}, {"room", "lobby"}, {"id", 9}});
        std::vector<std::string> texts;
        for (const auto& m : history["messages"]) {
            texts.push_back(m["text"]);
        }
        // The shared history holds the three messages once each; seqs 1..3 in the shared epoch.
        EXPECT_EQ(texts, (std::vector<std::string>{"before", "while down", "after"})) << history.dump();
    }
}

}  // namespace
}  // namespace parley::integration

namespace parley::integration {
namespace {

TEST_F(ClusterTest, ASayWhoseAnswerWasLostIsStoredOnce) {
    ws_client alice = login_on("node-a", "alice");
    ws_client bob = login_on("node-b", "bob");
    join_room(alice, "lobby");
    join_room(bob, "lobby");
    read_until(alice, [](const json& m) { return m.value("type", "") == "presence" && m.value("user", "") == "bob"; });

    // A hung Redis (the first server: node-a is cut off as a whole when it gives the connection
    // up): the say reaches a socket, but its answer may not come back before then. Whether Redis
    // ran it when it woke up or not, it must be stored once.
    const std::size_t lines_a = node("node-a").line_count();
    redis_->pause();
    alice.send_json({{"type", "say"}, {"room", "lobby"}, {"text", "in doubt"}, {"id", 1}});
    ASSERT_TRUE(node("node-a").wait_for_line("lost redis;", lines_a, milliseconds(20000)));
    redis_->resume();
    ASSERT_TRUE(node("node-a").wait_for_line("in sync", lines_a, milliseconds(20000)));

    bob.send_json({{"type", "say"}, {"room", "lobby"}, {"text", "after"}});
    std::vector<json> got = read_until(bob, is_chat("after"), milliseconds(20000));
    EXPECT_EQ(count_if(got, is_chat("in doubt")), 1u);
    std::vector<json> alice_got = read_until(alice, is_chat("after"), milliseconds(20000));
    std::size_t acks = 0;
    for (const auto& m : alice_got) {
        acks += m.value("type", "") == "ack" && m.value("re", json()) == 1 ? 1 : 0;
    }
    EXPECT_EQ(acks, 1u);
    json history = call(bob, {{"type", "history"}, {"room", "lobby"}, {"id", 2}});
    std::vector<std::string> texts;
    for (const auto& m : history["messages"]) {
        texts.push_back(m["text"]);
    }
    EXPECT_EQ(texts, (std::vector<std::string>{"in doubt", "after"}));
}

}  // namespace
}  // namespace parley::integration

namespace parley::integration {
namespace {

// The number after "KEY" up to the next ',' or line end, in INFO or /metrics text; -1 when absent.
long long number_after(const std::string& text, const std::string& key) {
    auto at = text.find(key);
    if (at == std::string::npos) {
        return -1;
    }
    return std::stoll(text.substr(at + key.size()));
}

TEST_F(ClusterTest, EachMessageIsPublishedAtMostOnceAndReadOnceByEachNode) {
    // Members on all three nodes, so every node has local members to fan out to.
    std::vector<ws_client> members;
    const char* ids[] = {"node-a", "node-b", "node-c"};
    for (int i = 0; i < 9; ++i) {
        members.push_back(login_on(ids[i % 3], "m" + std::to_string(i)));
        join_room(members.back(), "lobby");
    }
    // Until the last join's presence has reached everyone, events are still on their way.
    for (std::size_t i = 0; i + 1 < members.size(); ++i) {
        read_until(members[i], [](const json& e) { return e.value("type", "") == "presence" && e.value("user", "") == "m8"; });
    }
    auto events_read = [&](const std::string& id) {
        return number_after(get(id, "/metrics").body, "\nparley_cluster_events_received_total ");  // the sample, not # HELP
    };
    // Counted on the server holding the room (the only one, unless the test runs over shards).
    redis_process& lobby_server = servers_->holding(room_key("lobby", ":events"));
    // A room's messages go on its sharded channel (SPUBLISH).
    const long long publishes_before = number_after(lobby_server.info("commandstats"), "cmdstat_spublish:calls=");
    std::map<std::string, long long> read_before;
    for (const char* id : ids) {
        read_before[id] = events_read(id);
    }

    constexpr int says = 50;
    for (int i = 0; i < says; ++i) {
        members[static_cast<std::size_t>(i) % members.size()].send_json(
            {{"type", "say"}, {"room", "lobby"}, {"text", "x" + std::to_string(i)}});
    }
    // Says of different members race to Redis: the last one sent need not get the last seq.
    for (auto& m : members) {
        std::size_t messages = 0;
        read_until(m, [&messages](const json& e) { return (messages += e.value("type", "") == "message") == says; },
                   milliseconds(10000));
    }
    // At most one SPUBLISH per message, whatever the members and nodes (the scripts' calls are
    // counted): the says a node sends in one pass of its loop go out as one publication.
    const long long publishes_after = number_after(lobby_server.info("commandstats"), "cmdstat_spublish:calls=");
    EXPECT_LE(publishes_after - std::max(publishes_before, 0LL), says);
    EXPECT_GE(publishes_after - std::max(publishes_before, 0LL), 1);
    // And each node read each message once: one decode per node, then its own fan-out.
    for (const char* id : ids) {
        EXPECT_EQ(events_read(id) - read_before[id], says) << id;
    }
}

}  // namespace
}  // namespace parley::integration
