// Moderation, edit and delete on two (or three) parleyd nodes in token mode sharing one real
// redis-server: each action is numbered by the cluster like a say and changes the room on every
// node; the room's settings live in a Redis hash and deleted text leaves the room's stream
// (docs/cluster.md).
#include "cluster_nodes.hpp"
#include "redis_shards.hpp"
#include "test_support.hpp"
#include "tests/token_minter.hpp"

#include <cstdint>
#include <map>

namespace parley::integration {
namespace {

using test_tokens::token_for;

const std::string cluster_admin_token = "cluster-admin-token-0123456789";

class ClusterModerationTest : public ::testing::Test {
protected:
    void SetUp() override {
        servers_ = std::make_unique<redis_shards>(redis_process::persistence::append_only);
        redis_ = &servers_->first();
        for (const char* id : {"node-a", "node-b"}) {
            start_node(id);
        }
    }

    void TearDown() override { stop_cluster_nodes(nodes_); }

    void start_node(const std::string& id) {
        const std::string config = "[cluster]\n" + servers_->config_lines() +
                                   "node_id = \"" + id + "\"\n[auth]\nmode = \"token\"\ntoken_secret = \"" +
                                   test_tokens::token_secret + "\"\n[admin]\ntoken = \"" + cluster_admin_token + "\"\n";
        auto node = start_cluster_node(id, config);
        nodes_[id] = std::move(node);
    }

    // Logs user in on node `id` with a token (claims: a roles map, when given). A name released
    // on another node a moment ago may still be held there: asked again, bounded.
    ws_client login_on(const std::string& id, const std::string& user, const json& roles = nullptr) {
        ws_client client(nodes_.at(id)->port());
        client.upgrade();
        json claims = {{"sub", user}, {"exp", test_tokens::now_seconds() + 3600}};
        if (!roles.is_null()) {
            claims["roles"] = roles;
        }
        const std::string token = roles.is_null() ? token_for(user) : test_tokens::sign_token(claims);
        const auto deadline = std::chrono::steady_clock::now() + milliseconds(5000);
        for (int attempt = 1;; ++attempt) {
            json reply = call(client, {{"type", "login"}, {"user", user}, {"token", token}, {"id", attempt}});
            const bool taken = reply.value("type", "") == "error" && reply.value("code", "") == "username_taken";
            if (!taken || std::chrono::steady_clock::now() >= deadline) {
                if (reply.value("type", "") != "welcome") {
                    throw std::runtime_error("login of " + user + " on " + id + " got " + reply.dump());
                }
                return client;
            }
            std::this_thread::sleep_for(milliseconds(20));
        }
    }

    http_response admin_post(const std::string& id, const json& body) {
        const std::string text = body.dump();
        ws_client client(nodes_.at(id)->port());
        return parse_http_response(client.raw_http(
            "POST /admin/moderate HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer " +
            cluster_admin_token + "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(text.size()) +
            "\r\n\r\n" + text));
    }

    // Everything Redis holds of a room's messages: its stream and its revised set.
    std::string stored_in_redis(const std::string& room) const {
        redis_process& server = servers_->holding(room_key(room, ":log"));
        return server.command_text({"XRANGE", room_key(room, ":log"), "-", "+"}) +
               server.command_text({"ZRANGE", room_key(room, ":revised"), "0", "-1"});
    }

    std::unique_ptr<redis_shards> servers_;
    redis_process* redis_ = nullptr;  // the first of them (the only one, unless the test runs over shards)
    std::map<std::string, std::unique_ptr<daemon_process>> nodes_;
};

TEST_F(ClusterModerationTest, AMuteOrBanMadeOnOneNodeHoldsOnTheOtherAndAfterItsRestart) {
    ws_client olivia = login_on("node-a", "olivia", {{"den", "owner"}});
    ws_client mike = login_on("node-b", "mike");
    join_room(olivia, "den");
    // Used from now on: mike, joining next, does not become its owner (TheFirstToJoin... below).
    ASSERT_EQ(call(olivia, {{"type", "say"}, {"room", "den"}, {"text", "welcome"}, {"id", 0}}).value("type", ""), "ack");
    join_room(mike, "den");

    const json muted = call(olivia, {{"type", "mute"}, {"room", "den"}, {"user", "mike"}, {"id", 1}});
    ASSERT_EQ(muted.value("type", ""), "ack") << muted;
    const json event = read_until(mike, is_type("moderation")).back();
    EXPECT_EQ(event.value("action", ""), "mute");
    EXPECT_EQ(event.value("by", ""), "olivia");
    EXPECT_EQ(event.value("seq", 0), muted.value("seq", -1)) << "one sequence on both nodes";
    expect_error_reply(mike, {{"type", "say"}, {"room", "den"}, {"text", "hello?"}, {"id", 2}}, "muted");
    ASSERT_EQ(call(olivia, {{"type", "unmute"}, {"room", "den"}, {"user", "mike"}, {"id", 3}}).value("type", ""), "ack");
    read_until(mike, [](const json& m) { return m.value("action", "") == "unmute"; });
    EXPECT_EQ(call(mike, {{"type", "say"}, {"room", "den"}, {"text", "thanks"}, {"id", 4}}).value("type", ""), "ack");

    // Checked on node A, numbered by the cluster, applied on node B: mike leaves there.
    ASSERT_EQ(call(olivia, {{"type", "ban"}, {"room", "den"}, {"user", "mike"}, {"reason", "spam"}, {"id", 5}})
                  .value("type", ""),
              "ack");
    read_until(mike, is_type("left"));
    expect_error_reply(mike, {{"type", "join"}, {"room", "den"}, {"id", 6}}, "banned");
    EXPECT_NE(servers_->holding(room_key("den", ":settings")).command_text({"HGETALL", room_key("den", ":settings")})
                  .find("mike"),
              std::string::npos)
        << "the ban is kept in the room's settings hash";

    // A node started afresh reads the room's settings from Redis.
    mike.close_socket();  // mike leaves node B
    nodes_.at("node-b")->stop();
    nodes_.erase("node-b");
    start_node("node-b");
    ws_client again = login_on("node-b", "mike");
    expect_error_reply(again, {{"type", "join"}, {"room", "den"}, {"id", 1}}, "banned");
    ws_client olivia_b = login_on("node-b", "olivia-b", nullptr);
    const json joined = join_room(olivia_b, "den");
    ASSERT_EQ(joined.value("bans", json::array()).size(), 1u) << joined;
    EXPECT_EQ(joined["bans"][0].value("user", ""), "mike");
    EXPECT_EQ(joined["bans"][0].value("reason", ""), "spam");
}

TEST_F(ClusterModerationTest, EditAndDeleteReachEveryNodeAndTheTextLeavesTheStream) {
    ws_client olivia = login_on("node-a", "olivia", {{"den", "owner"}});
    ws_client mike = login_on("node-b", "mike");
    join_room(olivia, "den");
    // Used from now on: mike, joining next, does not become its owner (TheFirstToJoin... below).
    ASSERT_EQ(call(olivia, {{"type", "say"}, {"room", "den"}, {"text", "welcome"}, {"id", 0}}).value("type", ""), "ack");
    join_room(mike, "den");

    const json said = call(mike, {{"type", "say"}, {"room", "den"}, {"text", "my password is hunter2"}, {"id", 1}});
    ASSERT_EQ(said.value("type", ""), "ack") << said;
    read_until(olivia, is_chat("my password is hunter2"));
    const json edited = call(mike, {{"type", "edit"}, {"room", "den"}, {"seq", said["seq"]}, {"text", "oops"}, {"id", 2}});
    ASSERT_EQ(edited.value("type", ""), "ack") << edited;
    EXPECT_EQ(read_until(olivia, is_type("edited")).back().value("target", 0), said.value("seq", -1));
    const json page_a = call(olivia, {{"type", "history"}, {"room", "den"}, {"id", 3}});
    ASSERT_EQ(page_a["messages"].size(), 3u) << "welcome, mike's, the edit: " << page_a;
    EXPECT_EQ(page_a["messages"][1].value("seq", 0), said.value("seq", -1)) << page_a;
    EXPECT_EQ(page_a["messages"][1].value("text", ""), "oops") << page_a;
    EXPECT_TRUE(page_a["messages"][1].value("edited", false)) << page_a;
    EXPECT_EQ(stored_in_redis("den").find("hunter2"), std::string::npos)
        << "the edited message's old text left the stream:\n" << stored_in_redis("den");

    // Deleted by the owner on node A: gone from both nodes, from the stream, and from the edit.
    ASSERT_EQ(call(olivia, {{"type", "delete"}, {"room", "den"}, {"seq", said["seq"]}, {"id", 4}}).value("type", ""),
              "ack");
    EXPECT_EQ(read_until(mike, is_type("deleted")).back().value("target", 0), said.value("seq", -1));
    const json page_b = call(mike, {{"type", "history"}, {"room", "den"}, {"id", 5}});
    EXPECT_EQ(page_b.dump().find("oops"), std::string::npos) << page_b;
    EXPECT_TRUE(page_b["messages"][1].value("deleted", false)) << page_b;
    const std::string stored = stored_in_redis("den");
    EXPECT_EQ(stored.find("oops"), std::string::npos) << stored;
    EXPECT_EQ(stored.find("hunter2"), std::string::npos) << stored;
    EXPECT_NE(stored.find("\"deleted\":true"), std::string::npos) << "the tombstone stands in:\n" << stored;
    expect_error_reply(mike, {{"type", "edit"}, {"room", "den"}, {"seq", said["seq"]}, {"text", "x"}, {"id", 6}},
                       "message_not_found");

    // A node that joins afterwards reads the tombstone from the cluster.
    start_node("node-c");
    ws_client nina = login_on("node-c", "nina");
    const json joined = join_room(nina, "den");
    ASSERT_FALSE(joined["history"].empty()) << joined;
    EXPECT_EQ(joined.dump().find("oops"), std::string::npos) << joined;
    ASSERT_GE(joined["history"].size(), 2u) << joined;
    EXPECT_TRUE(joined["history"][1].value("deleted", false)) << joined;
    EXPECT_EQ(joined["history"][1].value("seq", 0), said.value("seq", -1)) << joined;
}

TEST_F(ClusterModerationTest, TheFirstToJoinANewRoomOwnsItOnEveryNode) {
    ws_client carol = login_on("node-a", "carol");
    join_room(carol, "fresh");
    const json owned = read_until(carol, is_type("moderation")).back();
    EXPECT_EQ(owned.value("action", ""), "set_role");
    EXPECT_EQ(owned.value("user", ""), "carol");
    EXPECT_EQ(owned.value("role", ""), "owner");

    ws_client dave = login_on("node-b", "dave");
    const json joined = join_room(dave, "fresh");
    EXPECT_EQ(joined.value("roles", json::object()), json({{"carol", "owner"}})) << "dave, second, owns nothing";
    expect_error_reply(dave, {{"type", "set_topic"}, {"room", "fresh"}, {"text", "mine"}, {"id", 1}}, "forbidden");
    ASSERT_EQ(call(carol, {{"type", "set_topic"}, {"room", "fresh"}, {"text", "ours"}, {"id", 2}}).value("type", ""),
              "ack");
    EXPECT_EQ(read_until(dave, is_type("moderation")).back().value("topic", ""), "ours");
    const json listed = call(dave, {{"type", "rooms"}, {"id", 3}});
    EXPECT_NE(listed.dump().find("\"ours\""), std::string::npos) << listed;
}

TEST_F(ClusterModerationTest, TheAdminApiActsThroughTheCluster) {
    ws_client mike = login_on("node-b", "mike");
    join_room(mike, "den");
    const json said = call(mike, {{"type", "say"}, {"room", "den"}, {"text", "leaked key"}, {"id", 1}});
    ASSERT_EQ(said.value("type", ""), "ack") << said;
    // Node A holds the room's newest messages as every node does.
    const auto deadline = std::chrono::steady_clock::now() + milliseconds(5000);
    http_response deleted;
    do {
        deleted = admin_post("node-a", {{"room", "den"}, {"action", "delete"}, {"seq", said["seq"]}});
    } while (deleted.status == 404 && std::chrono::steady_clock::now() < deadline);
    ASSERT_EQ(deleted.status, 200) << deleted.body;
    EXPECT_EQ(read_until(mike, is_type("deleted")).back().value("by", ""), "@admin");
    EXPECT_EQ(stored_in_redis("den").find("leaked key"), std::string::npos);

    const http_response banned = admin_post("node-a", {{"room", "den"}, {"action", "ban"}, {"user", "mike"}});
    ASSERT_EQ(banned.status, 200) << banned.body;
    read_until(mike, is_type("left"));
    expect_error_reply(mike, {{"type", "join"}, {"room", "den"}, {"id", 2}}, "banned");
    EXPECT_TRUE(nodes_.at("node-a")->wait_for_line("admin audit: ", 0, milliseconds(2000)));
    EXPECT_EQ(admin_post("node-b", {{"room", "den"}, {"action", "unban"}, {"user", "nobody"}}).status, 404);
}

}  // namespace
}  // namespace parley::integration
