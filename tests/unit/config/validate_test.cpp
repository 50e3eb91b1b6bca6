// Combinations of keys no daemon can run with.

#include "config/settings.hpp"

#include <gtest/gtest.h>

namespace parley::config {
namespace {

TEST(validate, defaults_are_valid) {
    EXPECT_EQ(validate(settings{}), "");
    EXPECT_TRUE(problems(settings{}).empty());
}

TEST(validate, text_must_fit_in_a_message) {
    settings s;
    s.max_text_bytes = s.max_message_bytes + 1;
    EXPECT_EQ(validate(s), "limits.max_text_bytes (65537) must not exceed limits.max_message_bytes (65536)");
    s.max_text_bytes = s.max_message_bytes;
    EXPECT_EQ(validate(s), "");
}

TEST(validate, history_limits) {
    settings s;
    s.history_default_limit = 501;
    EXPECT_EQ(validate(s), "rooms.history_default_limit (501) must not exceed rooms.history_max_limit (500)");
    s = {};
    s.joined_history = 1001;
    EXPECT_EQ(validate(s), "rooms.joined_history (1001) must not exceed rooms.history_per_room (1000)");
}

TEST(validate, ping_before_idle_unless_either_is_off) {
    settings s;
    s.ping_interval_ms = s.idle_timeout_ms;
    EXPECT_NE(validate(s).find("limits.ping_interval_ms (60000) must be less than limits.idle_timeout_ms (60000)"),
              std::string::npos);
    s.idle_timeout_ms = 0;
    EXPECT_EQ(validate(s), "") << "no idle timeout: any ping interval";
    s.idle_timeout_ms = 1000;
    s.ping_interval_ms = 0;
    EXPECT_EQ(validate(s), "") << "no pings: any idle timeout";
}

TEST(validate, shutdown_close_window_within_the_timeout) {
    settings s;
    s.shutdown_close_window_ms = s.shutdown_timeout_ms + 1;
    EXPECT_EQ(validate(s), "server.shutdown_close_window_ms (10001) must not exceed server.shutdown_timeout_ms (10000)");
}

TEST(validate, permanent_rooms_valid_and_unique) {
    settings s;
    s.permanent_rooms = {{"lobby", ""}, {"", "empty"}, {"lobby", "again"}, {std::string(65, 'x'), ""}, {"a/b", ""}};
    auto found = problems(s);
    ASSERT_EQ(found.size(), 4u);
    EXPECT_EQ(found[0], "rooms.permanent: room name must be 1 to 64 characters, got 0 ('')");
    EXPECT_EQ(found[1], "rooms.permanent: room 'lobby' is declared twice");
    EXPECT_NE(found[2].find("got 65"), std::string::npos);
    EXPECT_EQ(found[3], "rooms.permanent: room name may contain only A-Z a-z 0-9 _ . -, got 'a/b'");
    s.permanent_rooms = {{std::string(64, 'x'), ""}, {"A-z_0.9", ""}};
    EXPECT_EQ(validate(s), "");
}

// log.format, auth.mode and history.store are enumerations: settings built in code cannot hold
// another value, and the loader's refusal of other words is in loader_test and choice_options_test.
TEST(validate, origins_and_log_level) {
    settings s;
    s.allowed_origins = {"*", ""};
    s.log_level = "loud";
    auto found = problems(s);
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0], "server.allowed_origins must not contain an empty entry");
    EXPECT_EQ(found[1], "log.level must be one of trace, debug, info, warn, error, off; got 'loud'");
    EXPECT_EQ(validate(s), found[0]) << "validate() gives the first problem";
}

TEST(validate, tls_files_come_in_pairs) {
    settings s;
    s.tls_cert_file = "/etc/parley/tls/fullchain.pem";
    EXPECT_EQ(validate(s), "tls.cert_file and tls.key_file must be set together (cert_file is set, the other is "
                           "empty), or both left empty for plain HTTP");
    s.tls_cert_file.clear();
    s.tls_key_file = "/etc/parley/tls/privkey.pem";
    EXPECT_NE(validate(s).find("(key_file is set"), std::string::npos) << validate(s);
    s.tls_cert_file = "/etc/parley/tls/fullchain.pem";
    EXPECT_EQ(validate(s), "");
}

}  // namespace
}  // namespace parley::config
