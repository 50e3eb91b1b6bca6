// Edit and delete through the protocol: the author edits within the window, the author or a
// moderator deletes; each is an event in the room's sequence pointing at the message; history
// shows the new text marked edited, or a tombstone without text; bad requests change nothing.

#include "tests/unit/rooms/token_world.hpp"

namespace parley::rooms::tests {
namespace {

using namespace parley::test_tokens;

// Says text in room and returns its seq from the ack.
std::int64_t said_seq(chat_world& world, test_client& c, std::string_view room, std::string_view text) {
    c.take();
    c.send({{"type", "say"}, {"room", room}, {"text", text}, {"id", "s"}});
    world.run();
    const json ack = c.take().front();
    EXPECT_EQ(ack.value("type", ""), "ack") << ack.dump();
    return ack.value("seq", std::int64_t{0});
}

// The room's history as the client gets it (forgets what it received before).
json history_of(chat_world& world, test_client& c, std::string_view room) {
    c.take();
    c.send({{"type", "history"}, {"room", room}, {"id", "h"}});
    world.run();
    return c.take().back().at("messages");
}

const json* entry_with_seq(const json& messages, std::int64_t seq) {
    for (const json& m : messages) {
        if (m.value("seq", std::int64_t{-1}) == seq) {
            return &m;
        }
    }
    return nullptr;
}

struct editing_room {
    chat_world world{token_mode_settings(), 1};
    test_client& olivia = token_client(world, "olivia");  // the owner (made the room)
    test_client& mike = token_client(world, "mike");
    test_client& nina = token_client(world, "nina");
    editing_room() {
        for (test_client* c : {&olivia, &mike, &nina}) {
            world.join(*c, "den");
        }
        world.run();
    }
};

TEST(message_change, the_author_edits_and_everyone_sees_the_new_text) {
    editing_room r;
    const std::int64_t seq = said_seq(r.world, r.mike, "den", "helo");
    r.nina.take();
    r.mike.send({{"type", "edit"}, {"room", "den"}, {"seq", seq}, {"text", "hello"}, {"id", "e"}});
    r.world.run();
    const std::vector<json> mine = r.mike.take();
    ASSERT_GE(mine.size(), 2u);
    EXPECT_EQ(mine[0].value("type", ""), "ack") << "the ack first";
    const std::vector<json> seen = r.nina.take();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].value("type", ""), "edited");
    EXPECT_EQ(seen[0].value("target", 0), seq);
    EXPECT_EQ(seen[0].value("seq", 0), seq + 1) << "an event in the room's sequence";
    EXPECT_EQ(seen[0].value("text", ""), "hello");
    EXPECT_EQ(seen[0].value("by", ""), "mike");

    const json history = history_of(r.world, r.nina, "den");
    const json* original = entry_with_seq(history, seq);
    ASSERT_NE(original, nullptr) << history.dump();
    EXPECT_EQ(original->value("text", ""), "hello");
    EXPECT_TRUE(original->value("edited", false));
    EXPECT_EQ(original->value("from", ""), "mike");
}

TEST(message_change, a_delete_leaves_a_tombstone_and_takes_the_text_out_of_earlier_edits) {
    editing_room r;
    const std::int64_t seq = said_seq(r.world, r.mike, "den", "my password is hunter2");
    r.mike.send({{"type", "edit"}, {"room", "den"}, {"seq", seq}, {"text", "my password is hunter3"}});
    r.world.run();
    r.nina.take();
    r.olivia.take();
    r.olivia.send({{"type", "delete"}, {"room", "den"}, {"seq", seq}, {"id", "d"}});  // the owner deletes
    r.world.run();
    const std::vector<json> seen = r.nina.take();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].value("type", ""), "deleted");
    EXPECT_EQ(seen[0].value("target", 0), seq);
    EXPECT_EQ(seen[0].value("by", ""), "olivia");

    const json history = history_of(r.world, r.nina, "den");
    const std::string dumped = history.dump();
    EXPECT_EQ(dumped.find("hunter"), std::string::npos) << "no copy of the text is left: " << dumped;
    const json* tombstone = entry_with_seq(history, seq);
    ASSERT_NE(tombstone, nullptr);
    EXPECT_TRUE(tombstone->value("deleted", false));
    EXPECT_FALSE(tombstone->contains("text"));
    const json* edit = entry_with_seq(history, seq + 1);
    ASSERT_NE(edit, nullptr);
    EXPECT_EQ(edit->value("type", ""), "edited") << "the edit keeps its place";
    EXPECT_TRUE(edit->value("deleted", false));

    r.mike.take();
    r.mike.send({{"type", "delete"}, {"room", "den"}, {"seq", seq}, {"id", 2}});
    EXPECT_TRUE(is_error(r.mike.take_one(), "message_not_found", 2)) << "already deleted";
}

TEST(message_change, bad_edits_and_deletes_change_nothing) {
    config::settings s = token_mode_settings();
    editing_room r;
    const std::int64_t seq = said_seq(r.world, r.mike, "den", "original");
    r.nina.take();
    r.nina.send({{"type", "edit"}, {"room", "den"}, {"seq", seq}, {"text", "not yours"}, {"id", 1}});
    EXPECT_TRUE(is_error(r.nina.take_one(), "forbidden", 1)) << "someone else's message";
    r.nina.send({{"type", "delete"}, {"room", "den"}, {"seq", seq}, {"id", 2}});
    EXPECT_TRUE(is_error(r.nina.take_one(), "forbidden", 2)) << "a member deletes only its own";
    r.mike.take();
    r.mike.send({{"type", "edit"}, {"room", "den"}, {"seq", 999}, {"text", "x"}, {"id", 3}});
    EXPECT_TRUE(is_error(r.mike.take_one(), "message_not_found", 3));
    r.mike.send({{"type", "edit"}, {"room", "den"}, {"seq", seq}, {"text", ""}, {"id", 4}});
    EXPECT_TRUE(is_error(r.mike.take_one(), "bad_request", 4));
    r.mike.send({{"type", "delete"}, {"room", "elsewhere"}, {"seq", seq}, {"id", 5}});
    EXPECT_TRUE(is_error(r.mike.take_one(), "not_in_room", 5));
    r.olivia.take();
    r.olivia.send({{"type", "mute"}, {"room", "den"}, {"user", "nina"}, {"id", "m"}});
    r.world.run();
    const std::int64_t mute_seq = r.olivia.take().front().value("seq", std::int64_t{0});
    r.olivia.send({{"type", "delete"}, {"room", "den"}, {"seq", mute_seq}, {"id", 6}});
    EXPECT_TRUE(is_error(r.olivia.take_one(), "message_not_found", 6)) << "a moderation event is not a message";

    s.edit_window_s = 0;
    r.world.hub().update_settings(s);
    r.world.run();
    r.mike.take();
    r.mike.send({{"type", "edit"}, {"room", "den"}, {"seq", seq}, {"text", "too late"}, {"id", 7}});
    EXPECT_TRUE(is_error(r.mike.take_one(), "forbidden", 7)) << "outside the edit window";

    r.world.run();
    const json history = history_of(r.world, r.nina, "den");
    const json* kept = entry_with_seq(history, seq);
    ASSERT_NE(kept, nullptr);
    EXPECT_EQ(kept->value("text", ""), "original");
    EXPECT_FALSE(kept->contains("edited"));
}

TEST(message_change, without_tokens_nobody_edits_or_deletes) {
    chat_world world(test_settings(), 1);
    test_client& ann = world.login("ann");
    world.join(ann, "den");
    const std::int64_t seq = said_seq(world, ann, "den", "mine");
    ann.send({{"type", "edit"}, {"room", "den"}, {"seq", seq}, {"text", "changed"}, {"id", 1}});
    EXPECT_TRUE(is_error(ann.take_one(), "forbidden", 1)) << "the next ann could edit this ann's messages";
    ann.send({{"type", "delete"}, {"room", "den"}, {"seq", seq}, {"id", 2}});
    EXPECT_TRUE(is_error(ann.take_one(), "forbidden", 2));
}

}  // namespace
}  // namespace parley::rooms::tests
