// The memory history store: seq arithmetic of before/after/limit and retention.

#include "rooms/history/memory_history_store.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace parley::rooms::tests {
namespace {

// Stores messages whose bytes are their seq, so results are easy to read back.
void append_up_to(room_log& log, std::int64_t last) {
    for (std::int64_t seq = log.last_seq() + 1; seq <= last; ++seq) {
        log.append(seq, 0, protocol::shared_frame::copy_of(std::to_string(seq)));
    }
}

std::vector<std::int64_t> seqs(const std::vector<protocol::shared_frame>& frames) {
    std::vector<std::int64_t> out;
    for (const auto& f : frames) {
        out.push_back(std::stoll(std::string(f.view())));
    }
    return out;
}

using list = std::vector<std::int64_t>;
constexpr std::int64_t max_seq = std::numeric_limits<std::int64_t>::max();

TEST(memory_history_store, an_empty_log) {
    auto store = make_memory_history_store(10, 42);
    log_handle log = store->open("r");
    EXPECT_EQ(log->epoch(), 42);
    EXPECT_EQ(log->last_seq(), 0);
    EXPECT_EQ(log->first_retained_seq(), 1);
    EXPECT_TRUE(log->before(1, 10).empty());
    EXPECT_TRUE(log->after(0, 10).empty());
}

TEST(memory_history_store, logs_are_per_room_and_outlive_their_users) {
    auto store = make_memory_history_store(10, 1);
    log_handle a = store->open("a");
    append_up_to(*a, 3);
    EXPECT_EQ(store->open("a").get(), a.get()) << "the same log on every open";
    EXPECT_EQ(store->open("a")->last_seq(), 3);
    EXPECT_NE(store->open("b").get(), a.get());
    EXPECT_EQ(store->open("b")->last_seq(), 0);
}

TEST(memory_history_store, before_gives_the_newest_older_messages_oldest_first) {
    auto store = make_memory_history_store(100, 1);
    log_handle log = store->open("r");
    append_up_to(*log, 10);
    EXPECT_EQ(seqs(log->before(11, 3)), (list{8, 9, 10}));
    EXPECT_EQ(seqs(log->before(5, 3)), (list{2, 3, 4}));
    EXPECT_EQ(seqs(log->before(5, 100)), (list{1, 2, 3, 4}));
    EXPECT_EQ(seqs(log->before(2, 5)), (list{1}));
    EXPECT_TRUE(log->before(1, 5).empty());
    EXPECT_TRUE(log->before(0, 5).empty());
    EXPECT_TRUE(log->before(6, 0).empty());
    EXPECT_EQ(seqs(log->before(max_seq, 2)), (list{9, 10})) << "before beyond the end means the newest";
}

TEST(memory_history_store, after_gives_the_oldest_newer_messages) {
    auto store = make_memory_history_store(100, 1);
    log_handle log = store->open("r");
    append_up_to(*log, 10);
    EXPECT_EQ(seqs(log->after(0, 3)), (list{1, 2, 3}));
    EXPECT_EQ(seqs(log->after(7, 3)), (list{8, 9, 10}));
    EXPECT_EQ(seqs(log->after(7, 100)), (list{8, 9, 10}));
    EXPECT_EQ(seqs(log->after(9, 3)), (list{10}));
    EXPECT_TRUE(log->after(10, 3).empty());
    EXPECT_TRUE(log->after(11, 3).empty());
    EXPECT_TRUE(log->after(4, 0).empty());
}

TEST(memory_history_store, extreme_arguments_stay_in_range) {
    auto store = make_memory_history_store(100, 1);
    log_handle log = store->open("r");
    append_up_to(*log, 5);
    const auto all = std::numeric_limits<std::size_t>::max();
    EXPECT_TRUE(log->after(max_seq, 3).empty());
    EXPECT_TRUE(log->after(max_seq - 1, all).empty());
    EXPECT_EQ(seqs(log->after(0, all)), (list{1, 2, 3, 4, 5}));
    EXPECT_EQ(seqs(log->before(max_seq, all)), (list{1, 2, 3, 4, 5}));
    EXPECT_EQ(seqs(log->before(4, all)), (list{1, 2, 3}));
}

TEST(memory_history_store, retention_keeps_the_newest_per_room) {
    auto store = make_memory_history_store(4, 1);
    log_handle log = store->open("r");
    append_up_to(*log, 3);
    EXPECT_EQ(log->first_retained_seq(), 1);
    append_up_to(*log, 10);
    EXPECT_EQ(log->last_seq(), 10);
    EXPECT_EQ(log->first_retained_seq(), 7);
    EXPECT_EQ(seqs(log->after(0, 100)), (list{7, 8, 9, 10})) << "dropped messages are not returned";
    EXPECT_EQ(seqs(log->after(5, 2)), (list{7, 8}));
    EXPECT_EQ(seqs(log->before(9, 100)), (list{7, 8}));
    EXPECT_TRUE(log->before(7, 100).empty());
    EXPECT_EQ(seqs(log->before(11, 100)), (list{7, 8, 9, 10}));
}

TEST(memory_history_store, retained_frames_are_the_appended_buffers) {
    auto store = make_memory_history_store(4, 1);
    log_handle log = store->open("r");
    auto frame = protocol::shared_frame::copy_of("1");
    log->append(1, 0, frame);
    auto got = log->after(0, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].identity(), frame.identity()) << "history holds references, not copies";
}

TEST(memory_history_store, seqs_may_jump_and_reads_follow_them) {
    // A durable store continues above its reserved seqs after a crash: seqs are not contiguous.
    auto store = make_memory_history_store(100, 1);
    log_handle log = store->open("r");
    append_up_to(*log, 3);
    log->append(1000, 0, protocol::shared_frame::copy_of("1000"));
    log->append(1001, 0, protocol::shared_frame::copy_of("1001"));
    EXPECT_EQ(seqs(log->after(2, 10)), (list{3, 1000, 1001}));
    EXPECT_EQ(seqs(log->after(500, 10)), (list{1000, 1001}));
    EXPECT_EQ(seqs(log->before(1001, 2)), (list{3, 1000}));
    EXPECT_EQ(seqs(log->before(999, 10)), (list{1, 2, 3}));
    EXPECT_TRUE(log->recovers(3, 2)) << "two messages after 3, however far their seqs jumped";
    EXPECT_FALSE(log->recovers(3, 1));
}

TEST(memory_history_store, messages_older_than_the_age_limit_are_gone) {
    auto store = make_memory_history_store(100, 1, 60'000);
    log_handle log = store->open("r");
    auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch()).count();
    log->append(1, now - 120'000, protocol::shared_frame::copy_of("1"));
    log->append(2, now - 90'000, protocol::shared_frame::copy_of("2"));
    log->append(3, now - 1'000, protocol::shared_frame::copy_of("3"));
    log->append(4, now, protocol::shared_frame::copy_of("4"));
    EXPECT_EQ(seqs(log->after(0, 10)), (list{3, 4}));
    EXPECT_EQ(seqs(log->before(5, 10)), (list{3, 4}));
    EXPECT_EQ(log->first_retained_seq(), 3);
    EXPECT_FALSE(log->recovers(1, 10)) << "2 expired: a client that had 1 missed it";
    EXPECT_TRUE(log->recovers(2, 10));
}

TEST(memory_history_store, a_history_query_is_answered_from_memory) {
    auto store = make_memory_history_store(4, 1);
    log_handle log = store->open("r");
    append_up_to(*log, 10);
    history_answer newest = log->query(std::nullopt, std::nullopt, 3);
    EXPECT_FALSE(newest.stored) << "memory is the whole history: nothing to read elsewhere";
    EXPECT_EQ(seqs(join_answer({}, newest)), (list{8, 9, 10}));
    history_answer old = log->query(5, std::nullopt, 3);
    EXPECT_FALSE(old.stored);
    EXPECT_TRUE(join_answer({}, old).empty()) << "5 and older were dropped";
    history_answer after = log->query(std::nullopt, 6, 10);
    EXPECT_EQ(seqs(join_answer({}, after)), (list{7, 8, 9, 10}));
}

TEST(memory_history_store, revise_replaces_what_history_returns) {
    auto store = make_memory_history_store(4, 1);
    log_handle log = store->open("r");
    append_up_to(*log, 6);
    const std::int64_t bytes = log->memory_bytes();
    ASSERT_TRUE(log->revise(4, protocol::shared_frame::copy_of("44")));
    EXPECT_EQ(log->memory_bytes(), bytes + 1) << "one byte more than \"4\"";
    EXPECT_EQ(seqs(log->before(7, 10)), (list{3, 44, 5, 6}));
    history_answer answer = log->query(std::nullopt, 2, 10);
    EXPECT_EQ(seqs(join_answer({}, answer)), (list{3, 44, 5, 6}));
    std::optional<log_entry> revised = log->entry(4);
    ASSERT_TRUE(revised);
    EXPECT_EQ(revised->seq, 4);
    EXPECT_EQ(std::string(revised->frame.view()), "44");

    EXPECT_FALSE(log->entry(2)) << "dropped by the memory limit";
    EXPECT_FALSE(log->revise(2, protocol::shared_frame::copy_of("22")));
    EXPECT_FALSE(log->revise(7, protocol::shared_frame::copy_of("77")));
    EXPECT_EQ(log->memory_bytes(), bytes + 1);
    EXPECT_EQ(seqs(log->after(0, 10)), (list{3, 44, 5, 6}));
}

TEST(memory_history_store, an_expired_message_is_not_revised) {
    auto store = make_memory_history_store(100, 1, 60'000);
    log_handle log = store->open("r");
    auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch()).count();
    log->append(1, now - 120'000, protocol::shared_frame::copy_of("1"));
    log->append(2, now, protocol::shared_frame::copy_of("2"));
    EXPECT_FALSE(log->entry(1));
    EXPECT_FALSE(log->revise(1, protocol::shared_frame::copy_of("11")));
    ASSERT_TRUE(log->entry(2));
    EXPECT_EQ(log->entry(2)->ts, now);
}

}  // namespace
}  // namespace parley::rooms::tests
