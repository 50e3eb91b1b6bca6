// Room settings (roles, bans, mutes, topic, slow mode) in both stores: a change is seen at once,
// a removal removes, and (SQLite) they are written by the writer and kept across a reopen.

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

// The value of one setting, or "(none)".
std::string setting_value(history_store& store, std::string_view room, std::string_view kind,
                          std::string_view subject) {
    for (const room_setting& s : store.room_settings(room)) {
        if (s.kind == kind && s.subject == subject) {
            return s.value;
        }
    }
    return "(none)";
}

TEST(memory_store_room_settings, are_kept_per_room_and_removed_by_an_empty_value) {
    auto store = make_memory_history_store(10, 1);
    EXPECT_TRUE(store->room_settings("lounge").empty());
    store->save_room_setting("lounge", {"role", "olivia", "owner"});
    store->save_room_setting("lounge", {"ban", "mike", "0\nolivia\nspam"});
    store->save_room_setting("other", {"topic", "", "elsewhere"});
    EXPECT_EQ(setting_value(*store, "lounge", "role", "olivia"), "owner");
    EXPECT_EQ(setting_value(*store, "lounge", "ban", "mike"), "0\nolivia\nspam");
    EXPECT_EQ(store->room_settings("lounge").size(), 2u) << "the other room's topic is its own";
    store->save_room_setting("lounge", {"ban", "mike", ""});
    EXPECT_EQ(setting_value(*store, "lounge", "ban", "mike"), "(none)");
    EXPECT_EQ(store->room_settings("lounge").size(), 1u);
}

TEST(memory_store_room_settings, go_with_the_rooms_log_when_it_leaves_memory) {
    // Budget 0: an idle log leaves at once. The memory store keeps nothing of an evicted room
    // (it starts a new epoch), so its settings go too and memory follows the logs held.
    auto store = make_memory_history_store(10, 1, 0, 0);
    log_handle held = store->open("kept");
    store->save_room_setting("kept", {"topic", "", "still here"});
    {
        log_handle idle = store->open("gone");
        store->save_room_setting("gone", {"role", "olivia", "owner"});
    }
    EXPECT_EQ(store->stats().evictions, 1u);
    EXPECT_TRUE(store->room_settings("gone").empty());
    EXPECT_EQ(setting_value(*store, "kept", "topic", ""), "still here") << "a log in use keeps its settings";
}

class sqlite_store_room_settings : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "parley-settings-XXXXXX").string();
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

TEST_F(sqlite_store_room_settings, are_seen_before_written_and_kept_across_a_reopen) {
    {
        auto store = open();
        store->save_room_setting("lounge", {"role", "olivia", "owner"});
        store->save_room_setting("lounge", {"mute", "mike", "1700000000000\nolivia\nline one\nline two"});
        store->save_room_setting("lounge", {"slow_mode", "", "30"});
        // Seen at once, before the writer's pass.
        EXPECT_EQ(setting_value(*store, "lounge", "role", "olivia"), "owner");
        std::this_thread::sleep_for(100ms);
        store->save_room_setting("lounge", {"slow_mode", "", ""});  // turned off again
        EXPECT_EQ(setting_value(*store, "lounge", "slow_mode", ""), "(none)") << "a removal not yet written";
    }  // the store writes what is pending when it closes
    auto store = open();
    EXPECT_EQ(setting_value(*store, "lounge", "role", "olivia"), "owner");
    EXPECT_EQ(setting_value(*store, "lounge", "mute", "mike"), "1700000000000\nolivia\nline one\nline two");
    EXPECT_EQ(setting_value(*store, "lounge", "slow_mode", ""), "(none)");
    EXPECT_EQ(store->room_settings("lounge").size(), 2u);
    EXPECT_TRUE(store->room_settings("elsewhere").empty());
}

TEST_F(sqlite_store_room_settings, a_setting_is_seen_while_its_batch_commits) {
    // As with read markers: a read of the file and then of what is pending must not miss a
    // ban whose batch commits between the two (a banned user could walk back in).
    options_.flush_interval = 1ms;
    auto store = open();
    constexpr int rooms = 20000;
    int missed = 0;
    for (int i = 0; i < rooms; ++i) {
        const std::string room = "r" + std::to_string(i);
        store->save_room_setting(room, {"ban", "mike", "0\nolivia\nspam"});
        if (setting_value(*store, room, "ban", "mike") == "(none)") {
            ++missed;
        }
    }
    EXPECT_EQ(missed, 0) << "settings read as absent while their batch committed";
}

}  // namespace
}  // namespace parley::rooms::tests
