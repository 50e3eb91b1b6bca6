// Webhooks in a cluster: each event is reported once, by the node where it happened, though
// every node applies every message of a room.
#include "cluster_nodes.hpp"
#include "redis_shards.hpp"
#include "test_support.hpp"
#include "webhook_receiver.hpp"

#include <map>

namespace parley::integration {
namespace {

class ClusterWebhooksTest : public ::testing::Test {
protected:
    void SetUp() override {
        servers_ = std::make_unique<redis_shards>(redis_process::persistence::none);
        for (const char* id : {"node-a", "node-b"}) {
            nodes_[id] = start_cluster_node(
                id, "[cluster]\n" + servers_->config_lines() + "node_id = \"" + id + "\"\n\n[[webhooks]]\nurl = \"" +
                        receiver_.url() + "\"\nevents = [\"message\", \"member_joined\"]\nsecret = \"" +
                        std::string(secret) + "\"\n");
        }
    }
    void TearDown() override { stop_cluster_nodes(nodes_); }

    ws_client login_on(const std::string& id, const std::string& user) {
        ws_client client(nodes_.at(id)->port());
        client.upgrade();
        client.send_json({{"type", "login"}, {"user", user}});
        expect_type(client, "welcome");
        return client;
    }

    // (node, event) for every event of the batches taken so far.
    std::vector<std::pair<std::string, json>> events() const {
        std::vector<std::pair<std::string, json>> out;
        for (const auto& r : receiver_.requests()) {
            const json body = json::parse(r.body);
            for (const json& e : body.at("events")) {
                out.emplace_back(body.at("node").get<std::string>(), e);
            }
        }
        return out;
    }

    static constexpr const char* secret = "cluster-receiver-secret";
    webhook_receiver receiver_;
    std::unique_ptr<redis_shards> servers_;
    std::map<std::string, std::unique_ptr<daemon_process>> nodes_;
};

TEST_F(ClusterWebhooksTest, EachMessageAndJoinIsReportedOnceByItsOwnNode) {
    ws_client alice = login_on("node-a", "alice");
    ws_client bob = login_on("node-b", "bob");
    join_room(alice, "lobby");
    join_room(bob, "lobby");
    for (int i = 0; i < 5; ++i) {
        call(alice, {{"type", "say"}, {"room", "lobby"}, {"text", "a" + std::to_string(i)}, {"id", i}});
        call(bob, {{"type", "say"}, {"room", "lobby"}, {"text", "b" + std::to_string(i)}, {"id", i}});
    }
    ASSERT_TRUE(receiver_.wait([](const std::vector<webhook_receiver::request>& requests) {
        std::size_t said = 0;
        for (const auto& r : requests) {
            const json body = json::parse(r.body);
            for (const json& e : body.at("events")) {
                said += e.at("type") == "message" ? 1 : 0;
            }
        }
        return said >= 10;
    }));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // room for a duplicate to show
    std::map<std::string, std::int64_t> last_seq_from;
    std::size_t joins = 0;
    std::size_t said = 0;
    for (const auto& [node, e] : events()) {
        if (e.at("type") == "member_joined") {
            ++joins;
            EXPECT_EQ(node, e.at("user") == "alice" ? "node-a" : "node-b") << e.dump();
            continue;
        }
        ++said;
        const std::string from = e.at("user");
        EXPECT_EQ(node, from == "alice" ? "node-a" : "node-b") << e.dump();
        const std::int64_t seq = e.at("data").at("seq");
        EXPECT_GT(seq, last_seq_from[node]) << "out of order from " << node;
        last_seq_from[node] = seq;
    }
    EXPECT_EQ(said, 10u);
    EXPECT_EQ(joins, 2u);
    for (const auto& r : receiver_.requests()) {
        EXPECT_TRUE(webhook_receiver::signature_valid(secret, r.signature, r.body));
    }
}

}  // namespace
}  // namespace parley::integration
