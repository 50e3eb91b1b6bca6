// Two parleyd nodes in token mode sharing one real redis-server: what is kept for a user
// (stored direct conversations, read markers, welcome's conversations) is the cluster's, so a
// user finds on one node what was sent or read on the other (docs/cluster.md).
#include "cluster_nodes.hpp"
#include "redis_shards.hpp"
#include "test_support.hpp"
#include "tests/token_minter.hpp"

#include <map>

namespace parley::integration {
namespace {

using test_tokens::token_for;

class ClusterConversationsTest : public ::testing::Test {
protected:
    void SetUp() override {
        // Kept on disk, as a production Redis is: the outage test restarts it.
        servers_ = std::make_unique<redis_shards>(redis_process::persistence::append_only);
        redis_ = &servers_->first();
        for (const char* id : {"node-a", "node-b"}) {
            auto node = start_cluster_node(id, config_for(id));
            nodes_[id] = std::move(node);
        }
    }

    void TearDown() override { stop_cluster_nodes(nodes_); }

    std::string config_for(const std::string& id) const {
        return "[cluster]\n" + servers_->config_lines() + "node_id = \"" + id +
               "\"\n[auth]\nmode = \"token\"\ntoken_secret = \"" + test_tokens::token_secret + "\"\n";
    }

    // Logs user in on node `id` with a token, and returns the client and its welcome. A name
    // released on another node a moment ago may still be held there: asked again, bounded.
    std::pair<ws_client, json> login_on(const std::string& id, const std::string& user) {
        ws_client client(nodes_.at(id)->port());
        client.upgrade();
        const auto deadline = std::chrono::steady_clock::now() + milliseconds(5000);
        for (int attempt = 1;; ++attempt) {
            json reply = call(client, {{"type", "login"}, {"user", user}, {"token", token_for(user)}, {"id", attempt}});
            const bool taken = reply.value("type", "") == "error" && reply.value("code", "") == "username_taken";
            if (!taken || std::chrono::steady_clock::now() >= deadline) {
                if (reply.value("type", "") != "welcome") {
                    throw std::runtime_error("login of " + user + " on " + id + " got " + reply.dump());
                }
                return {std::move(client), std::move(reply)};
            }
            std::this_thread::sleep_for(milliseconds(20));
        }
    }

    // Sends a dm with an id; returns the sender's copy and the ack, checked.
    static json dm(ws_client& from, const std::string& to, const std::string& text, int id) {
        from.send_json({{"type", "dm"}, {"to", to}, {"text", text}, {"id", id}});
        const std::vector<json> replies = read_messages(from, 2);
        EXPECT_EQ(replies[0].value("type", ""), "dm") << replies[0];
        EXPECT_EQ(replies[0].value("text", ""), text) << replies[0];
        EXPECT_EQ(replies[1].value("type", ""), "ack") << replies[1];
        EXPECT_EQ(replies[1].value("with", ""), to) << replies[1];
        EXPECT_EQ(replies[1]["seq"], replies[0]["seq"]) << replies[1];
        return replies[1];
    }

    // welcome's entry for `with` or `room`, or null.
    static json entry(const json& welcome, const std::string& field, const std::string& name) {
        for (const json& c : welcome.value("conversations", json::array())) {
            if (c.value(field, "") == name) {
                return c;
            }
        }
        return nullptr;
    }

    std::unique_ptr<redis_shards> servers_;
    redis_process* redis_ = nullptr;  // the first of them (the only one, unless the test runs over shards)
    std::map<std::string, std::unique_ptr<daemon_process>> nodes_;
};

TEST_F(ClusterConversationsTest, ADmToSomeoneOfflineOnOneNodeIsFoundAtTheirLoginOnAnother) {
    auto [alice, alice_welcome] = login_on("node-a", "alice");
    EXPECT_EQ(alice_welcome["conversations"], json::array()) << alice_welcome;
    EXPECT_EQ(dm(alice, "bob", "are you there?", 1)["seq"], 1);
    EXPECT_EQ(dm(alice, "bob", "call me", 2)["seq"], 2);

    auto [bob, bob_welcome] = login_on("node-b", "bob");
    EXPECT_EQ(entry(bob_welcome, "with", "alice"), (json{{"with", "alice"}, {"seq", 2}, {"read", 0}, {"unread", 2}}))
        << bob_welcome;
    json page = call(bob, {{"type", "dm_history"}, {"with", "alice"}, {"id", 3}});
    ASSERT_EQ(page["messages"].size(), 2u) << page;
    EXPECT_EQ(page["messages"][0]["text"], "are you there?");
    EXPECT_EQ(page["messages"][0]["seq"], 1);
    EXPECT_EQ(page["messages"][1]["text"], "call me");
    json older = call(bob, {{"type", "dm_history"}, {"with", "alice"}, {"before", 2}, {"id", 4}});
    ASSERT_EQ(older["messages"].size(), 1u) << older;
    EXPECT_EQ(older["messages"][0]["seq"], 1);

    // The conversation's seqs continue on the other node, and the answer reaches alice live.
    EXPECT_EQ(dm(bob, "alice", "here now", 5)["seq"], 3);
    json live = wait_type(alice, "dm");
    EXPECT_EQ(live, (json{{"type", "dm"}, {"from", "bob"}, {"to", "alice"}, {"text", "here now"}, {"seq", 3},
                          {"ts", live["ts"]}}));
    // The sender's marker moved with each of their dms: alice has read her own two.
    alice.close_socket();
    auto [alice_on_b, alice_again] = login_on("node-b", "alice");
    EXPECT_EQ(entry(alice_again, "with", "bob"), (json{{"with", "bob"}, {"seq", 3}, {"read", 2}, {"unread", 1}}))
        << alice_again;
}

TEST_F(ClusterConversationsTest, AMarkerSetOnOneNodeIsInTheWelcomeOnAnother) {
    auto [alice, welcome] = login_on("node-a", "alice");
    join_room(alice, "lobby");
    for (int i = 1; i <= 3; ++i) {
        alice.send_json({{"type", "say"}, {"room", "lobby"}, {"text", "m" + std::to_string(i)}});
    }
    read_until(alice, is_chat("m3"));
    json room_read = call(alice, {{"type", "read"}, {"room", "lobby"}, {"seq", 2}, {"id", 1}});
    EXPECT_EQ(room_read, (json{{"type", "read"}, {"room", "lobby"}, {"seq", 2}, {"re", 1}}));
    dm(alice, "bob", "one", 2);
    dm(alice, "bob", "two", 3);
    expect_error_reply(alice, {{"type", "read"}, {"with", "carol"}, {"seq", 1}, {"id", 4}}, "user_not_found");

    auto [bob, bob_welcome] = login_on("node-b", "bob");
    // Past the end counts as the last message; a lower seq later changes nothing.
    EXPECT_EQ(call(bob, {{"type", "read"}, {"with", "alice"}, {"seq", 99}, {"id", 5}}),
              (json{{"type", "read"}, {"with", "alice"}, {"seq", 2}, {"re", 5}}));
    EXPECT_EQ(call(bob, {{"type", "read"}, {"with", "alice"}, {"seq", 1}, {"id", 6}}),
              (json{{"type", "read"}, {"with", "alice"}, {"seq", 2}, {"re", 6}}));

    alice.close_socket();
    bob.close_socket();
    auto [alice_on_b, alice_welcome] = login_on("node-b", "alice");
    // Seq 1 is alice's ownership of the room she made (a set_role event), the says 2 to 4.
    EXPECT_EQ(entry(alice_welcome, "room", "lobby"), (json{{"room", "lobby"}, {"seq", 4}, {"read", 2}, {"unread", 2}}))
        << alice_welcome;
    // Newest activity first: the dms came after the room's messages.
    ASSERT_EQ(alice_welcome["conversations"].size(), 2u) << alice_welcome;
    EXPECT_EQ(alice_welcome["conversations"][0].value("with", ""), "bob");
    auto [bob_on_a, bob_again] = login_on("node-a", "bob");
    EXPECT_EQ(entry(bob_again, "with", "alice"), (json{{"with", "alice"}, {"seq", 2}, {"read", 2}, {"unread", 0}}))
        << bob_again;
}

TEST_F(ClusterConversationsTest, WithoutRedisWhatIsKeptForAUserIsUnavailableNotLost) {
    auto [alice, welcome] = login_on("node-a", "alice");
    EXPECT_EQ(dm(alice, "bob", "before", 1)["seq"], 1);

    daemon_process& a = *nodes_.at("node-a");
    daemon_process& b = *nodes_.at("node-b");
    const std::size_t lines = a.line_count();
    const std::size_t lines_b = b.line_count();
    redis_->stop();
    ASSERT_TRUE(a.wait_for_line("lost redis;", lines));
    // Neither numbered here alone nor dropped: the sender is told, and may send it again.
    expect_error_reply(alice, {{"type", "dm"}, {"to", "bob"}, {"text", "while down"}, {"id", 2}}, "unavailable");
    expect_error_reply(alice, {{"type", "read"}, {"with", "bob"}, {"seq", 1}, {"id", 3}}, "unavailable");
    expect_error_reply(alice, {{"type", "dm_history"}, {"with", "bob"}, {"id", 4}}, "unavailable");
    // A login meanwhile: welcome without conversations (unknown, not none).
    auto [carol, carol_welcome] = login_on("node-a", "carol");
    EXPECT_FALSE(carol_welcome.contains("conversations")) << carol_welcome;

    redis_->start();
    ASSERT_TRUE(a.wait_for_line("in sync", lines, milliseconds(20000)));
    ASSERT_TRUE(b.wait_for_line("in sync", lines_b, milliseconds(20000)));
    EXPECT_EQ(dm(alice, "bob", "after", 5)["seq"], 2);
    auto [bob, bob_welcome] = login_on("node-b", "bob");
    EXPECT_EQ(entry(bob_welcome, "with", "alice"), (json{{"with", "alice"}, {"seq", 2}, {"read", 0}, {"unread", 2}}))
        << bob_welcome;
    json page = call(bob, {{"type", "dm_history"}, {"with", "alice"}, {"id", 6}});
    ASSERT_EQ(page["messages"].size(), 2u) << page;
    EXPECT_EQ(page["messages"][0]["text"], "before");
    EXPECT_EQ(page["messages"][1]["text"], "after");
}

}  // namespace
}  // namespace parley::integration
