// Where roles come from and how long moderation lasts: stored roles and bans outlive the room
// object, the configuration and a token's `roles` claim give roles, timed sanctions end by
// themselves as events, and without tokens nothing stored about a name applies to it.

#include "tests/unit/rooms/token_world.hpp"

#include "rooms/history/unix_clock.hpp"

namespace parley::rooms::tests {
namespace {

using namespace parley::test_tokens;

test_client& log_in_with(chat_world& world, std::string_view user, const std::string& token) {
    test_client& c = world.connect(0);
    c.send({{"type", "login"}, {"user", user}, {"token", token}});
    const json reply = c.take_one();
    EXPECT_EQ(reply.value("type", ""), "welcome") << reply.dump();
    return c;
}

// The last `joined` for room among what c received (forgets everything received).
json last_joined(test_client& c, std::string_view room) {
    json found;
    for (json& m : c.take()) {
        if (m.value("type", "") == "joined" && m.value("room", "") == room) {
            found = std::move(m);
        }
    }
    return found;
}

std::vector<std::string> actions_seen(test_client& c) {
    std::vector<std::string> out;
    for (const json& m : c.take()) {
        if (m.value("type", "") == "moderation") {
            out.push_back(m.value("action", "") + ":" + m.value("user", "") + ":" + m.value("by", ""));
        }
    }
    return out;
}

TEST(moderation_state, a_ban_and_the_owners_role_outlive_the_room_object) {
    chat_world world(token_mode_settings(), 1);
    test_client& olivia = token_client(world, "olivia");
    test_client& mike = token_client(world, "mike");
    world.join(olivia, "den");
    world.join(mike, "den");
    world.run();
    olivia.send({{"type", "ban"}, {"room", "den"}, {"user", "mike"}, {"reason", "spam"}, {"id", 1}});
    olivia.send({{"type", "set_topic"}, {"room", "den"}, {"text", "Quiet please"}, {"id", 2}});
    olivia.send({{"type", "leave"}, {"room", "den"}, {"id", 3}});
    world.run();
    ASSERT_EQ(world.hub().rooms().find("den"), nullptr) << "empty: the room object is gone";

    mike.take();
    mike.send({{"type", "join"}, {"room", "den"}, {"id", "again"}});
    world.run();
    EXPECT_TRUE(is_error(mike.take_one(), "banned", "again")) << "the ban was kept";
    world.join(mike, "hall");
    mike.send({{"type", "set_topic"}, {"room", "hall"}, {"text", "Hall topic"}});
    mike.send({{"type", "rooms"}, {"id", "r"}});
    world.run();
    json listing;
    for (json& m : mike.take()) {
        if (m.value("type", "") == "rooms") {
            listing = std::move(m);
        }
    }
    ASSERT_EQ(listing.value("type", ""), "rooms") << listing.dump();
    ASSERT_EQ(listing["rooms"].size(), 1u);
    EXPECT_EQ(listing["rooms"][0].value("topic", ""), "Hall topic") << "rooms shows the topic";

    olivia.take();
    olivia.send({{"type", "join"}, {"room", "den"}, {"id", "back"}});
    world.run();
    const json joined = last_joined(olivia, "den");
    EXPECT_EQ(joined.value("topic", ""), "Quiet please");
    ASSERT_TRUE(joined.contains("roles")) << joined.dump();
    EXPECT_EQ(joined["roles"].value("olivia", ""), "owner");
    ASSERT_TRUE(joined.contains("bans")) << joined.dump();
    ASSERT_EQ(joined["bans"].size(), 1u);
    EXPECT_EQ(joined["bans"][0].value("user", ""), "mike");
    EXPECT_EQ(joined["bans"][0].value("by", ""), "olivia");
    EXPECT_EQ(joined["bans"][0].value("reason", ""), "spam");
    olivia.send({{"type", "unban"}, {"room", "den"}, {"user", "mike"}, {"id", 4}});
    world.run();
    EXPECT_EQ(olivia.take().front().value("type", ""), "ack") << "still the owner";
}

TEST(moderation_state, the_configuration_gives_roles_in_a_permanent_room) {
    config::settings s = token_mode_settings();
    config::permanent_room hall("hall", "Welcome");
    hall.owners = {"olivia"};
    hall.moderators = {"maud"};
    s.permanent_rooms = {hall};
    chat_world world(s, 1);
    test_client& maud = token_client(world, "maud");
    test_client& mike = token_client(world, "mike");
    test_client& olivia = token_client(world, "olivia");
    world.join(mike, "hall");
    world.join(olivia, "hall");
    const json joined = world.join(maud, "hall");
    maud.take();
    EXPECT_EQ(joined.value("topic", ""), "Welcome");
    EXPECT_EQ(joined["roles"].value("olivia", ""), "owner") << joined.dump();
    EXPECT_EQ(joined["roles"].value("maud", ""), "moderator");
    EXPECT_FALSE(joined["roles"].contains("mike"));

    maud.send({{"type", "mute"}, {"room", "hall"}, {"user", "mike"}, {"id", 1}});
    world.run();
    EXPECT_EQ(maud.take().front().value("type", ""), "ack");
    maud.send({{"type", "mute"}, {"room", "hall"}, {"user", "olivia"}, {"id", 2}});
    EXPECT_TRUE(is_error(maud.take_one(), "forbidden", 2)) << "a moderator does not act on an owner";
    maud.send({{"type", "set_role"}, {"room", "hall"}, {"user", "mike"}, {"role", "moderator"}, {"id", 3}});
    EXPECT_TRUE(is_error(maud.take_one(), "forbidden", 3)) << "a moderator never sets roles";
}

TEST(moderation_state, a_tokens_roles_claim_gives_its_role_in_matching_rooms) {
    chat_world world(token_mode_settings(), 1);
    test_client& owner = token_client(world, "olivia");
    test_client& mike = token_client(world, "mike");
    test_client& staff = log_in_with(
        world, "stan",
        sign_token({{"sub", "stan"}, {"exp", now_seconds() + 3600}, {"roles", {{"team-*", "moderator"}}}}));
    for (test_client* c : {&owner, &mike, &staff}) {
        world.join(*c, "team-blue");
        world.join(*c, "other");
    }
    world.run();
    staff.take();
    staff.send({{"type", "kick"}, {"room", "team-blue"}, {"user", "mike"}, {"id", 1}});
    world.run();
    EXPECT_EQ(staff.take().front().value("type", ""), "ack") << "moderator by its token in team-*";
    staff.send({{"type", "kick"}, {"room", "other"}, {"user", "mike"}, {"id", 2}});
    EXPECT_TRUE(is_error(staff.take_one(), "forbidden", 2)) << "the claim names no other room";

    test_client& bad = world.connect(0);
    bad.send({{"type", "login"},
              {"user", "eve"},
              {"token", sign_token({{"sub", "eve"}, {"exp", now_seconds() + 3600}, {"roles", {{"*", "king"}}}})}});
    EXPECT_TRUE(is_error(bad.take_one(), "unauthorized")) << "a role that does not exist refuses the token";
}

TEST(moderation_state, a_timed_mute_ends_by_itself_as_an_event) {
    chat_world world(token_mode_settings(), 1);
    test_client& olivia = token_client(world, "olivia");
    test_client& mike = token_client(world, "mike");
    world.join(olivia, "den");
    world.join(mike, "den");
    world.run();
    olivia.send({{"type", "mute"}, {"room", "den"}, {"user", "mike"}, {"duration_s", 60}});
    world.run();
    mike.take();
    world.hub().rooms().tick(unix_millis() + 1000);
    world.run();
    EXPECT_TRUE(actions_seen(mike).empty()) << "not over yet";
    world.hub().rooms().tick(unix_millis() + 61'000);
    world.run();
    const std::vector<std::string> seen = actions_seen(mike);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0], "unmute:mike:") << "by nobody: it ended";
}

TEST(moderation_state, without_tokens_a_stored_ban_does_not_reach_the_next_holder_of_the_name) {
    chat_world world(token_mode_settings(), 1);
    test_client& olivia = token_client(world, "olivia");
    test_client& mike = token_client(world, "mike");
    world.join(olivia, "den");
    world.join(mike, "den");
    world.run();
    olivia.take();
    olivia.send({{"type", "ban"}, {"room", "den"}, {"user", "dave"}, {"id", 1}});
    world.run();
    EXPECT_EQ(olivia.take().front().value("type", ""), "ack");

    config::settings open = test_settings();
    world.hub().update_settings(open);
    world.run();
    test_client& dave = world.login("dave");
    dave.send({{"type", "join"}, {"room", "den"}, {"id", "j"}});
    world.run();
    const json joined = last_joined(dave, "den");
    ASSERT_EQ(joined.value("type", ""), "joined") << "the ban is about a name, not this person";
    EXPECT_FALSE(joined.contains("roles")) << joined.dump();
    EXPECT_FALSE(joined.contains("bans"));
}

}  // namespace
}  // namespace parley::rooms::tests
