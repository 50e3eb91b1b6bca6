// join with `after` (and `epoch`): recovering exactly what a client missed, and saying when that
// is impossible.

#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace parley::rooms::tests {
namespace {

using seq_list = std::vector<std::int64_t>;


class recovery : public ::testing::Test {
protected:
    static config::settings small_history() {
        auto s = test_settings();
        s.history_per_room = 5;
        s.joined_history = 3;
        return s;
    }
    // `speaker` says lines until the room's last seq is `last`.
    void say_until(std::int64_t last) {
        while (said_ < last) {
            ++said_;
            speaker.send({{"type", "say"}, {"room", "r"}, {"text", "line " + std::to_string(said_)}});
        }
        world.run();
    }
    json join_after(test_client& c, std::int64_t after, std::optional<std::int64_t> epoch = test_epoch) {
        json request{{"type", "join"}, {"room", "r"}, {"after", after}};
        if (epoch) {
            request["epoch"] = *epoch;
        }
        c.send(request);
        world.run();
        auto replies = c.received("joined");
        c.output.clear();
        EXPECT_EQ(replies.size(), 1u);
        return replies.empty() ? json::object() : replies.back();
    }

    chat_world world{small_history()};
    test_client& speaker = world.login("speaker", 0);
    test_client& reader = world.login("reader", 1);
    std::int64_t said_ = 0;

    void SetUp() override { world.join(speaker, "r"); }
};

TEST_F(recovery, a_returning_member_gets_exactly_what_it_missed) {
    world.join(reader, "r");
    say_until(2);
    EXPECT_EQ(seqs_of(reader.received("message")), (seq_list{1, 2}));
    reader.send({{"type", "leave"}, {"room", "r"}});
    say_until(6);

    json joined = join_after(reader, 2);
    EXPECT_EQ(seqs_of(joined["history"]), (seq_list{3, 4, 5, 6})) << "more than joined_history: all of the gap";
    EXPECT_EQ(joined["recovered"], true);
    EXPECT_EQ(joined["history"][0]["text"], "line 3");

    say_until(7);
    EXPECT_EQ(seqs_of(reader.received("message")), (seq_list{7})) << "then live, no repeat";
}

TEST_F(recovery, nothing_missed_is_a_complete_empty_recovery) {
    say_until(4);
    json joined = join_after(reader, 4);
    EXPECT_TRUE(joined["history"].empty());
    EXPECT_EQ(joined["recovered"], true);
}

TEST_F(recovery, without_epoch_the_current_one_is_assumed) {
    say_until(4);
    json joined = join_after(reader, 1, std::nullopt);
    EXPECT_EQ(seqs_of(joined["history"]), (seq_list{2, 3, 4}));
    EXPECT_EQ(joined["recovered"], true);
}

TEST_F(recovery, another_epoch_cannot_be_recovered) {
    say_until(4);
    json joined = join_after(reader, 1, test_epoch - 1);
    EXPECT_EQ(joined["recovered"], false);
    EXPECT_EQ(joined["epoch"], test_epoch) << "the client learns the current epoch";
    EXPECT_EQ(seqs_of(joined["history"]), (seq_list{2, 3, 4})) << "the newest joined_history instead";
}

TEST_F(recovery, messages_dropped_by_retention_make_it_incomplete) {
    say_until(8);  // retained: 4..8
    json joined = join_after(reader, 2);
    EXPECT_EQ(joined["recovered"], false) << "seq 3 is gone";
    EXPECT_EQ(seqs_of(joined["history"]), (seq_list{4, 5, 6, 7, 8})) << "what is left is still sent";
}

TEST_F(recovery, the_oldest_retained_message_is_just_enough) {
    say_until(8);  // retained: 4..8
    json joined = join_after(reader, 3);
    EXPECT_EQ(joined["recovered"], true);
    EXPECT_EQ(seqs_of(joined["history"]), (seq_list{4, 5, 6, 7, 8}));
}

TEST_F(recovery, an_after_beyond_the_end_returns_nothing) {
    say_until(3);
    json joined = join_after(reader, std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(joined["type"], "joined");
    EXPECT_TRUE(joined["history"].empty());
    json again = join_after(reader, 1000);
    EXPECT_TRUE(again["history"].empty());
}

TEST_F(recovery, a_member_resyncing_with_after_gets_the_same_answer) {
    world.join(reader, "r");
    say_until(5);
    json joined = join_after(reader, 3);
    EXPECT_EQ(seqs_of(joined["history"]), (seq_list{4, 5}));
    EXPECT_EQ(joined["recovered"], true);
    json stale = join_after(reader, 3, test_epoch + 1);
    EXPECT_EQ(stale["recovered"], false);
    EXPECT_EQ(reader.session.room_count(), 1u);
}

}  // namespace
}  // namespace parley::rooms::tests
