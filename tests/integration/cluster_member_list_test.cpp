// A big room spread over two parleyd nodes sharing one real redis-server: `joined`, `members`
// and presence_count give the same counts and the same sorted list on either node, members on
// the other node included (docs/protocol.md, "members").

#include "cluster_nodes.hpp"
#include "redis_shards.hpp"
#include "test_support.hpp"

#include <cstdio>
#include <map>
#include <thread>

namespace parley::integration {
namespace {

class ClusterMemberListTest : public ::testing::Test {
protected:
    void SetUp() override {
        servers_ = std::make_unique<redis_shards>(redis_process::persistence::none);
        for (const char* id : {"node-a", "node-b"}) {
            const std::string config = "[cluster]\n" + servers_->config_lines() + "node_id = \"" + id +
                                       "\"\n[rooms]\njoined_members_max = 5\npresence_max_members = 10\n"
                                       "presence_count_interval_ms = 1000\n";
            nodes_[id] = start_cluster_node(id, config);
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

    // Every page of the room's list as `member` sees it, and the count of the last page.
    static std::pair<std::vector<std::string>, long> all_members(ws_client& member, const std::string& room) {
        std::vector<std::string> names;
        json request = {{"type", "members"}, {"room", room}, {"limit", 4}, {"id", "m"}};
        long count = 0;
        for (int page = 0; page < 50; ++page) {
            const json reply = call(member, request);
            EXPECT_EQ(reply.value("type", ""), "members") << reply;
            count = reply.value("member_count", 0L);
            for (const auto& n : reply["members"]) {
                names.push_back(n.get<std::string>());
            }
            if (!reply.value("more", false)) {
                break;
            }
            request["after"] = names.back();
        }
        return {names, count};
    }

    // Asks until `member`'s node counts `expected` members in room (the other node's joins
    // reach it through Redis).
    static void await_count(ws_client& member, const std::string& room, long expected) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        long count = -1;
        while (std::chrono::steady_clock::now() < deadline) {
            count = call(member, {{"type", "members"}, {"room", room}, {"limit", 1}, {"id", "c"}}).value("member_count", 0L);
            if (count == expected) {
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        FAIL() << "the node counts " << count << " members, not " << expected;
    }

    std::unique_ptr<redis_shards> servers_;
    std::map<std::string, std::unique_ptr<daemon_process>> nodes_;
};

TEST_F(ClusterMemberListTest, CountsAndPagesAreTheClustersOnEitherNode) {
    // m00 .. m23, the even ones on node-a and the odd ones on node-b, so every page mixes both.
    std::vector<ws_client> members;
    std::vector<std::string> expected;
    for (int i = 0; i < 24; ++i) {
        char name[16];  // room for any int, so no compiler sees a truncation
        std::snprintf(name, sizeof name, "m%02d", i);
        expected.push_back(name);
        members.push_back(login_on(i % 2 == 0 ? "node-a" : "node-b", name));
        join_room(members.back(), "big");
    }
    await_count(members[0], "big", 24);
    await_count(members[1], "big", 24);

    ws_client late = login_on("node-b", "zz");
    const json joined = join_room(late, "big");
    EXPECT_EQ(joined["members"], json({"m00", "m01", "m02", "m03", "m04"})) << "both nodes' members, in order";
    EXPECT_EQ(joined["member_count"], 25);
    EXPECT_EQ(joined["members_truncated"], true);
    expected.push_back("zz");

    await_count(members[0], "big", 25);
    for (ws_client* asker : {&members[0], &members[1]}) {
        const auto [names, count] = all_members(*asker, "big");
        EXPECT_EQ(names, expected);
        EXPECT_EQ(count, 25);
    }
    // Above presence_max_members both nodes tell their members the count.
    for (ws_client* member : {&members[2], &members[3]}) {
        read_until(*member, [](const json& m) {
            return m.value("type", "") == "presence_count" && m.value("count", 0) == 25;
        }, std::chrono::seconds(10));
    }
}

}  // namespace
}  // namespace parley::integration
