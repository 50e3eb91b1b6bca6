// Moderation inside a room, through the protocol: the creator owns a new room in token mode,
// roles decide who may kick, ban, mute, set the topic and slow mode; every action is an event in
// the room's sequence; without tokens nobody moderates.

#include "tests/unit/rooms/token_world.hpp"

namespace parley::rooms::tests {
namespace {

using namespace parley::test_tokens;

// The `moderation` events a client received, forgetting everything it received.
std::vector<json> moderation_events(test_client& c) {
    std::vector<json> out;
    for (json& m : c.take()) {
        if (m.value("type", "") == "moderation") {
            out.push_back(std::move(m));
        }
    }
    return out;
}

struct staffed_room {
    chat_world world{token_mode_settings(), 2};
    test_client& owner = token_client(world, "olivia");
    test_client& member = token_client(world, "mike", 1);
    staffed_room() {
        world.join(owner, "lounge");
        world.join(member, "lounge");
        world.run();
        owner.take();
        member.take();
    }
};

TEST(moderation, the_creator_owns_a_new_room_and_a_member_may_not_moderate) {
    staffed_room r;
    r.member.send({{"type", "kick"}, {"room", "lounge"}, {"user", "olivia"}, {"id", 1}});
    EXPECT_TRUE(is_error(r.member.take_one(), "forbidden", 1));
    r.member.send({{"type", "set_topic"}, {"room", "lounge"}, {"text", "mine now"}, {"id", 2}});
    EXPECT_TRUE(is_error(r.member.take_one(), "forbidden", 2));
    r.world.run();
    EXPECT_TRUE(r.owner.take().empty()) << "nothing happened";
}

TEST(moderation, a_mute_is_an_event_in_the_sequence_and_stops_the_members_says) {
    staffed_room r;
    r.owner.send({{"type", "mute"}, {"room", "lounge"}, {"user", "mike"}, {"reason", "shouting"}, {"id", "m"}});
    r.world.run();
    const std::vector<json> owner_got = r.owner.take();
    ASSERT_GE(owner_got.size(), 2u);
    EXPECT_EQ(owner_got[0].value("type", ""), "ack") << "the ack comes first";
    const std::vector<json> seen = moderation_events(r.member);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].value("action", ""), "mute");
    EXPECT_EQ(seen[0].value("by", ""), "olivia");
    EXPECT_EQ(seen[0].value("user", ""), "mike");
    EXPECT_EQ(seen[0].value("reason", ""), "shouting");
    EXPECT_EQ(seen[0].value("seq", 0), owner_got[0].value("seq", -1));
    EXPECT_FALSE(seen[0].contains("until")) << "until lifted";

    r.member.send({{"type", "say"}, {"room", "lounge"}, {"text", "hello?"}, {"id", 5}});
    EXPECT_TRUE(is_error(r.member.take_one(), "muted", 5));
    r.owner.send({{"type", "unmute"}, {"room", "lounge"}, {"user", "mike"}});
    r.world.run();
    r.member.take();
    r.member.send({{"type", "say"}, {"room", "lounge"}, {"text", "thanks"}, {"id", 6}});
    r.world.run();
    EXPECT_EQ(r.member.take().front().value("type", ""), "ack");
}

TEST(moderation, a_ban_removes_the_member_and_refuses_the_next_join) {
    staffed_room r;
    r.owner.send({{"type", "ban"}, {"room", "lounge"}, {"user", "mike"}, {"duration_s", 600}, {"id", "b"}});
    r.world.run();
    const std::vector<json> got = r.member.take();
    bool left = false;
    for (const json& m : got) {
        left = left || (m.value("type", "") == "left" && m.value("room", "") == "lounge");
    }
    EXPECT_TRUE(left) << json(got).dump();
    r.member.send({{"type", "join"}, {"room", "lounge"}, {"id", "again"}});
    r.world.run();
    EXPECT_TRUE(is_error(r.member.take_one(), "banned", "again"));
    // The history keeps the ban, with its end.
    r.owner.send({{"type", "history"}, {"room", "lounge"}, {"id", "h"}});
    r.world.run();
    const json page = r.owner.take().back();
    ASSERT_EQ(page.value("type", ""), "history") << page.dump();
    ASSERT_FALSE(page.at("messages").empty());
    EXPECT_EQ(page.at("messages").back().value("action", ""), "ban");
    EXPECT_TRUE(page.at("messages").back().contains("until"));
}

TEST(moderation, bad_requests_change_nothing) {
    staffed_room r;
    r.owner.send({{"type", "set_role"}, {"room", "lounge"}, {"user", "mike"}, {"role", "king"}, {"id", 1}});
    EXPECT_TRUE(is_error(r.owner.take_one(), "bad_request", 1));
    r.owner.send({{"type", "ban"}, {"room", "lounge"}, {"user", "mike"}, {"duration_s", 0}, {"id", 2}});
    EXPECT_TRUE(is_error(r.owner.take_one(), "bad_request", 2));
    r.owner.send({{"type", "kick"}, {"room", "lounge"}, {"user", "nobody"}, {"id", 3}});
    EXPECT_TRUE(is_error(r.owner.take_one(), "user_not_found", 3));
    r.owner.send({{"type", "unban"}, {"room", "lounge"}, {"user", "mike"}, {"id", 4}});
    EXPECT_TRUE(is_error(r.owner.take_one(), "user_not_found", 4));
    r.owner.send({{"type", "set_role"}, {"room", "lounge"}, {"user", "olivia"}, {"role", "member"}, {"id", 5}});
    EXPECT_TRUE(is_error(r.owner.take_one(), "bad_request", 5)) << "the last owner";
    r.owner.send({{"type", "mute"}, {"room", "elsewhere"}, {"user", "mike"}, {"id", 6}});
    EXPECT_TRUE(is_error(r.owner.take_one(), "not_in_room", 6));
    r.world.run();
    EXPECT_TRUE(moderation_events(r.member).empty());
}

TEST(moderation, slow_mode_spaces_a_members_says) {
    staffed_room r;
    r.owner.send({{"type", "set_slow_mode"}, {"room", "lounge"}, {"interval_s", 3600}});
    r.world.run();
    r.member.take();
    r.member.send({{"type", "say"}, {"room", "lounge"}, {"text", "one"}, {"id", 1}});
    r.world.run();
    EXPECT_EQ(r.member.take().front().value("type", ""), "ack");
    r.member.send({{"type", "say"}, {"room", "lounge"}, {"text", "two"}, {"id", 2}});
    EXPECT_TRUE(is_error(r.member.take_one(), "rate_limited", 2));
}

TEST(moderation, without_tokens_nobody_holds_a_role) {
    chat_world world(test_settings(), 1);
    test_client& first = world.login("first");
    test_client& second = world.login("second");
    world.join(first, "lounge");
    world.join(second, "lounge");
    world.run();
    first.take();
    first.send({{"type", "kick"}, {"room", "lounge"}, {"user", "second"}, {"id", 1}});
    EXPECT_TRUE(is_error(first.take_one(), "forbidden", 1)) << "the creator of a room is nobody in particular";
}

}  // namespace
}  // namespace parley::rooms::tests
