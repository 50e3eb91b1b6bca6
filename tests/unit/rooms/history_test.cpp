// history requests: before/after/limit through a session, oldest first.

#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace parley::rooms::tests {
namespace {

using seq_list = std::vector<std::int64_t>;

class history : public ::testing::Test {
protected:
    static config::settings limits() {
        auto s = test_settings();
        s.history_default_limit = 4;
        s.history_max_limit = 6;
        return s;
    }
    void SetUp() override {
        world.join(alice, "r");
        for (int i = 1; i <= 10; ++i) {
            alice.send({{"type", "say"}, {"room", "r"}, {"text", std::to_string(i)}});
        }
        world.run();
        alice.take();
    }
    json ask(json fields) {
        fields["type"] = "history";
        fields["room"] = "r";
        alice.send(fields);
        return alice.take_one();
    }
    static seq_list seqs(const json& reply) {
        seq_list out;
        for (const auto& m : reply.at("messages")) {
            out.push_back(m.at("seq").get<std::int64_t>());
        }
        return out;
    }

    chat_world world{limits()};
    test_client& alice = world.login("alice");
};

TEST_F(history, default_is_the_newest_default_limit) {
    json reply = ask(json::object());
    EXPECT_EQ(reply["type"], "history");
    EXPECT_EQ(reply["room"], "r");
    EXPECT_FALSE(reply.contains("re"));
    EXPECT_EQ(seqs(reply), (seq_list{7, 8, 9, 10}));
    EXPECT_EQ(reply["messages"][0], (json{{"type", "message"},
                                          {"room", "r"},
                                          {"from", "alice"},
                                          {"text", "7"},
                                          {"seq", 7},
                                          {"ts", reply["messages"][0]["ts"]}}));
}

TEST_F(history, limit_alone) {
    EXPECT_EQ(seqs(ask({{"limit", 2}})), (seq_list{9, 10}));
    EXPECT_EQ(seqs(ask({{"limit", 6}})), (seq_list{5, 6, 7, 8, 9, 10}));
}

TEST_F(history, before_gives_the_newest_older_ones) {
    EXPECT_EQ(seqs(ask({{"before", 5}})), (seq_list{1, 2, 3, 4}));
    EXPECT_EQ(seqs(ask({{"before", 5}, {"limit", 2}})), (seq_list{3, 4}));
    EXPECT_EQ(seqs(ask({{"before", 3}, {"limit", 6}})), (seq_list{1, 2}));
    EXPECT_TRUE(ask({{"before", 1}})["messages"].empty());
    EXPECT_TRUE(ask({{"before", 0}})["messages"].empty());
}

TEST_F(history, after_gives_the_oldest_newer_ones) {
    EXPECT_EQ(seqs(ask({{"after", 0}})), (seq_list{1, 2, 3, 4}));
    EXPECT_EQ(seqs(ask({{"after", 5}, {"limit", 2}})), (seq_list{6, 7}));
    EXPECT_EQ(seqs(ask({{"after", 8}, {"limit", 6}})), (seq_list{9, 10}));
    EXPECT_TRUE(ask({{"after", 10}})["messages"].empty());
    EXPECT_TRUE(ask({{"after", std::numeric_limits<std::int64_t>::max()}})["messages"].empty());
}

TEST_F(history, limits_outside_one_to_max_are_bad_requests) {
    EXPECT_TRUE(is_error(ask({{"limit", 7}, {"id", 1}}), "bad_request", 1));
    EXPECT_TRUE(is_error(ask({{"limit", 0}}), "bad_request"));
    EXPECT_TRUE(is_error(ask({{"limit", -1}}), "bad_request"));
    EXPECT_TRUE(is_error(ask({{"limit", "3"}}), "bad_request"));
}

TEST_F(history, before_and_after_together_are_a_bad_request) {
    EXPECT_TRUE(is_error(ask({{"before", 5}, {"after", 2}, {"id", "both"}}), "bad_request", "both"));
}

TEST_F(history, echoes_the_id) { EXPECT_EQ(ask({{"id", "h"}})["re"], "h"); }

TEST_F(history, only_for_members) {
    test_client& bob = world.login("bob", 1);
    bob.send({{"type", "history"}, {"room", "r"}, {"id", 4}});
    EXPECT_TRUE(is_error(bob.take_one(), "not_in_room", 4));
}

}  // namespace
}  // namespace parley::rooms::tests
