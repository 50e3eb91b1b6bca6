// direct_conversations and read_marker_book without sockets: keys, numbering, paging, and
// markers that follow the users online and are stored only when asked.

#include "protocol/frame_encoder.hpp"
#include "rooms/direct_conversations.hpp"
#include "rooms/history/memory_history_store.hpp"
#include "rooms/read_marker_book.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

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
