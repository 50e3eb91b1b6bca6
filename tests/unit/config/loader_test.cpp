// Loading TOML text: every problem found at once, each with its line, key and a message that
// says what is wrong and what is allowed.

#include "config/loader.hpp"
#include "tests/unit/config/load_errors.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace parley::config {
namespace {

using tests::all_errors;

TEST(loader, empty_text_gives_the_defaults) {
    load_result r = load_text("", "empty.toml");
    ASSERT_TRUE(r.ok()) << all_errors(r);
    EXPECT_EQ(r.value.port, 8080);
    EXPECT_EQ(r.value.max_connections, 1000000u);
    EXPECT_EQ(r.value.log_level, "info");
}

TEST(loader, reads_every_kind_of_value) {
    load_result r = load_text(R"(
[server]
bind = "127.0.0.1"
port = 9000
allowed_origins = ["https://chat.example.com", "*"]
motd = "welcome \"friends\""
[limits]
max_connections = 1_000
rate_limit_per_second = 2.5
rate_limit_burst = 10
[rooms]
max_members = 7
[log]
level = "debug"
format = "json"
file = "parley.log"
[metrics]
enabled = false
)",
                              "kinds.toml");
    ASSERT_TRUE(r.ok()) << all_errors(r);
    EXPECT_EQ(r.path, "kinds.toml");
    EXPECT_EQ(r.value.bind, "127.0.0.1");
    EXPECT_EQ(r.value.port, 9000);
    EXPECT_EQ(r.value.allowed_origins, (std::vector<std::string>{"https://chat.example.com", "*"}));
    EXPECT_EQ(r.value.motd, "welcome \"friends\"");
    EXPECT_EQ(r.value.max_connections, 1000u);
    EXPECT_DOUBLE_EQ(r.value.rate_limit_per_second, 2.5);
    EXPECT_DOUBLE_EQ(r.value.rate_limit_burst, 10) << "a whole number is fine for a number option";
    EXPECT_EQ(r.value.max_room_members, 7u);
    EXPECT_EQ(r.value.log_level, "debug");
    EXPECT_EQ(r.value.log_format, log_format::json);
    EXPECT_EQ(r.value.log_file, "parley.log");
    EXPECT_FALSE(r.value.metrics_enabled);
}

TEST(loader, unknown_key_suggests_the_nearest_and_names_its_line) {
    load_result r = load_text("[limits]\nmax_connections = 5\n\nmax_conections = 10\n", "a.toml");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    const auto& e = r.errors[0];
    EXPECT_EQ(e.file, "a.toml");
    EXPECT_EQ(e.line, 4);
    EXPECT_EQ(e.key, "limits.max_conections");
    EXPECT_EQ(e.message, "unknown key 'max_conections' in [limits]; did you mean 'max_connections'?");
    EXPECT_EQ(e.text(), "a.toml:4: limits.max_conections: " + e.message);
}

TEST(loader, key_of_another_section_points_there) {
    load_result r = load_text("[limits]\nmax_members = 10\n", "a.toml");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].message, "unknown key 'max_members' in [limits]; did you mean 'rooms.max_members'?");
}

TEST(loader, unknown_key_far_from_any_lists_the_section_keys) {
    load_result r = load_text("[log]\nlog_level = \"debug\"\n", "a.toml");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].message, "unknown key 'log_level' in [log]; the keys of [log] are level, format, file");
}

TEST(loader, unknown_section_and_key_outside_a_section) {
    load_result r = load_text("port = 1\n[limts]\nmax_connections = 1\n[plugins]\ntoken = \"x\"\n", "a.toml");
    ASSERT_EQ(r.errors.size(), 3u) << all_errors(r);
    EXPECT_EQ(r.errors[0].line, 1);
    EXPECT_EQ(r.errors[0].message, "unknown key 'port' outside any section; did you mean 'server.port' (port under [server])?");
    EXPECT_EQ(r.errors[1].line, 2);
    EXPECT_EQ(r.errors[1].message, "unknown section [limts]; did you mean [limits]?");
    EXPECT_EQ(r.errors[2].line, 4);
    EXPECT_EQ(r.errors[2].message, "unknown section [plugins]; the sections are server, tls, limits, rooms, history, auth, admin, log, metrics, "
              "cluster, webhooks");
}

TEST(loader, wrong_types) {
    load_result r = load_text(R"([server]
port = "8080"
threads = 1.5
bind = 0
allowed_origins = "*"
[metrics]
enabled = "yes"
)",
                              "t.toml");
    ASSERT_EQ(r.errors.size(), 5u) << all_errors(r);
    EXPECT_EQ(r.errors[0].text(), "t.toml:2: server.port: expects a whole number, got a string (\"8080\")");
    EXPECT_EQ(r.errors[1].text(), "t.toml:3: server.threads: expects a whole number, got a number with a fraction (1.5)");
    EXPECT_EQ(r.errors[2].text(), "t.toml:4: server.bind: expects a string, got a whole number (0)");
    EXPECT_EQ(r.errors[3].text(), "t.toml:5: server.allowed_origins: expects a list of strings, got a string (\"*\")");
    EXPECT_EQ(r.errors[4].text(), "t.toml:7: metrics.enabled: expects true or false, got a string (\"yes\")");
}

TEST(loader, list_entry_of_the_wrong_type) {
    load_result r = load_text("[server]\nallowed_origins = [\"*\", 3]\n", "t.toml");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].message, "expects a list of strings; entry 2 is a whole number (3)");
}

TEST(loader, cluster_redis_takes_one_url_or_a_list) {
    load_result one = load_text("[cluster]\nredis = \"redis://10.0.0.5:6379\"\n", "t.toml");
    ASSERT_TRUE(one.ok()) << all_errors(one);
    EXPECT_EQ(one.value.cluster_redis, (std::vector<std::string>{"redis://10.0.0.5:6379"}));
    load_result none = load_text("[cluster]\nredis = \"\"\n", "t.toml");
    ASSERT_TRUE(none.ok()) << all_errors(none);
    EXPECT_TRUE(none.value.cluster_redis.empty()) << "an empty string is no cluster, as it always was";
    load_result two = load_text("[cluster]\nredis = [\"redis://a:6379\", \"redis://b:6380\"]\n", "t.toml");
    ASSERT_TRUE(two.ok()) << all_errors(two);
    EXPECT_EQ(two.value.cluster_redis, (std::vector<std::string>{"redis://a:6379", "redis://b:6380"}));

    load_result bad = load_text("[cluster]\nredis = [\"redis://a:6379\", \"http://b\"]\n", "t.toml");
    ASSERT_EQ(bad.errors.size(), 1u) << all_errors(bad);
    EXPECT_EQ(bad.errors[0].line, 2);
    EXPECT_NE(bad.errors[0].text().find("cluster.redis"), std::string::npos) << bad.errors[0].text();
    EXPECT_NE(bad.errors[0].text().find("redis://HOST:PORT"), std::string::npos) << bad.errors[0].text();
    load_result twice = load_text("[cluster]\nredis = [\"redis://a:6379\", \"redis://a:6379\"]\n", "t.toml");
    ASSERT_FALSE(twice.ok());
    EXPECT_NE(all_errors(twice).find("cluster.redis lists entry 1 again as entry 2"), std::string::npos)
        << all_errors(twice);
    // Still a list for the other list options: a string there is a mistake.
    load_result origins = load_text("[server]\nallowed_origins = \"*\"\n", "t.toml");
    EXPECT_FALSE(origins.ok());
}

TEST(loader, out_of_range) {
    load_result r = load_text(R"([server]
threads = 257
port = 65536
[limits]
max_message_bytes = 100
max_connections = -1
rate_limit_per_second = 0.0
)",
                              "r.toml");
    ASSERT_EQ(r.errors.size(), 5u) << all_errors(r);
    EXPECT_EQ(r.errors[0].message, "must be from 0 to 256, got 257");
    EXPECT_EQ(r.errors[1].message, "must be from 0 to 65535, got 65536");
    EXPECT_EQ(r.errors[2].message, "must be from 125 to 67108864, got 100");
    EXPECT_EQ(r.errors[3].message, "must be from 1 to 100000000, got -1") << "negative is out of range";
    EXPECT_EQ(r.errors[4].message, "must be from 0.001 to 10000000, got 0");
    EXPECT_EQ(r.errors[4].key, "limits.rate_limit_per_second");
}

TEST(loader, bad_enum_value_and_bad_strings) {
    load_result r = load_text(R"([log]
format = "xml"
level = "verbose"
[server]
ws_path = "ws"
bind = "localhost"
allowed_origins = ["chat.example.com"]
)",
                              "e.toml");
    ASSERT_EQ(r.errors.size(), 5u) << all_errors(r);
    EXPECT_EQ(r.errors[0].message, "must be one of text, json; got 'xml'");
    EXPECT_EQ(r.errors[1].message, "must be one of trace, debug, info, warn, error, off; got 'verbose'");
    EXPECT_EQ(r.errors[2].message, "must start with '/', got 'ws'");
    EXPECT_NE(r.errors[3].message.find("must be an IPv4 or IPv6 address"), std::string::npos);
    EXPECT_NE(r.errors[4].message.find("scheme://host[:port]"), std::string::npos);
}

TEST(loader, toml_syntax_error_names_its_line) {
    load_result r = load_text("[server]\nport = 80\nbind = \"0.0.0.0\n", "s.toml");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].file, "s.toml");
    EXPECT_EQ(r.errors[0].line, 3);
    EXPECT_TRUE(r.errors[0].key.empty());
    EXPECT_FALSE(r.errors[0].message.empty());
    EXPECT_TRUE(r.errors[0].text().starts_with("s.toml:3: "));
}

TEST(loader, a_key_set_twice_is_a_syntax_error) {
    load_result r = load_text("[server]\nport = 80\nport = 81\n", "d.toml");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].line, 3);
}

TEST(loader, several_errors_come_together_in_file_order) {
    // Keys are deliberately out of alphabetical order: tables iterate sorted, errors must not.
    load_result r = load_text(R"([rooms]
typing_interval_ms = "fast"
history_max_limit = 0
[limits]
zzz = 1
aaa = 2
[log]
level = "loud"
)",
                              "m.toml");
    ASSERT_EQ(r.errors.size(), 5u) << all_errors(r);
    std::vector<int> lines;
    for (const auto& e : r.errors) {
        lines.push_back(e.line);
    }
    EXPECT_EQ(lines, (std::vector<int>{2, 3, 5, 6, 8}));
    EXPECT_EQ(r.errors[0].key, "rooms.typing_interval_ms");
    EXPECT_EQ(r.errors[2].key, "limits.zzz");
}

TEST(loader, missing_explicit_file_names_the_path_and_reason) {
    const std::string path = (std::filesystem::temp_directory_path() / "parley-no-such-dir" / "parley.toml").string();
    load_result r = load({.path = path, .overrides = {}});
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].file, path);
    EXPECT_EQ(r.errors[0].text(), path + ": cannot read the configuration file: No such file or directory");
}

TEST(loader, a_directory_is_not_a_file) {
    const std::string path = std::filesystem::temp_directory_path().string();
    load_result r = load({.path = path, .overrides = {}});
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_NE(r.errors[0].text().find("Is a directory"), std::string::npos) << r.errors[0].text();
}

class file_on_disk : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = (std::filesystem::temp_directory_path() /
                 ("parley-config-test-" + std::to_string(::getpid()) + ".toml"))
                    .string();
    }
    void TearDown() override { std::filesystem::remove(path_); }
    void write(const std::string& text) { std::ofstream(path_) << text; }
    std::string path_;
};

TEST_F(file_on_disk, errors_name_the_file_as_given) {
    write("[limits]\nmax_text_bytes = 0\n");
    load_result r = load({.path = path_, .overrides = {}});
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].text(), path_ + ":2: limits.max_text_bytes: must be from 1 to 67108864, got 0");
}

TEST_F(file_on_disk, overrides_beat_the_file) {
    write("[server]\nport = 9000\nthreads = 4\n[limits]\nmax_connections = 10\n");
    load_result r = load({.path = path_,
                          .overrides = {{"server.port", "9100", "--port"},
                                        {"limits.max_connections", "20", "--set"},
                                        {"server.allowed_origins", "https://a.example, https://b.example", "--set"}}});
    ASSERT_TRUE(r.ok()) << all_errors(r);
    EXPECT_EQ(r.path, path_);
    EXPECT_EQ(r.value.port, 9100);
    EXPECT_EQ(r.value.threads, 4u) << "keys without an override keep the file's value";
    EXPECT_EQ(r.value.max_connections, 20u);
    EXPECT_EQ(r.value.allowed_origins, (std::vector<std::string>{"https://a.example", "https://b.example"}));
}

TEST(loader, bad_override_names_the_flag) {
    load_result r = load_text("", "x.toml",
                              {{"limits.max_message_bytes", "100", "--max-message"},
                               {"server.threads", "many", "--threads"},
                               {"limits.max_conections", "1", "--set"},
                               {"rooms.permanent", "lobby", "--set"}});
    ASSERT_EQ(r.errors.size(), 4u) << all_errors(r);
    EXPECT_EQ(r.errors[0].text(),
              "command line: limits.max_message_bytes: must be from 125 to 67108864, got 100 (--max-message)");
    EXPECT_EQ(r.errors[1].text(), "command line: server.threads: expects a whole number, got 'many' (--threads)");
    EXPECT_EQ(r.errors[2].text(),
              "command line: limits.max_conections: unknown key; did you mean 'limits.max_connections'? (--set)");
    EXPECT_EQ(r.errors[3].line, 0);
    EXPECT_NE(r.errors[3].message.find("only be set in the configuration file"), std::string::npos);
}

TEST(loader, cross_field_problems_come_after_the_keys_are_valid) {
    load_result r = load_text("[rooms]\nhistory_per_room = 10\n[limits]\nmax_text_bytes = 70000\n", "c.toml");
    ASSERT_EQ(r.errors.size(), 2u) << all_errors(r);
    EXPECT_EQ(r.errors[0].file, "c.toml");
    EXPECT_EQ(r.errors[0].line, 0);
    EXPECT_EQ(r.errors[0].text(), "c.toml: limits.max_text_bytes (70000) must not exceed limits.max_message_bytes (65536)");
    EXPECT_EQ(r.errors[1].text(), "c.toml: rooms.joined_history (50) must not exceed rooms.history_per_room (10)");

    load_result fixed = load_text("[rooms]\nhistory_per_room = 10\n", "c.toml", {{"rooms.joined_history", "10", "--set"}});
    EXPECT_TRUE(fixed.ok()) << all_errors(fixed);

    load_result wrong_key = load_text("[rooms]\nhistory_per_room = 10\nhistory_max_limit = -3\n", "c.toml");
    ASSERT_EQ(wrong_key.errors.size(), 1u) << "no combination is judged while a key is wrong\n" << all_errors(wrong_key);
}

TEST(loader, built_in_defaults_when_no_file) {
    // With no explicit path the loader may find the default path on a machine that has one;
    // load_text with no text is the same code path without that dependency.
    load_result r = load_text("", "", {{"server.port", "0", "--port"}});
    ASSERT_TRUE(r.ok()) << all_errors(r);
    EXPECT_EQ(r.value.port, 0);
    if (!std::filesystem::exists(default_config_path)) {
        load_result d = load({});
        ASSERT_TRUE(d.ok()) << all_errors(d);
        EXPECT_TRUE(d.path.empty());
        EXPECT_EQ(d.value.port, 8080);
    }
}

TEST(loader, permanent_rooms) {
    load_result r = load_text(R"([rooms]
[[rooms.permanent]]
name = "lobby"
topic = "Say hello"

[[rooms.permanent]]
name = "news.daily"
)",
                              "p.toml");
    ASSERT_TRUE(r.ok()) << all_errors(r);
    EXPECT_EQ(r.value.permanent_rooms,
              (std::vector<permanent_room>{{"lobby", "Say hello"}, {"news.daily", ""}}));
}

TEST(loader, permanent_rooms_inline_form) {
    load_result r = load_text("[rooms]\npermanent = [{ name = \"a\", topic = \"t\" }]\n", "p.toml");
    ASSERT_TRUE(r.ok()) << all_errors(r);
    EXPECT_EQ(r.value.permanent_rooms, (std::vector<permanent_room>{{"a", "t"}}));
}

TEST(loader, bad_permanent_rooms_are_rejected_with_their_line) {
    load_result r = load_text(R"([[rooms.permanent]]
name = "has space"

[[rooms.permanent]]
name = "ok"

[[rooms.permanent]]
name = "ok"

[[rooms.permanent]]
topic = "no name"

[[rooms.permanent]]
name = "x"
topik = "typo"
)",
                              "p.toml");
    ASSERT_EQ(r.errors.size(), 4u) << all_errors(r);
    EXPECT_EQ(r.errors[0].line, 1);
    EXPECT_EQ(r.errors[0].message, "room name may contain only A-Z a-z 0-9 _ . -, got 'has space'");
    EXPECT_EQ(r.errors[1].line, 7);
    EXPECT_EQ(r.errors[1].message, "room 'ok' is declared twice");
    EXPECT_EQ(r.errors[2].line, 10);
    EXPECT_EQ(r.errors[2].message, "each [[rooms.permanent]] table needs a name");
    EXPECT_EQ(r.errors[3].line, 15);
    EXPECT_EQ(r.errors[3].message, "unknown key 'topik' in [[rooms.permanent]]; did you mean 'topic'?");

    load_result long_name = load_text("[[rooms.permanent]]\nname = \"" + std::string(65, 'a') + "\"\n", "p.toml");
    ASSERT_EQ(long_name.errors.size(), 1u);
    EXPECT_NE(long_name.errors[0].message.find("1 to 64 characters"), std::string::npos);
}

TEST(loader, a_single_permanent_table_explains_the_double_brackets) {
    load_result r = load_text("[rooms.permanent]\nname = \"lobby\"\n", "p.toml");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("write [[rooms.permanent]] with double brackets"), std::string::npos);
}

}  // namespace
}  // namespace parley::config
