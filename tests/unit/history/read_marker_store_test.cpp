// Read markers and log activity in both stores: forward only, visible at once, and (SQLite)
// written in batches and kept across a reopen.

#include "protocol/server_messages.hpp"
#include "rooms/history/memory_history_store.hpp"
#include "rooms/history/sqlite_history_store.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace parley::rooms::tests {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::int64_t marker_of(history_store& store, std::string_view user, std::string_view key) {
    for (const read_marker& m : store.read_markers(user)) {
        if (m.key == key) {
            return m.seq;
        }
    }
    return -1;
}

void say_at(room_log& log, std::int64_t ts) {
    std::int64_t seq = log.last_seq() + 1;
    log.append(seq, ts, protocol::encode_message("r", "ann", "m", seq, ts));
}

TEST(memory_store_markers, move_forward_only_and_belong_to_their_user) {
    auto store = make_memory_history_store(10, 1);
    EXPECT_TRUE(store->read_markers("alice").empty());
    store->save_marker("alice", "lobby", 5);
    store->save_marker("alice", "lobby", 3);
    store->save_marker("alice", "dm:alice:bob", 0);
    EXPECT_EQ(marker_of(*store, "alice", "lobby"), 5);
    EXPECT_EQ(marker_of(*store, "alice", "dm:alice:bob"), 0);
    EXPECT_EQ(store->read_markers("alice").size(), 2u);
    EXPECT_TRUE(store->read_markers("bob").empty());
}

TEST(memory_store_markers, activity_is_the_last_seq_and_time) {
    auto store = make_memory_history_store(10, 1);
    EXPECT_EQ(store->activity("r").last_seq, 0);
    log_handle held = store->open("r");
    room_log& log = *held;
    say_at(log, 1000);
    say_at(log, 2000);
    EXPECT_EQ(store->activity("r").last_seq, 2);
    EXPECT_EQ(store->activity("r").last_ts, 2000);
}

class sqlite_store_markers : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "parley-markers-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
        options_.path = (fs::path(dir_) / "history.db").string();
        options_.flush_interval = 20ms;
    }
    void TearDown() override {
        std::error_code ignored;
        fs::remove_all(dir_, ignored);
    }
    std::unique_ptr<history_store> open() { return open_sqlite_history_store(options_); }

    std::string dir_;
    sqlite_history_options options_;
};

TEST_F(sqlite_store_markers, are_seen_before_written_and_kept_across_a_reopen) {
    {
        auto store = open();
        store->save_marker("alice", "lobby", 7);
        store->save_marker("alice", "lobby", 4);  // backwards: nothing
        store->save_marker("alice", "dm:alice:bob", 2);
        store->save_marker("bob", "dm:alice:bob", 0);
        EXPECT_EQ(marker_of(*store, "alice", "lobby"), 7);
    }
    auto store = open();
    EXPECT_EQ(marker_of(*store, "alice", "lobby"), 7);
    EXPECT_EQ(marker_of(*store, "alice", "dm:alice:bob"), 2);
    EXPECT_EQ(marker_of(*store, "bob", "dm:alice:bob"), 0);
    EXPECT_EQ(store->read_markers("carol").size(), 0u);
    // Forward only in the file as well: a lower seq written later does not win.
    store->save_marker("alice", "lobby", 6);
    for (int i = 0; i < 200 && store->stats().marker_batches == 0; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    store.reset();
    EXPECT_EQ(marker_of(*open(), "alice", "lobby"), 7);
}

TEST_F(sqlite_store_markers, a_marker_is_seen_while_its_batch_commits) {
    // A read looks in the file and then at what is not written yet; a batch committing in
    // between must not fall through both. Writing every millisecond while reading each new
    // marker at once puts many commits against many reads.
    options_.flush_interval = 1ms;
    auto store = open();
    constexpr int users = 20000;
    int missed = 0;
    for (int i = 0; i < users; ++i) {
        const std::string user = "u" + std::to_string(i);
        store->save_marker(user, "dm:a:b", 0);
        if (marker_of(*store, user, "dm:a:b") != 0) {
            ++missed;
        }
    }
    EXPECT_EQ(missed, 0) << "markers read as absent while their batch committed";
    EXPECT_GE(store->stats().marker_batches, 2u) << "the reads never met a commit";
}

TEST_F(sqlite_store_markers, many_requests_are_written_in_few_transactions) {
    auto store = open();
    constexpr int requests = 2000;
    for (int i = 1; i <= requests; ++i) {
        store->save_marker("user" + std::to_string(i % 50), "lobby", i);
    }
    for (int i = 0; i < 300 && store->stats().marker_batches == 0; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    std::this_thread::sleep_for(100ms);  // any pass still to come
    const std::uint64_t batches = store->stats().marker_batches;
    EXPECT_GE(batches, 1u);
    EXPECT_LT(batches, static_cast<std::uint64_t>(requests / 10)) << "markers are written one by one";
    EXPECT_EQ(marker_of(*store, "user0", "lobby"), 2000);
    EXPECT_EQ(marker_of(*store, "user1", "lobby"), 1951);
}

TEST_F(sqlite_store_markers, activity_of_a_log_comes_from_the_file_when_it_is_not_open) {
    {
        auto store = open();
        log_handle held = store->open("dm:alice:bob");
        room_log& log = *held;
        say_at(log, 5000);
        say_at(log, 6000);
        EXPECT_EQ(store->activity("dm:alice:bob").last_seq, 2);
    }
    auto store = open();
    log_activity found = store->activity("dm:alice:bob");
    EXPECT_EQ(found.last_seq, 2);
    EXPECT_EQ(found.last_ts, 6000);
    EXPECT_EQ(store->activity("nothing-here").last_seq, 0);
}

}  // namespace
}  // namespace parley::rooms::tests
