// A room's moderation rules, without a room: who may act on whom, timed sanctions, the last
// owner, slow mode.

#include "rooms/room_moderation.hpp"

#include <gtest/gtest.h>

namespace parley::rooms::tests {
namespace {

room_moderation staffed_rules() {
    room_moderation m;
    m.set_role("olivia", room_role::owner);
    m.set_role("mona", room_role::moderator);
    return m;
}

TEST(room_moderation, roles_parse_and_print_and_nothing_else_is_a_role) {
    for (room_role role : {room_role::member, room_role::moderator, room_role::owner}) {
        EXPECT_EQ(parse_role(role_name(role)), role);
    }
    EXPECT_FALSE(parse_role("king"));
    EXPECT_FALSE(parse_role("Owner"));
    EXPECT_FALSE(parse_role(""));
}

TEST(room_moderation, a_moderator_acts_on_members_only_and_never_sets_roles) {
    const room_moderation m = staffed_rules();
    for (auto action : {moderation_action::kick, moderation_action::ban, moderation_action::mute,
                        moderation_action::unban, moderation_action::unmute}) {
        EXPECT_TRUE(m.allows("mona", action, "mike")) << static_cast<int>(action);
        EXPECT_FALSE(m.allows("mona", action, "olivia")) << "not on an owner";
        EXPECT_FALSE(m.allows("mona", action, "mona")) << "not on a moderator, itself included";
        EXPECT_TRUE(m.allows("olivia", action, "mona")) << "an owner acts on moderators";
        EXPECT_FALSE(m.allows("mike", action, "max")) << "members moderate nothing";
    }
    EXPECT_TRUE(m.allows("mona", moderation_action::set_topic, ""));
    EXPECT_TRUE(m.allows("mona", moderation_action::set_slow_mode, ""));
    EXPECT_FALSE(m.allows("mike", moderation_action::set_topic, ""));
    EXPECT_FALSE(m.allows("mona", moderation_action::set_role, "mike"));
    EXPECT_TRUE(m.allows("olivia", moderation_action::set_role, "mike"));
}

TEST(room_moderation, owners_do_not_sanction_owners_and_the_last_owner_stays) {
    room_moderation m = staffed_rules();
    m.set_role("oscar", room_role::owner);
    EXPECT_FALSE(m.allows("olivia", moderation_action::ban, "oscar"));
    EXPECT_TRUE(m.set_role("oscar", room_role::member)) << "another owner is left";
    EXPECT_EQ(m.role_of("oscar"), room_role::member);
    EXPECT_FALSE(m.set_role("olivia", room_role::moderator)) << "the last owner";
    EXPECT_EQ(m.role_of("olivia"), room_role::owner);
    EXPECT_TRUE(m.set_role("mona", room_role::member));
    EXPECT_EQ(m.roles().size(), 1u) << "members are not stored";
}

TEST(room_moderation, timed_sanctions_end_by_themselves) {
    room_moderation m;
    m.ban("bob", {"mona", "spam", 10'000});
    m.mute("carl", {"mona", "", 0});
    EXPECT_NE(m.ban_of("bob", 9'999), nullptr);
    EXPECT_EQ(m.ban_of("bob", 9'999)->reason, "spam");
    EXPECT_EQ(m.ban_of("bob", 10'000), nullptr) << "over at its end";
    EXPECT_NE(m.mute_of("carl", 1'000'000'000), nullptr) << "no end: until lifted";
    const auto ended = m.prune(10'000);
    EXPECT_EQ(ended.bans, std::vector<std::string>{"bob"});
    EXPECT_TRUE(ended.mutes.empty());
    EXPECT_FALSE(m.unban("bob")) << "already pruned";
    EXPECT_TRUE(m.unmute("carl"));
    EXPECT_EQ(m.mute_of("carl", 0), nullptr);
}

TEST(room_moderation, slow_mode_spaces_members_says_but_not_the_staff) {
    room_moderation m = staffed_rules();
    EXPECT_TRUE(m.take_say_turn("mike", 0));
    EXPECT_TRUE(m.take_say_turn("mike", 1)) << "off: no limit";
    m.set_slow_mode(10);
    EXPECT_TRUE(m.take_say_turn("mike", 100));
    EXPECT_FALSE(m.take_say_turn("mike", 10'099));
    EXPECT_TRUE(m.take_say_turn("mike", 10'100));
    EXPECT_TRUE(m.take_say_turn("mona", 10'100));
    EXPECT_TRUE(m.take_say_turn("mona", 10'101)) << "moderators are not slowed";
    m.prune(20'100);
    EXPECT_TRUE(m.take_say_turn("mike", 20'100)) << "pruned entries were past the interval anyway";
}

}  // namespace
}  // namespace parley::rooms::tests
