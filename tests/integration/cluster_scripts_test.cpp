// The cluster's stream scripts (rooms/cluster/cluster_scripts.hpp) run by a real redis-server:
// a batch of says is stored as one stream entry, and every reader of a room's stream (read_log,
// log_tips, the say script's check for a say sent again) still sees each say on its own, at its
// seq. Replies are read as the node reads them (parse_stream).

#include "protocol/server_messages.hpp"
#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/said_batch.hpp"
#include "rooms/cluster/cluster_scripts.hpp"
#include "rooms/cluster/redis_reply.hpp"
#include "rooms/cluster/stream_entries.hpp"

#include "redis_process.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using parley::cluster::parse_stream;
using parley::cluster::redis_reply;
using parley::cluster::stream_entry;
using parley::integration::redis_process;
namespace keys = parley::cluster::keys;
namespace scripts = parley::cluster::scripts;

redis_reply convert(const redisReply* r) {
    redis_reply out;
    switch (r->type) {
    case REDIS_REPLY_INTEGER:
        out.type = redis_reply::kind::integer;
        out.integer = r->integer;
        break;
    case REDIS_REPLY_STRING:
        out.type = redis_reply::kind::string;
        out.text.assign(r->str, r->len);
        break;
    case REDIS_REPLY_STATUS:
        out.type = redis_reply::kind::status;
        out.text.assign(r->str, r->len);
        break;
    case REDIS_REPLY_ERROR:
        out.type = redis_reply::kind::error;
        out.text.assign(r->str, r->len);
        break;
    case REDIS_REPLY_ARRAY:
        out.type = redis_reply::kind::array;
        for (std::size_t i = 0; i < r->elements; ++i) {
            out.elements.push_back(convert(r->element[i]));
        }
        break;
    default:
        break;
    }
    return out;
}

class ClusterScriptsTest : public ::testing::Test {
protected:
    void SetUp() override {
        const timeval timeout{5, 0};
        c_ = redisConnectWithTimeout("127.0.0.1", redis_.port(), timeout);
        ASSERT_TRUE(c_ != nullptr && c_->err == 0);
    }
    void TearDown() override {
        if (c_ != nullptr) {
            redisFree(c_);
        }
    }

    redis_reply call(const std::vector<std::string>& argv) {
        std::vector<const char*> args;
        std::vector<std::size_t> lengths;
        for (const std::string& a : argv) {
            args.push_back(a.data());
            lengths.push_back(a.size());
        }
        auto* reply = static_cast<redisReply*>(
            redisCommandArgv(c_, static_cast<int>(args.size()), args.data(), lengths.data()));
        if (reply == nullptr) {
            ADD_FAILURE() << "redis did not answer";
            return {};
        }
        redis_reply out = convert(reply);
        freeReplyObject(reply);
        return out;
    }
    redis_reply eval(std::string_view script, const std::vector<std::string>& keys, const std::vector<std::string>& args) {
        std::vector<std::string> argv = {"EVAL", std::string(script), std::to_string(keys.size())};
        argv.insert(argv.end(), keys.begin(), keys.end());
        argv.insert(argv.end(), args.begin(), args.end());
        return call(argv);
    }

    // ann's message in den, as the sender's worker encodes it for the cluster.
    static std::string json(const std::string& text, std::int64_t ts, std::int64_t seq) {
        const auto made = parley::protocol::encode_message_around_seq("den", "ann", text, ts);
        return made.before + std::to_string(seq) + made.after;
    }
    static std::string before(const std::string& text, std::int64_t ts) {
        return parley::protocol::encode_message_around_seq("den", "ann", text, ts).before;
    }
    // One call of the says script for the room "den", as node-a's run1 makes it (said_batch.hpp):
    // returns the first seq it gave them.
    std::int64_t store(const std::vector<std::string>& texts, std::int64_t ts, std::size_t length = 10000) {
        std::string block;
        const auto origin = parley::cluster::said_batch::start(block, "node-a", "run1", number_ + 1, ts);
        for (const std::string& t : texts) {
            ++number_;
            parley::cluster::said_batch::append(block, origin, number_, ts++, "0.1." + std::to_string(number_),
                                                "ann", "\"" + t + "\"");
        }
        const redis_reply r = eval(scripts::says, {keys::room_seq("den"), keys::room_stream("den")},
                                   {std::to_string(length), "1", std::to_string(texts.size()),
                                    keys::room_channel("den"), block});
        EXPECT_TRUE(r.is_array() && r.elements.size() == 1) << r.describe();
        return r.is_array() && !r.elements.empty() ? r.elements[0].integer : -1;
    }
    std::vector<stream_entry> read(std::int64_t low, std::string high, int count, bool newest) {
        const redis_reply r = eval(scripts::read_log, {keys::room_stream("den"), keys::room_revised("den")},
                                   {std::to_string(low), std::move(high), std::to_string(count), newest ? "1" : "0"});
        EXPECT_TRUE(r.is_array()) << r.describe();
        return parse_stream(r, "den");
    }
    static std::vector<std::int64_t> seqs(const std::vector<stream_entry>& entries) {
        std::vector<std::int64_t> out;
        for (const auto& e : entries) {
            out.push_back(e.seq);
        }
        return out;
    }

    redis_process redis_;
    redisContext* c_ = nullptr;
    std::uint64_t number_ = 0;
};

TEST_F(ClusterScriptsTest, ABatchIsOneEntryAndEachSayReadsBackAtItsSeq) {
    ASSERT_EQ(store({"a", "b", "c"}, 1000), 1);
    ASSERT_EQ(store({"d", "e", "f", "g"}, 2000), 4);
    EXPECT_EQ(call({"XLEN", keys::room_stream("den")}).integer, 2) << "one stream entry per batch";
    EXPECT_EQ(call({"GET", keys::room_seq("den")}).text, "7");

    // Oldest first, from inside the first batch into the second.
    const auto middle = read(2, "5", 100, false);
    EXPECT_EQ(seqs(middle), (std::vector<std::int64_t>{2, 3, 4, 5}));
    ASSERT_EQ(middle.size(), 4u);
    EXPECT_EQ(middle[0].json, json("b", 1001, 2));
    EXPECT_EQ(middle[0].ts, 1001);
    EXPECT_EQ(middle[0].origin, "node-a");
    EXPECT_EQ(middle[0].ack, "0.1.2");
    EXPECT_EQ(middle[3].json, json("e", 2001, 5));
    EXPECT_EQ(middle[3].ts, 2001);

    // The count cuts inside a batch, in either direction.
    EXPECT_EQ(seqs(read(3, "", 2, false)), (std::vector<std::int64_t>{3, 4}));
    EXPECT_EQ(seqs(read(1, "", 3, true)), (std::vector<std::int64_t>{7, 6, 5}));
    EXPECT_EQ(seqs(read(1, "6", 4, true)), (std::vector<std::int64_t>{6, 5, 4, 3}));
    EXPECT_EQ(seqs(read(2, "2", 10, true)), (std::vector<std::int64_t>{2}));
    EXPECT_TRUE(read(8, "", 10, false).empty());
}

TEST_F(ClusterScriptsTest, ARevisedMessageInsideABatchTakesItsPlace) {
    store({"a", "b", "c"}, 1000);
    const std::string edited = json("b, edited", 1500, 2);
    call({"ZADD", keys::room_revised("den"), "2", "1500\n" + edited});
    const auto all = read(1, "", 10, false);
    ASSERT_EQ(seqs(all), (std::vector<std::int64_t>{1, 2, 3}));
    EXPECT_EQ(all[1].json, edited);
    EXPECT_EQ(all[1].ts, 1500);
    const auto newest = read(1, "", 2, true);
    ASSERT_EQ(seqs(newest), (std::vector<std::int64_t>{3, 2}));
    EXPECT_EQ(newest[1].json, edited);
}

TEST_F(ClusterScriptsTest, TheStreamIsTrimmedBySeqNotByEntries) {
    for (int batch = 0; batch < 30; ++batch) {
        store({"a", "b", "c", "d", "e", "f", "g"}, 1000 + 7 * batch, 20);  // seqs 1 to 210
    }
    const auto kept = read(1, "", 1000, false);
    ASSERT_FALSE(kept.empty());
    EXPECT_EQ(kept.back().seq, 210);
    // At least the length is kept, and at most the length and what one trim leaves over.
    EXPECT_GE(kept.size(), 20u);
    EXPECT_LE(kept.size(), 20u + 64u + 7u);
    EXPECT_GT(kept.front().seq, 1) << "never trimmed";
    for (std::size_t i = 1; i < kept.size(); ++i) {
        EXPECT_EQ(kept[i].seq, kept[i - 1].seq + 1) << "a hole in what is kept";
    }
}

TEST_F(ClusterScriptsTest, TheNewestTimeIsTheLastSaysOfTheLastBatch) {
    store({"a", "b"}, 1000);
    store({"c", "d", "e"}, 5000);  // 5000, 5001, 5002
    const redis_reply tips = eval(scripts::log_tips, {keys::room_seq("den"), keys::room_stream("den")}, {});
    ASSERT_TRUE(tips.is_array() && tips.elements.size() == 2) << tips.describe();
    EXPECT_EQ(tips.elements[0].text, "5");
    EXPECT_EQ(tips.elements[1].text, "5002");
}

TEST_F(ClusterScriptsTest, ASaySentAgainAfterItsBatchWasStoredIsNotStoredTwice) {
    store({"a", "b", "c"}, 1000);  // numbers 1 to 3 of node-a's run1
    // The say of number 2 sent again through the general script (its answer was lost).
    const std::string b = before("b", 1001);
    const redis_reply again = eval(
        scripts::say,
        {keys::room_seq("den"), keys::room_stream("den"), keys::room_settings("den"), keys::room_revised("den")},
        {"10000", "node-a", "run1", "1", "M\nnode-a\nden\nann\n", "1001", "0.1.2", b, "}", keys::room_channel("den"),
         "2", "1", "0", "0", "0"});
    ASSERT_TRUE(again.is_array() && again.elements.size() == 1) << again.describe();
    EXPECT_EQ(again.elements[0].integer, 0) << "stored again";
    EXPECT_EQ(call({"GET", keys::room_seq("den")}).text, "3");
    // A say not stored yet is stored after the batch's.
    const redis_reply fresh = eval(
        scripts::say,
        {keys::room_seq("den"), keys::room_stream("den"), keys::room_settings("den"), keys::room_revised("den")},
        {"10000", "node-a", "run1", "1", "M\nnode-a\nden\nann\n", "1003", "0.1.4", before("d", 1003), "}",
         keys::room_channel("den"), "4", "1", "0", "0", "0"});
    ASSERT_TRUE(fresh.is_array() && fresh.elements.size() == 1) << fresh.describe();
    EXPECT_EQ(fresh.elements[0].integer, 4);
    EXPECT_EQ(seqs(read(1, "", 10, false)), (std::vector<std::int64_t>{1, 2, 3, 4}));
}

TEST_F(ClusterScriptsTest, BatchesAnEarlierVersionStoredAreStillRead) {
    // An earlier version's batch: the field b, each say five lines "OFFSET\nTS\nACK\n
    // NODE:RUN:NUMBER\n" and the JSON without its seq's digits. A cluster upgraded in place
    // keeps its streams: history, the newest time and the check for a say sent again read it.
    std::string block;
    for (std::int64_t n = 1; n <= 2; ++n) {
        const std::string b = before(n == 1 ? "old one" : "old two", 900 + n);
        block += (n == 1 ? "" : "\n") + std::to_string(b.size()) + "\n" + std::to_string(900 + n) + "\n0.1." +
                 std::to_string(n) + "\nnode-a:run0:" + std::to_string(n) + "\n" + b + "}";
    }
    ASSERT_EQ(call({"XADD", keys::room_stream("den"), "1-2", "b", block}).text, "1-2");
    ASSERT_EQ(call({"SET", keys::room_seq("den"), "2"}).text, "OK");
    const redis_reply tips = eval(scripts::log_tips, {keys::room_seq("den"), keys::room_stream("den")}, {});
    ASSERT_TRUE(tips.is_array() && tips.elements.size() == 2) << tips.describe();
    EXPECT_EQ(tips.elements[1].text, "902");
    const redis_reply again = eval(
        scripts::say,
        {keys::room_seq("den"), keys::room_stream("den"), keys::room_settings("den"), keys::room_revised("den")},
        {"10000", "node-a", "run0", "1", "M\nnode-a\nden\nann\n", "902", "0.1.2", before("old two", 902), "}",
         keys::room_channel("den"), "2", "1", "0", "0", "0"});
    ASSERT_TRUE(again.is_array() && again.elements.size() == 1) << again.describe();
    EXPECT_EQ(again.elements[0].integer, 0) << "stored again";

    // The next version's batch: c, whose first line is the node's "NODE:RUN" only and whose
    // says give their numbers and times whole.
    ASSERT_EQ(call({"XADD", keys::room_stream("den"), "3-2", "c",
                    "node-a:run0\n3\n903\n0.1.3\nann\n\"old three\"\n4\n904\n0.1.4\nann\n\"old four\""})
                  .text,
              "3-2");
    ASSERT_EQ(call({"SET", keys::room_seq("den"), "4"}).text, "OK");
    const redis_reply c_tips = eval(scripts::log_tips, {keys::room_seq("den"), keys::room_stream("den")}, {});
    ASSERT_TRUE(c_tips.is_array() && c_tips.elements.size() == 2) << c_tips.describe();
    EXPECT_EQ(c_tips.elements[1].text, "904");
    const redis_reply c_again = eval(
        scripts::say,
        {keys::room_seq("den"), keys::room_stream("den"), keys::room_settings("den"), keys::room_revised("den")},
        {"10000", "node-a", "run0", "1", "M\nnode-a\nden\nann\n", "904", "0.1.4", before("old four", 904), "}",
         keys::room_channel("den"), "4", "1", "0", "0", "0"});
    ASSERT_TRUE(c_again.is_array() && c_again.elements.size() == 1) << c_again.describe();
    EXPECT_EQ(c_again.elements[0].integer, 0) << "stored again";

    ASSERT_EQ(store({"new"}, 1000), 5);
    const auto all = read(1, "", 10, false);
    ASSERT_EQ(seqs(all), (std::vector<std::int64_t>{1, 2, 3, 4, 5}));
    EXPECT_EQ(all[0].json, json("old one", 901, 1));
    EXPECT_EQ(all[1].json, json("old two", 902, 2));
    EXPECT_EQ(all[1].origin, "node-a");
    EXPECT_EQ(all[2].json, json("old three", 903, 3));
    EXPECT_EQ(all[3].json, json("old four", 904, 4));
    EXPECT_EQ(all[3].ack, "0.1.4");
    EXPECT_EQ(all[4].json, json("new", 1000, 5));
    EXPECT_EQ(seqs(read(1, "", 2, true)), (std::vector<std::int64_t>{5, 4}));
}

TEST_F(ClusterScriptsTest, NumbersAndTimesCountedFromABatchsFirstLineReadBackWhole) {
    // A batch whose numbers and times run backwards from its first say (a clock stepped back):
    // the newest time, history and the check for a say sent again read them whole.
    std::string block;
    const auto origin = parley::cluster::said_batch::start(block, "node-a", "run1", 500, 1700000000900);
    parley::cluster::said_batch::append(block, origin, 500, 1700000000900, "", "ann", "\"x\"");
    parley::cluster::said_batch::append(block, origin, 498, 1700000000850, "", "ann", "\"y\"");
    ASSERT_TRUE(eval(scripts::says, {keys::room_seq("den"), keys::room_stream("den")},
                     {"10000", "1", "2", keys::room_channel("den"), block})
                    .is_array());
    const redis_reply tips = eval(scripts::log_tips, {keys::room_seq("den"), keys::room_stream("den")}, {});
    ASSERT_TRUE(tips.is_array() && tips.elements.size() == 2) << tips.describe();
    EXPECT_EQ(tips.elements[1].text, "1700000000850");
    const auto all = read(1, "", 10, false);
    ASSERT_EQ(seqs(all), (std::vector<std::int64_t>{1, 2}));
    EXPECT_EQ(all[1].ts, 1700000000850);
    const auto send_again = [&](const std::string& number) {
        const redis_reply r = eval(
            scripts::say,
            {keys::room_seq("den"), keys::room_stream("den"), keys::room_settings("den"), keys::room_revised("den")},
            {"10000", "node-a", "run1", "1", "M\nnode-a\nden\nann\n", "1700000000850", "", before("y", 1700000000850),
             "}", keys::room_channel("den"), number, "1", "0", "0", "0"});
        return r.is_array() && r.elements.size() == 1 ? r.elements[0].integer : -99;
    };
    EXPECT_EQ(send_again("498"), 0) << "stored again";
    EXPECT_EQ(send_again("499"), 3) << "a say never stored taken for one";
}

TEST_F(ClusterScriptsTest, ASayIsFoundAgainOnlyByItsOwnRunAndNumber) {
    // node-b's say number 7, and node-a's say number 3 from a user named like a number, must
    // not pass for node-a's say number 7.
    for (const char* node : {"node-b", "node-a"}) {
        std::string block;
        const std::uint64_t number = node == std::string("node-b") ? 7 : 3;
        const auto origin = parley::cluster::said_batch::start(block, node, "run1", number, 1000);
        parley::cluster::said_batch::append(block, origin, number, 1000, "", "7", "\"7\"");
        ASSERT_TRUE(eval(scripts::says, {keys::room_seq("den"), keys::room_stream("den")},
                         {"10000", "1", "1", keys::room_channel("den"), block})
                        .is_array());
    }
    const auto send_again = [&](const std::string& run) {
        return eval(
            scripts::say,
            {keys::room_seq("den"), keys::room_stream("den"), keys::room_settings("den"), keys::room_revised("den")},
            {"10000", "node-a", run, "1", "M\nnode-a\nden\nann\n", "1001", "", before("a", 1001), "}",
             keys::room_channel("den"), "7", "1", "0", "0", "0"});
    };
    const redis_reply first = send_again("run1");
    ASSERT_TRUE(first.is_array() && first.elements.size() == 1) << first.describe();
    EXPECT_EQ(first.elements[0].integer, 3) << "taken for another say";
    const redis_reply second = send_again("run1");
    ASSERT_TRUE(second.is_array() && second.elements.size() == 1) << second.describe();
    EXPECT_EQ(second.elements[0].integer, 0) << "stored twice";
}

}  // namespace
