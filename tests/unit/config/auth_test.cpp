// The [auth] section and private rooms: what the loader accepts, what it refuses and how it says
// so, and that a reload never writes the token secret to the log.

#include "config/loader.hpp"
#include "tests/unit/config/load_errors.hpp"
#include "config/settings.hpp"

#include <gtest/gtest.h>

#include <string>

namespace parley::config {
namespace {

const std::string secret(40, 's');

using tests::all_errors;

TEST(auth_config, defaults_are_no_authentication_and_eight_sessions) {
    settings s;
    EXPECT_EQ(s.auth_mode, auth_mode::none);
    EXPECT_EQ(s.max_sessions_per_user, 8u);
    EXPECT_EQ(s.auth_token_leeway_ms, 30000u);
}

TEST(auth_config, token_mode_reads_every_key) {
    load_result r = load_text("[auth]\nmode = \"token\"\ntoken_secret = \"" + secret +
                                  "\"\ntoken_leeway_ms = 5000\nmax_sessions_per_user = 3\n",
                              "a.toml");
    ASSERT_TRUE(r.ok()) << all_errors(r);
    EXPECT_EQ(r.value.auth_mode, auth_mode::token);
    EXPECT_EQ(r.value.auth_token_secret, secret);
    EXPECT_EQ(r.value.auth_token_leeway_ms, 5000u);
    EXPECT_EQ(r.value.max_sessions_per_user, 3u);
}

TEST(auth_config, token_mode_needs_keys_and_a_secret_that_is_long) {
    load_result missing = load_text("[auth]\nmode = \"token\"\n", "a.toml");
    ASSERT_EQ(missing.errors.size(), 1u) << all_errors(missing);
    EXPECT_NE(missing.errors[0].message.find("needs auth.token_secret (HS256), or auth.public_keys or auth.jwks_url"),
              std::string::npos)
        << missing.errors[0].message;
    // Public keys alone will do; a secret given must still be long.
    EXPECT_TRUE(load_text("[auth]\nmode = \"token\"\npublic_keys = \"/k.pem\"\n", "a.toml").ok());
    EXPECT_TRUE(load_text("[auth]\nmode = \"token\"\njwks_url = \"https://id.example/k\"\n", "a.toml").ok());
    load_result plain = load_text("[auth]\nmode = \"token\"\njwks_url = \"http://id.example/k\"\n", "a.toml");
    ASSERT_EQ(plain.errors.size(), 1u) << all_errors(plain);
    EXPECT_NE(plain.errors[0].text().find("auth.jwks_url"), std::string::npos) << plain.errors[0].text();

    load_result short_one = load_text("[auth]\nmode = \"token\"\ntoken_secret = \"0123456789\"\n", "a.toml");
    ASSERT_EQ(short_one.errors.size(), 1u) << all_errors(short_one);
    EXPECT_NE(short_one.errors[0].message.find("(it is 10)"), std::string::npos) << short_one.errors[0].message;
}

TEST(auth_config, unknown_mode_and_session_bounds_name_their_line) {
    load_result r = load_text("[auth]\nmode = \"password\"\nmax_sessions_per_user = 0\n", "a.toml");
    ASSERT_EQ(r.errors.size(), 2u) << all_errors(r);
    EXPECT_EQ(r.errors[0].line, 2);
    EXPECT_EQ(r.errors[0].key, "auth.mode");
    EXPECT_EQ(r.errors[0].message, "must be one of none, token; got 'password'");
    EXPECT_EQ(r.errors[1].line, 3);
    EXPECT_EQ(r.errors[1].message, "must be from 1 to 64, got 0");
}

TEST(auth_config, private_rooms_with_members) {
    load_result r = load_text("[auth]\nmode = \"token\"\ntoken_secret = \"" + secret + R"("
[[rooms.permanent]]
name = "staff"
private = true
members = ["alice", "bob"]

[[rooms.permanent]]
name = "lobby"
)",
                              "p.toml");
    ASSERT_TRUE(r.ok()) << all_errors(r);
    ASSERT_EQ(r.value.permanent_rooms.size(), 2u);
    const permanent_room& staff = r.value.permanent_rooms[0];
    EXPECT_EQ(staff.name, "staff");
    EXPECT_TRUE(staff.is_private);
    EXPECT_EQ(staff.members, (std::vector<std::string>{"alice", "bob"}));
    EXPECT_FALSE(r.value.permanent_rooms[1].is_private);
}

TEST(auth_config, a_private_room_needs_token_mode) {
    load_result r = load_text("[[rooms.permanent]]\nname = \"staff\"\nprivate = true\nmembers = [\"alice\"]\n",
                              "p.toml");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("room 'staff' is private, which needs auth.mode = \"token\""),
              std::string::npos)
        << r.errors[0].message;
}

TEST(auth_config, bad_private_room_keys_are_refused_with_their_line) {
    load_result r = load_text(R"([[rooms.permanent]]
name = "a"
private = "yes"

[[rooms.permanent]]
name = "b"
members = [1, 2]

[[rooms.permanent]]
name = "c"
membres = ["x"]
)",
                              "p.toml");
    ASSERT_EQ(r.errors.size(), 3u) << all_errors(r);
    EXPECT_EQ(r.errors[0].line, 3);
    EXPECT_EQ(r.errors[0].message, "expects true or false, got a string (\"yes\")");
    EXPECT_EQ(r.errors[1].line, 7);
    EXPECT_NE(r.errors[1].message.find("expects a list of user names"), std::string::npos) << r.errors[1].message;
    EXPECT_EQ(r.errors[2].line, 11);
    EXPECT_EQ(r.errors[2].message, "unknown key 'membres' in [[rooms.permanent]]; did you mean 'members'?");
}

TEST(auth_config, members_must_be_user_names_and_need_private) {
    load_result bad_name = load_text("[auth]\nmode = \"token\"\ntoken_secret = \"" + secret +
                                         "\"\n[[rooms.permanent]]\nname = \"s\"\nprivate = true\nmembers = "
                                         "[\"has space\"]\n",
                                     "p.toml");
    ASSERT_EQ(bad_name.errors.size(), 1u) << all_errors(bad_name);
    EXPECT_NE(bad_name.errors[0].message.find("room 's' members: user names are 1-32 characters"), std::string::npos)
        << bad_name.errors[0].message;

    load_result not_private = load_text("[[rooms.permanent]]\nname = \"s\"\nmembers = [\"alice\"]\n", "p.toml");
    ASSERT_EQ(not_private.errors.size(), 1u) << all_errors(not_private);
    EXPECT_NE(not_private.errors[0].message.find("lists members but is not private"), std::string::npos)
        << not_private.errors[0].message;
}

TEST(auth_config, a_reload_says_the_secret_changed_but_never_shows_it) {
    settings running;
    running.auth_mode = auth_mode::token;
    running.auth_token_secret = secret;
    settings loaded = running;
    loaded.auth_token_secret = std::string(40, 'n');
    reload_plan plan = plan_reload(running, loaded);
    ASSERT_EQ(plan.applied.size(), 1u);
    EXPECT_EQ(plan.applied[0], "auth.token_secret: changed");
    EXPECT_EQ(plan.next.auth_token_secret, loaded.auth_token_secret);
}

}  // namespace
}  // namespace parley::config
