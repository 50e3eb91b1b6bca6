// The SQLite history store against a real database file: durability across reopen, seq
// continuation (also after a crash), memory bounds with reads from the file, retention by count
// and age, batching, and clear errors for files it cannot use.

#include "protocol/server_messages.hpp"
#include "rooms/history/sqlite_database.hpp"
#include "rooms/history/sqlite_history_store.hpp"
#include "tests/unit/history/sqlite_store_fixture.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace parley::rooms::tests {
namespace {

using protocol::shared_frame;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

class sqlite_history_store_test : public sqlite_store_fixture {};

TEST_F(sqlite_history_store_test, messages_and_seq_survive_a_restart) {
    std::vector<shared_frame> said;
    std::int64_t epoch = 0;
    {
        auto store = open();
        log_handle log = store->open("r");
        EXPECT_EQ(log->last_seq(), 0);
        said = say(*log, 5);
        epoch = log->epoch();
    }  // a clean stop writes everything
    auto store = open();
    log_handle log = store->open("r");
    EXPECT_EQ(log->epoch(), epoch) << "the epoch belongs to the file: clients' seqs stay valid";
    EXPECT_EQ(log->last_seq(), 5) << "a clean stop leaves no gap";
    EXPECT_EQ(texts(log->before(6, 10)), texts(said)) << "the same bytes come back";
    EXPECT_EQ(store->open("other")->last_seq(), 0);
    say(*log, 1);
    EXPECT_EQ(log->last_seq(), 6);
    EXPECT_TRUE(reports_.empty());
}

TEST_F(sqlite_history_store_test, after_a_crash_seq_continues_above_anything_it_gave) {
    std::string copy = (fs::path(dir_) / "crashed.db").string();
    {
        auto store = open();
        log_handle log = store->open("r");
        say(*log, 3);
        wait_written(*store);
        // The files as a kill -9 would leave them: committed batches in the database and its
        // write-ahead log, no clean stop.
        fs::copy_file(options_.path, copy);
        if (fs::exists(options_.path + "-wal")) {
            fs::copy_file(options_.path + "-wal", copy + "-wal");
        }
        say(*log, 2);  // given to clients, perhaps not written before the "crash"
    }
    options_.path = copy;
    auto store = open();
    log_handle log = store->open("r");
    EXPECT_GT(log->last_seq(), 5) << "seqs 4 and 5 may have been sent: they are never given again";
    EXPECT_EQ(log->before(log->last_seq() + 1, 10).size(), 3u) << "what was written is there";
    auto seq = log->last_seq() + 1;
    say(*log, 1);
    EXPECT_EQ(log->last_seq(), seq);
    EXPECT_TRUE(log->recovers(3, 10)) << "a client that had 3 gets everything after it, across the jump";
}

TEST_F(sqlite_history_store_test, memory_keeps_the_newest_and_older_pages_come_from_the_file) {
    options_.memory_per_room = 10;
    auto store = open();
    log_handle log = store->open("r");
    auto said = texts(say(*log, 60));
    wait_written(*store);
    auto one_more = texts(say(*log, 1));
    said.insert(said.end(), one_more.begin(), one_more.end());
    EXPECT_LE(log->memory_size(), 10u) << "written messages leave memory";
    EXPECT_EQ(log->first_retained_seq(), 1);

    auto newest = log->query(std::nullopt, std::nullopt, 5);
    EXPECT_FALSE(newest.stored) << "the newest are answered from memory";
    auto page = history(*store, log, 20, std::nullopt, 5);
    EXPECT_EQ(texts(page), std::vector<std::string>(said.begin() + 14, said.begin() + 19));
    auto across = history(*store, log, std::nullopt, 45, 500);
    EXPECT_EQ(texts(across), std::vector<std::string>(said.begin() + 45, said.end()))
        << "an `after` page joins the file's part and memory's";
    auto all = history(*store, log, std::nullopt, std::nullopt, 500);
    EXPECT_EQ(texts(all), said);
    EXPECT_FALSE(log->recovers(5, 1000)) << "most of it is only in the file: the client pages";
    EXPECT_TRUE(log->recovers(55, 1000));
}

TEST_F(sqlite_history_store_test, retention_by_count_keeps_the_newest_per_room) {
    options_.retain_messages = 20;
    options_.memory_per_room = 5;
    {
        auto store = open();
        log_handle log = store->open("r");
        say(*log, 100);
        say(*store->open("small"), 3);
    }
    auto store = open();
    log_handle log = store->open("r");
    EXPECT_EQ(log->last_seq(), 100);
    EXPECT_EQ(log->first_retained_seq(), 81);
    auto all = history(*store, log, std::nullopt, std::nullopt, 500);
    ASSERT_EQ(all.size(), 20u);
    EXPECT_NE(std::string(all.front().view()).find("\"seq\":81"), std::string::npos);
    EXPECT_EQ(store->open("small")->first_retained_seq(), 1) << "other rooms keep theirs";
}

TEST_F(sqlite_history_store_test, retention_by_age_deletes_old_messages_from_file_and_memory) {
    options_.max_age_ms = 60'000;
    options_.memory_per_room = 5;
    auto store = open();
    log_handle log = store->open("r");
    say(*log, 30, now_ms() - 120'000);  // two minutes old: expired
    wait_written(*store);
    say(*log, 4);
    // The first pass ran with the first write; the next, a second later, finds the expired
    // chunk again (it may have been written after the first pass) and deletes it.
    wait_written(*store);
    std::this_thread::sleep_for(1200ms);
    auto all = history(*store, log, std::nullopt, std::nullopt, 500);
    EXPECT_EQ(all.size(), 4u);
    sqlite_connection check(options_.path, true);
    auto rows = check.prepare("SELECT sum(count) FROM chunks");
    ASSERT_TRUE(rows.step());
    EXPECT_EQ(rows.integer(0), 4) << "expired rows are deleted, not only hidden";
}

TEST_F(sqlite_history_store_test, a_full_batch_is_written_without_waiting_for_the_interval) {
    options_.flush_interval = 60s;
    options_.batch_size = 10;
    auto store = open();
    log_handle log = store->open("r");
    say(*log, 10);
    for (int i = 0; i < 200 && store->stats().written < 10; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(store->stats().written, 10u);
    say(*log, 3);
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(store->stats().written, 10u) << "fewer than a batch wait for the interval";
    EXPECT_EQ(store->stats().backlog, 3u);
}

TEST_F(sqlite_history_store_test, messages_are_written_within_the_flush_interval) {
    options_.flush_interval = 50ms;
    auto store = open();
    log_handle log = store->open("r");
    say(*log, 3);
    auto start = std::chrono::steady_clock::now();
    while (store->stats().written < 3 && std::chrono::steady_clock::now() - start < 5s) {
        std::this_thread::sleep_for(5ms);
    }
    EXPECT_EQ(store->stats().written, 3u);
}

TEST_F(sqlite_history_store_test, a_second_store_on_the_same_file_is_refused_while_the_first_runs) {
    {
        auto first = open();
        try {
            open();
            FAIL() << "two stores write one file";
        } catch (const sqlite_error& e) {
            std::string what = e.what();
            EXPECT_NE(what.find(options_.path), std::string::npos) << what;
            EXPECT_NE(what.find("in use by another parleyd"), std::string::npos) << what;
        }
    }
    EXPECT_NO_THROW(open()) << "the lock goes with the store";
}

TEST_F(sqlite_history_store_test, a_file_that_is_not_a_database_is_refused_by_name) {
    std::ofstream(options_.path) << std::string(8192, 'x');
    try {
        open();
        FAIL() << "opened a corrupt file";
    } catch (const sqlite_error& e) {
        std::string what = e.what();
        EXPECT_NE(what.find(options_.path), std::string::npos) << what;
        EXPECT_NE(what.find("not a database"), std::string::npos) << what;
    }
}

TEST_F(sqlite_history_store_test, another_programs_database_is_refused) {
    {
        sqlite_connection other(options_.path, false);
        other.exec("CREATE TABLE accounts (id INTEGER PRIMARY KEY)");
    }
    try {
        open();
        FAIL() << "took over a foreign database";
    } catch (const sqlite_error& e) {
        EXPECT_NE(std::string(e.what()).find("not a parley history database"), std::string::npos) << e.what();
    }
}

TEST_F(sqlite_history_store_test, a_missing_directory_is_named) {
    options_.path = dir_ + "/absent/history.db";
    try {
        open();
        FAIL() << "opened a file in a missing directory";
    } catch (const sqlite_error& e) {
        std::string what = e.what();
        EXPECT_NE(what.find(dir_ + "/absent"), std::string::npos) << what;
        EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
    }
}

TEST_F(sqlite_history_store_test, an_unwritable_directory_is_named) {
    if (::geteuid() == 0) {
        GTEST_SKIP() << "root may write anywhere";
    }
    fs::path locked = fs::path(dir_) / "locked";
    fs::create_directory(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
    options_.path = (locked / "history.db").string();
    try {
        open();
        FAIL() << "opened a file in a read-only directory";
    } catch (const sqlite_error& e) {
        EXPECT_NE(std::string(e.what()).find("not writable"), std::string::npos) << e.what();
    }
    fs::permissions(locked, fs::perms::owner_all);
}

TEST_F(sqlite_history_store_test, a_damaged_page_is_found_at_open) {
    {
        auto store = open();
        log_handle log = store->open("r");
        say(*log, 2000);
    }
    // Keep the first page (the header and the schema) and scribble over every other one: the
    // tables' b-trees now hold garbage, which only reading them finds.
    {
        sqlite_connection check(options_.path, true);
        auto page_size = check.prepare("PRAGMA page_size");
        ASSERT_TRUE(page_size.step());
        auto first_page = page_size.integer(0);
        auto size = static_cast<std::int64_t>(fs::file_size(options_.path));
        ASSERT_GT(size, first_page);
        std::fstream file(options_.path, std::ios::in | std::ios::out | std::ios::binary);
        file.seekp(static_cast<std::streamoff>(first_page));
        std::string junk(static_cast<std::size_t>(size - first_page), '\x5a');
        file.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
    try {
        open();
        FAIL() << "opened a damaged database";
    } catch (const sqlite_error& e) {
        EXPECT_NE(std::string(e.what()).find(options_.path), std::string::npos) << e.what();
    }
}

// ---- idle logs and the memory budget ----

// Waits (bounded) until the store has evicted at least `count` logs.
bool wait_evictions(history_store& store, std::uint64_t count) {
    for (int i = 0; i < 500 && store.stats().evictions < count; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    return store.stats().evictions >= count;
}

TEST_F(sqlite_history_store_test, an_evicted_log_is_read_back_and_its_seq_continues_without_a_gap) {
    options_.memory_budget_bytes = 0;
    auto store = open();
    std::vector<std::string> said;
    std::int64_t epoch = 0;
    {
        log_handle log = store->open("r");
        said = texts(say(*log, 3));
        epoch = log->epoch();
    }
    ASSERT_TRUE(wait_evictions(*store, 1)) << "idle, written, over the budget: evicted";
    EXPECT_EQ(store->stats().log_bytes, 0);
    log_handle log = store->open("r");
    EXPECT_EQ(log->epoch(), epoch);
    EXPECT_EQ(log->last_seq(), 3) << "the reservation came down to the exact seq, as at a clean stop";
    EXPECT_EQ(texts(log->before(4, 10)), said) << "the newest messages are in memory again";
    say(*log, 1);
    EXPECT_EQ(log->last_seq(), 4);
    log.reset();
    ASSERT_TRUE(wait_evictions(*store, 2));
    EXPECT_EQ(store->open("r")->last_seq(), 4);
    EXPECT_TRUE(reports_.empty());
}

TEST_F(sqlite_history_store_test, an_idle_log_is_not_evicted_before_its_messages_are_written) {
    // Budget 0 and a writer that trims after every pass: each room becomes idle right after its
    // messages are queued, while the writer evicts whatever it may. Evicted too early, a room
    // would come back from the file without them.
    options_.memory_budget_bytes = 0;
    options_.flush_interval = 1ms;
    auto store = open();
    for (int i = 0; i < 300; ++i) {
        say(*store->open("r" + std::to_string(i)), 3);
        if (i >= 2) {
            log_handle back = store->open("r" + std::to_string(i - 2));
            ASSERT_EQ(back->last_seq(), 3) << "room " << i - 2;
            ASSERT_EQ(back->before(4, 10).size(), 3u) << "room " << i - 2;
        }
    }
    ASSERT_TRUE(wait_evictions(*store, 300)) << store->stats().evictions;
    for (int i = 0; i < 300; i += 37) {
        log_handle back = store->open("r" + std::to_string(i));
        EXPECT_EQ(back->last_seq(), 3) << "room " << i;
        EXPECT_EQ(back->before(4, 10).size(), 3u) << "room " << i;
    }
    EXPECT_TRUE(reports_.empty());
}

TEST_F(sqlite_history_store_test, idle_logs_stay_while_within_the_budget) {
    options_.memory_budget_bytes = 8 << 20;  // SQLite's own memory counts too (about 1 MiB here)
    auto store = open();
    room_log* first = nullptr;
    {
        log_handle log = store->open("r");
        say(*log, 3);
        first = log.get();
    }
    wait_written(*store);
    say(*store->open("other"), 1);
    wait_written(*store);
    EXPECT_EQ(store->stats().evictions, 0u);
    EXPECT_EQ(store->open("r").get(), first) << "the same log, from memory";
}

TEST_F(sqlite_history_store_test, a_read_in_flight_keeps_its_log) {
    options_.memory_budget_bytes = 0;
    options_.memory_per_room = 5;
    auto store = open();
    log_handle log = store->open("r");
    auto said = texts(say(*log, 40));
    wait_written(*store);
    say(*log, 1);  // lets the written ones leave memory
    std::promise<std::size_t> got;
    store->complete(log, log->query(std::nullopt, std::nullopt, 100),
                    [&](std::optional<std::vector<shared_frame>> messages) {
                        got.set_value(messages ? messages->size() : 0);
                    });
    log.reset();  // the read's copy is the only use now
    auto future = got.get_future();
    ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(future.get(), 41u);
    ASSERT_TRUE(wait_evictions(*store, 1)) << "idle once the read is done";
}

TEST_F(sqlite_history_store_test, unwritten_idle_logs_stay_within_the_budget_however_fast_rooms_come) {
    // A writer that would not write for an hour on its own, and rooms made, said into and left
    // as fast as this thread can: without a bound each would stay in memory unwritten. Making a
    // log while the idle ones are past the budget and its slack (a sixteenth of the budget, at
    // least 256 KiB) waits for a pass of the writer instead, so the held bytes stay within.
    constexpr std::int64_t budget = 64 * 1024;
    constexpr std::int64_t slack = 256 * 1024;
    constexpr std::int64_t one_log = 4096;  // more than a log of one message holds
    options_.memory_budget_bytes = budget;
    options_.flush_interval = 3600s;
    options_.batch_size = 1'000'000;
    auto store = open();
    std::int64_t peak = 0;
    for (int i = 0; i < 3000; ++i) {
        say(*store->open("invented-" + std::to_string(i)), 1);
        peak = std::max(peak, store->stats().log_bytes);
    }
    EXPECT_LE(peak, budget + slack + one_log);
    EXPECT_GT(store->stats().evictions, 2000u);
    for (int i = 0; i < 3000; i += 299) {
        log_handle back = store->open("invented-" + std::to_string(i));
        EXPECT_EQ(back->last_seq(), 1) << "room " << i;
        EXPECT_EQ(back->before(2, 10).size(), 1u) << "room " << i;
    }
    EXPECT_TRUE(reports_.empty());
}

TEST_F(sqlite_history_store_test, activity_of_an_evicted_log_comes_from_the_file) {
    options_.memory_budget_bytes = 0;
    auto store = open();
    {
        log_handle log = store->open("dm:alice:bob");
        say(*log, 2, 5000);
    }
    ASSERT_TRUE(wait_evictions(*store, 1));
    log_activity found = store->activity("dm:alice:bob");
    EXPECT_EQ(found.last_seq, 2);
    EXPECT_EQ(found.last_ts, 5000);
    EXPECT_EQ(store->stats().log_bytes, 0) << "activity() does not bring the log back";
}

}  // namespace
}  // namespace parley::rooms::tests
