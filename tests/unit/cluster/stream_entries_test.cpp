// A room's stream entries read back in every layout the scripts write or wrote (stream_entries.hpp).

#include "rooms/cluster/stream_entries.hpp"

#include "rooms/cluster/said_batch.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace parley::cluster {
namespace {

redis_reply text(std::string t) {
    redis_reply r;
    r.type = redis_reply::kind::string;
    r.text = std::move(t);
    return r;
}

redis_reply entry(std::string id, const std::vector<std::string>& fields) {
    redis_reply values;
    values.type = redis_reply::kind::array;
    for (const auto& f : fields) {
        values.elements.push_back(text(f));
    }
    redis_reply e;
    e.type = redis_reply::kind::array;
    e.elements = {text(std::move(id)), std::move(values)};
    return e;
}

TEST(stream_entries, every_layout_reads_back_alike) {
    const std::string before = R"({"type":"message","room":"lobby","seq":)";
    redis_reply reply;
    reply.type = redis_reply::kind::array;
    // A say stored by scripts::say: the whole JSON.
    reply.elements.push_back(entry("6-1", {"j", before + "6}", "t", "1700", "a", "0.1.2", "n", "node-a:run:9"}));
    // One stored by a batch of says: the JSON without the seq's digits, and where they go.
    reply.elements.push_back(
        entry("7-1", {"x", std::to_string(before.size()) + "\n1701\n0.1.3\nnode-b:run:10\n" + before + "}"}));
    // Not a message: left out.
    reply.elements.push_back(entry("8-1", {"x", "nonsense"}));
    // A say of a batch as read_log gives it now: a block of one say (said_batch.hpp), whose
    // JSON is written back with the stream's room.
    std::string said;
    const said_batch::origin origin = said_batch::start(said, "node-c", "run", 11, 1690);
    said_batch::append(said, origin, 11, 1702, "0.1.4", "ann", R"("hello")");
    reply.elements.push_back(entry("9-1", {"y", said}));
    reply.elements.push_back(entry("10-1", {"y", "node-c:run\n12\n1703\n\nann\nnot JSON"}));
    const auto entries = parse_stream(reply, "lobby");
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_EQ(entries[0].seq, 6);
    EXPECT_EQ(entries[0].json, before + "6}");
    EXPECT_EQ(entries[0].ts, 1700);
    EXPECT_EQ(entries[0].ack, "0.1.2");
    EXPECT_EQ(entries[0].origin, "node-a");
    EXPECT_EQ(entries[1].seq, 7);
    EXPECT_EQ(entries[1].json, before + "7}");
    EXPECT_EQ(entries[1].ts, 1701);
    EXPECT_EQ(entries[1].ack, "0.1.3");
    EXPECT_EQ(entries[1].origin, "node-b");
    EXPECT_EQ(entries[2].seq, 9);
    EXPECT_EQ(entries[2].json, R"({"type":"message","room":"lobby","from":"ann","text":"hello","ts":1702,"seq":9})");
    EXPECT_EQ(entries[2].ts, 1702);
    EXPECT_EQ(entries[2].ack, "0.1.4");
    EXPECT_EQ(entries[2].origin, "node-c");
}

}  // namespace
}  // namespace parley::cluster
