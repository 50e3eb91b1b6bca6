// Log lifetime under the memory budget, through the memory store: logs in use stay, idle logs
// stay within the budget and leave least recently used first, and a log made again after an
// eviction starts a new epoch.

#include "rooms/history/memory_history_store.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace parley::rooms::tests {
namespace {

constexpr std::int64_t start_epoch = 1000;

void say_count(room_log& log, int count) {
    for (int i = 0; i < count; ++i) {
        std::int64_t seq = log.last_seq() + 1;
        log.append(seq, 0, protocol::shared_frame::copy_of("a message of one size"));
    }
}

// The bytes one idle log named like "r0".."r9" holds with one message.
std::int64_t one_log_bytes() {
    auto store = make_memory_history_store(10, start_epoch);
    log_handle log = store->open("r0");
    say_count(*log, 1);
    return log->memory_bytes();
}

TEST(log_cache, the_total_follows_appends_and_drops) {
    auto store = make_memory_history_store(3, start_epoch);
    log_handle log = store->open("r");
    std::int64_t empty = store->stats().memory_bytes;
    EXPECT_EQ(empty, log->memory_bytes());
    say_count(*log, 1);
    std::int64_t one = store->stats().memory_bytes;
    EXPECT_GT(one, empty);
    say_count(*log, 2);
    std::int64_t three = store->stats().memory_bytes;
    say_count(*log, 10);  // the per-room limit drops the oldest: messages of one size hold the same
    EXPECT_EQ(store->stats().memory_bytes, three);
    EXPECT_EQ(log->memory_bytes(), three);
}

TEST(log_cache, idle_logs_stay_within_the_budget_and_the_least_recently_used_go) {
    const std::int64_t each = one_log_bytes();
    auto store = make_memory_history_store(10, start_epoch, 0, static_cast<std::size_t>(8 * each));
    for (int i = 1; i <= 8; ++i) {
        say_count(*store->open("r" + std::to_string(i)), 1);
    }
    EXPECT_EQ(store->stats().evictions, 0u) << "eight fit";
    EXPECT_EQ(store->stats().memory_bytes, 8 * each);
    EXPECT_EQ(store->open("r1")->last_seq(), 1) << "used again: now the most recent";
    say_count(*store->open("r9"), 1);
    // Over the budget: down to the low mark (seven logs' worth), the two least recently used.
    EXPECT_EQ(store->stats().evictions, 2u);
    EXPECT_EQ(store->stats().memory_bytes, 7 * each);
    EXPECT_EQ(store->open("r1")->last_seq(), 1) << "kept: r2 and r3 were older";
    for (int i = 4; i <= 9; ++i) {
        EXPECT_EQ(store->open("r" + std::to_string(i))->last_seq(), 1) << i;
    }
    EXPECT_EQ(store->stats().evictions, 2u);
    log_handle r2 = store->open("r2");
    EXPECT_EQ(r2->last_seq(), 0) << "r2 was evicted: the memory store has nothing to read back";
    EXPECT_EQ(store->stats().evictions, 2u) << "r2 back made eight: within the budget";
}

TEST(log_cache, a_log_in_use_is_never_evicted_however_much_it_holds) {
    auto store = make_memory_history_store(1000, start_epoch, 0, 0);
    log_handle busy = store->open("busy");
    say_count(*busy, 100);
    log_handle copy = busy;
    busy.reset();
    for (int i = 0; i < 50; ++i) {
        say_count(*store->open("other" + std::to_string(i)), 1);
    }
    EXPECT_EQ(store->stats().evictions, 50u) << "budget 0: every idle log goes at once";
    EXPECT_EQ(store->open("busy").get(), copy.get()) << "the copy keeps it in use";
    EXPECT_EQ(copy->last_seq(), 100);
    EXPECT_EQ(store->stats().memory_bytes, copy->memory_bytes()) << "only the log in use is held";
    copy.reset();
    EXPECT_EQ(store->stats().evictions, 51u);
    EXPECT_EQ(store->stats().memory_bytes, 0);
}

TEST(log_cache, a_log_made_again_after_an_eviction_starts_a_new_epoch) {
    auto store = make_memory_history_store(10, start_epoch, 0, 0);
    std::int64_t first = 0;
    {
        log_handle log = store->open("r");
        EXPECT_EQ(log->epoch(), start_epoch) << "before any eviction: the store's epoch";
        say_count(*log, 2);
        first = log->epoch();
    }
    std::set<std::int64_t> epochs{first};
    std::int64_t previous = first;
    for (int round = 0; round < 5; ++round) {
        log_handle log = store->open("r");
        EXPECT_EQ(log->last_seq(), 0);
        EXPECT_GT(log->epoch(), previous) << "a client's seqs from before are not taken for new ones";
        epochs.insert(log->epoch());
        previous = log->epoch();
        say_count(*log, 2);
    }
    EXPECT_EQ(epochs.size(), 6u) << "made again at once, still one epoch each";
}

TEST(log_cache, logs_opened_and_dropped_on_many_threads_end_idle_and_counted) {
    // For the sanitizers: the last use given back on one thread while another opens the log.
    auto store = make_memory_history_store(10, start_epoch, 0, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&store, t] {
            for (int i = 0; i < 5000; ++i) {
                log_handle log = store->open("r" + std::to_string((i + t) % 8));
                log_handle copy = log;
                log.reset();
                EXPECT_GE(copy->last_seq(), 0);
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    EXPECT_EQ(store->stats().memory_bytes, 0) << "every log idle, and evicted at budget 0";
    EXPECT_GT(store->stats().evictions, 0u);
}

}  // namespace
}  // namespace parley::rooms::tests
