// history: newest by default, backwards with before, forwards with after, limits, retention.
#include "test_support.hpp"

namespace parley::integration {
namespace {

// Says "m1".."m<count>" in room and waits until the last came back (seq = i for "mi").
void fill_room(ws_client& client, const std::string& room, int count) {
    for (int i = 1; i <= count; ++i) {
        client.send_json({{"type", "say"}, {"room", room}, {"text", "m" + std::to_string(i)}});
    }
    read_until(client, is_chat("m" + std::to_string(count)));
}

// The seqs of a list of message objects, checking each one's shape on the way.
std::vector<int> seqs_of(const json& messages, const std::string& room) {
    std::vector<int> seqs;
    for (const json& m : messages) {
        const int seq = m.value("seq", 0);
        expect_message_object(m, room, "alice", "m" + std::to_string(seq));
        seqs.push_back(seq);
    }
    return seqs;
}

std::vector<int> range(int first, int last) {
    std::vector<int> out;
    for (int i = first; i <= last; ++i) {
        out.push_back(i);
    }
    return out;
}

class HistoryTest : public parley_test {
protected:
    void SetUp() override {
        parley_test::SetUp();
        alice_ = std::make_unique<ws_client>(login("alice"));
        join_room(*alice_, "h");
        fill_room(*alice_, "h", 60);
    }

    void TearDown() override {
        alice_.reset();
        parley_test::TearDown();
    }

    // The seqs history returns for the given query fields.
    std::vector<int> history(const json& query) {
        json request = query;
        request["type"] = "history";
        request["room"] = "h";
        request["id"] = "h";
        const json reply = call(*alice_, request);
        if (reply.value("type", "") != "history" || reply.value("room", "") != "h") {
            throw std::runtime_error("history " + query.dump() + " failed: " + reply.dump());
        }
        return seqs_of(reply["messages"], "h");
    }

    std::unique_ptr<ws_client> alice_;
};

TEST_F(HistoryTest, DefaultIsTheNewestFiftyOldestFirst) {
    EXPECT_EQ(history(json::object()), range(11, 60));
}

TEST_F(HistoryTest, LimitTakesTheNewest) {
    EXPECT_EQ(history({{"limit", 5}}), range(56, 60));
    EXPECT_EQ(history({{"limit", 1}}), range(60, 60));
}

TEST_F(HistoryTest, BeforeGoesBackwards) {
    EXPECT_EQ(history({{"before", 20}, {"limit", 5}}), range(15, 19));
    EXPECT_EQ(history({{"before", 3}}), range(1, 2));
    EXPECT_EQ(history({{"before", 1}}), std::vector<int>{});
    EXPECT_EQ(history({{"before", 1000}, {"limit", 3}}), range(58, 60));
}

TEST_F(HistoryTest, AfterGoesForwards) {
    EXPECT_EQ(history({{"after", 20}, {"limit", 5}}), range(21, 25));
    EXPECT_EQ(history({{"after", 0}}), range(1, 50));
    EXPECT_EQ(history({{"after", 58}}), range(59, 60));
    EXPECT_EQ(history({{"after", 60}}), std::vector<int>{});
}

TEST_F(HistoryTest, LimitUpToFiveHundred) {
    EXPECT_EQ(history({{"limit", 500}}), range(1, 60));
    EXPECT_EQ(history({{"after", 0}, {"limit", 500}}), range(1, 60));
    expect_error_reply(*alice_, {{"type", "history"}, {"room", "h"}, {"limit", 501}, {"id", 1}}, "bad_request");
}

TEST_F(HistoryTest, BeforeAndAfterTogetherIsBadRequest) {
    expect_error_reply(*alice_, {{"type", "history"}, {"room", "h"}, {"before", 30}, {"after", 10}, {"id", 1}},
                       "bad_request");
}

TEST_F(HistoryTest, ReplyEchoesId) {
    const json reply = call(*alice_, {{"type", "history"}, {"room", "h"}, {"limit", 1}, {"id", 77}});
    EXPECT_EQ(reply["re"], 77);
    EXPECT_EQ(reply.size(), 4u) << "history is {type, room, messages, re}: " << reply;
}

TEST_F(HistoryTest, JoinedCarriesTheLastFifty) {
    ws_client bob = login("bob");
    const json joined = join_room(bob, "h");
    EXPECT_EQ(seqs_of(joined["history"], "h"), range(11, 60));
}

// The memory store: history_per_room is all there is.
class RetentionTest : public parley_test {
protected:
    std::vector<std::string> daemon_args() const override {
        auto args = relaxed_rate_args();
        args.insert(args.end(), {"--history-store", "memory", "--history", "50"});
        return args;
    }
};

TEST_F(RetentionTest, OnlyTheKeptMessagesAreServed) {
    ws_client alice = login("alice");
    const json first = join_room(alice, "h");
    fill_room(alice, "h", 70);
    const json reply = call(alice, {{"type", "history"}, {"room", "h"}, {"limit", 500}, {"id", 1}});
    EXPECT_EQ(seqs_of(reply["messages"], "h"), range(21, 70));
    EXPECT_EQ(seqs_of(call(alice, {{"type", "history"}, {"room", "h"}, {"before", 25}, {"id", 2}})["messages"], "h"),
              range(21, 24));

    // A client that last saw seq 5 cannot be brought up to date: recovered is false.
    ws_client bob = login("bob");
    const json joined = join_room(bob, "h", {{"after", 5}, {"epoch", first["epoch"]}});
    EXPECT_EQ(joined["recovered"], false) << joined;
    EXPECT_EQ(seqs_of(joined["history"], "h"), range(21, 70));
}

// The SQLite store: the file keeps retain_messages per room, memory the newest history_per_room
// of them. Retention follows each write, so it shows once the batch is written.
class FileRetentionTest : public parley_test {
protected:
    std::vector<std::string> daemon_args() const override {
        auto args = relaxed_rate_args();
        args.insert(args.end(), {"--history", "20", "--set", "rooms.joined_history=20", "--set",
                                 "history.retain_messages=50"});
        return args;
    }
};

TEST_F(FileRetentionTest, OnlyTheKeptMessagesAreServed) {
    ws_client alice = login("alice");
    const json first = join_room(alice, "h");
    fill_room(alice, "h", 70);
    std::vector<int> newest;
    for (int i = 0; i < 100 && newest != range(21, 70); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        newest = seqs_of(call(alice, {{"type", "history"}, {"room", "h"}, {"limit", 500}, {"id", 1}})["messages"], "h");
    }
    EXPECT_EQ(newest, range(21, 70));
    EXPECT_EQ(seqs_of(call(alice, {{"type", "history"}, {"room", "h"}, {"before", 25}, {"id", 2}})["messages"], "h"),
              range(21, 24))
        << "from the file: memory holds 51..70";
    EXPECT_EQ(seqs_of(call(alice, {{"type", "history"}, {"room", "h"}, {"after", 3}, {"limit", 5}, {"id", 3}})["messages"],
                      "h"),
              range(21, 25));

    ws_client bob = login("bob");
    const json joined = join_room(bob, "h", {{"after", 5}, {"epoch", first["epoch"]}});
    EXPECT_EQ(joined["recovered"], false) << joined;
    EXPECT_EQ(seqs_of(joined["history"], "h"), range(51, 70)) << "what memory holds; the rest by paging";
}

}  // namespace
}  // namespace parley::integration
