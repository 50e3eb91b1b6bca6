// direct_conversations and read_marker_book without sockets: keys, numbering, paging, and
// markers that follow the users online and are stored only when asked.

#include "protocol/frame_encoder.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/direct_conversations.hpp"
#include "rooms/history/memory_history_store.hpp"
#include "rooms/history/sqlite_history_store.hpp"
#include "rooms/read_marker_book.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

namespace parley::rooms::tests {
namespace {

using json = nlohmann::json;

json payload(const protocol::shared_frame& frame) { return json::parse(protocol::frame_payload(frame.view())); }

TEST(direct_conversations, one_key_per_pair_that_no_room_can_have) {
    EXPECT_EQ(direct_conversations::key_of("bob", "alice"), "dm:alice:bob");
    EXPECT_EQ(direct_conversations::key_of("alice", "bob"), "dm:alice:bob");
    EXPECT_EQ(direct_conversations::key_of("alice", "alice"), "dm:alice:alice");
    EXPECT_TRUE(direct_conversations::is_conversation_key("dm:alice:bob"));
    EXPECT_FALSE(direct_conversations::is_conversation_key("dm-lobby"));
    EXPECT_EQ(direct_conversations::other_of("dm:alice:bob", "alice"), "bob");
    EXPECT_EQ(direct_conversations::other_of("dm:alice:bob", "bob"), "alice");
    EXPECT_EQ(direct_conversations::other_of("dm:alice:alice", "alice"), "alice");
    EXPECT_EQ(direct_conversations::other_of("dm:alice:bob", "carol"), "");
    EXPECT_EQ(direct_conversations::other_of("lobby", "alice"), "");
}

TEST(direct_conversations, each_pair_numbers_its_own_messages) {
    auto store = make_memory_history_store(100, 7);
    direct_conversations conversations(*store);
    auto first = conversations.send("alice", "bob", "hi", 1000);
    auto second = conversations.send("bob", "alice", "hello", 1001);
    auto other = conversations.send("alice", "carol", "hey", 1002);
    EXPECT_EQ(first.seq, 1);
    EXPECT_EQ(second.seq, 2);
    EXPECT_EQ(other.seq, 1);
    EXPECT_EQ(payload(second.frame), (json{{"type", "dm"}, {"from", "bob"}, {"to", "alice"}, {"text", "hello"},
                                           {"seq", 2}, {"ts", 1001}}));
    EXPECT_EQ(conversations.last_seq("bob", "alice"), 2);
    EXPECT_EQ(conversations.last_seq("bob", "carol"), 0);
    EXPECT_EQ(store->activity("dm:alice:bob").last_ts, 1001);
}

TEST(direct_conversations, pages_like_a_room_and_asks_nothing_of_strangers) {
    auto store = make_memory_history_store(100, 7);
    direct_conversations conversations(*store);
    for (int i = 1; i <= 5; ++i) {
        conversations.send("alice", "bob", "m" + std::to_string(i), i);
    }
    auto page = conversations.history("bob", "alice", 4, std::nullopt, 2);
    ASSERT_TRUE(page.has_value());
    ASSERT_FALSE(page->answer.stored.has_value());
    std::vector<protocol::shared_frame> got = join_answer({}, page->answer);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(payload(got[0]).value("text", ""), "m2");
    EXPECT_EQ(payload(got[1]).value("text", ""), "m3");
    // Asking about a pair that never wrote makes nothing.
    EXPECT_FALSE(conversations.history("carol", "dave", std::nullopt, std::nullopt, 10).has_value());
    EXPECT_EQ(store->activity("dm:carol:dave").last_seq, 0);
}

// Waits (bounded) until the store has evicted at least `count` logs.
bool wait_evictions(history_store& store, std::uint64_t count) {
    for (int i = 0; i < 500 && store.stats().evictions < count; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return store.stats().evictions >= count;
}

TEST(direct_conversations, an_evicted_conversation_and_room_come_back_from_the_file) {
    namespace fs = std::filesystem;
    std::string dir = (fs::temp_directory_path() / "parley-conversations-XXXXXX").string();
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    {
        sqlite_history_options options;
        options.path = (fs::path(dir) / "history.db").string();
        options.flush_interval = std::chrono::milliseconds(5);
        options.memory_budget_bytes = 0;  // every idle log leaves once written
        auto store = open_sqlite_history_store(options);
        direct_conversations conversations(*store);
        conversations.send("alice", "bob", "one", 1000);
        conversations.send("bob", "alice", "two", 1001);
        {
            log_handle room = store->open("lobby");
            room->append(1, 1002, protocol::encode_message("lobby", "alice", "in the room", 1, 1002));
        }
        // Nobody holds either log between operations: both leave memory once written.
        ASSERT_TRUE(wait_evictions(*store, 2)) << store->stats().evictions;
        EXPECT_EQ(store->stats().log_bytes, 0);
        EXPECT_EQ(store->activity("dm:alice:bob").last_seq, 2) << "from the file";
        EXPECT_EQ(store->activity("dm:alice:bob").last_ts, 1001);

        auto page = conversations.history("alice", "bob", std::nullopt, std::nullopt, 10);
        ASSERT_TRUE(page.has_value()) << "read back, not gone";
        std::promise<std::vector<protocol::shared_frame>> result;
        store->complete(page->log, std::move(page->answer), [&](auto messages) {
            result.set_value(messages ? std::move(*messages) : std::vector<protocol::shared_frame>{});
        });
        auto future = result.get_future();
        ASSERT_EQ(future.wait_for(std::chrono::seconds(5)), std::future_status::ready);
        std::vector<protocol::shared_frame> got = future.get();
        ASSERT_EQ(got.size(), 2u);
        EXPECT_EQ(payload(got[0]).value("text", ""), "one");
        EXPECT_EQ(payload(got[1]).value("seq", 0), 2);
        page.reset();
        EXPECT_EQ(conversations.send("alice", "bob", "three", 1003).seq, 3) << "its seq continues";
        EXPECT_EQ(conversations.last_seq("alice", "bob"), 3);

        log_handle room = store->open("lobby");
        EXPECT_EQ(room->last_seq(), 1);
        std::vector<protocol::shared_frame> in_room = room->before(2, 10);
        ASSERT_EQ(in_room.size(), 1u);
        EXPECT_EQ(payload(in_room[0]).value("text", ""), "in the room");
    }
    std::error_code ignored;
    fs::remove_all(dir, ignored);
}

TEST(direct_conversations, with_the_memory_store_an_evicted_conversation_is_gone) {
    auto store = make_memory_history_store(100, 7, 0, 0);
    direct_conversations conversations(*store);
    EXPECT_EQ(conversations.send("alice", "bob", "one", 1000).seq, 1);
    EXPECT_EQ(store->activity("dm:alice:bob").last_seq, 0) << "evicted when its send ended";
    EXPECT_FALSE(conversations.history("alice", "bob", std::nullopt, std::nullopt, 10).has_value());
    EXPECT_EQ(conversations.send("alice", "bob", "again", 1001).seq, 1) << "starts over (in a new epoch)";
}

TEST(read_marker_book, stored_markers_are_loaded_at_the_first_session_and_saved_when_they_move) {
    auto store = make_memory_history_store(100, 7);
    store->save_marker("alice", "lobby", 4);
    read_marker_book book(*store);
    book.attach("alice", true);
    EXPECT_EQ(book.marker("alice", "lobby"), 4);
    EXPECT_FALSE(book.advance("alice", "lobby", 3).has_value());
    EXPECT_FALSE(book.advance("alice", "lobby", 4).has_value());
    EXPECT_EQ(book.advance("alice", "lobby", 9), 9);
    EXPECT_EQ(store->read_markers("alice").at(0).seq, 9);
    book.ensure("alice", "dm:alice:bob");
    book.ensure("bob", "dm:alice:bob");  // bob is offline: stored for his next login
    EXPECT_EQ(book.all("alice").size(), 2u);
    EXPECT_EQ(store->read_markers("bob").size(), 1u);
}

TEST(read_marker_book, markers_of_a_user_last_while_a_session_does) {
    auto store = make_memory_history_store(100, 7);
    read_marker_book book(*store);
    book.attach("alice", false);
    book.attach("alice", false);
    EXPECT_EQ(book.advance("alice", "lobby", 5), 5);
    book.detach("alice");
    EXPECT_EQ(book.marker("alice", "lobby"), 5) << "one session is still there";
    book.detach("alice");
    EXPECT_EQ(book.marker("alice", "lobby"), 0);
    EXPECT_TRUE(store->read_markers("alice").empty()) << "not stored: no identities";
    book.attach("alice", false);
    EXPECT_TRUE(book.all("alice").empty()) << "the next holder of the name starts empty";
    EXPECT_FALSE(book.advance("nobody", "lobby", 1).has_value()) << "a user with no session has no markers here";
}

}  // namespace
}  // namespace parley::rooms::tests
