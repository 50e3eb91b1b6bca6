// parleyd's arguments: flags become overrides of table keys; usage errors say what was meant.

#include "config/command_line.hpp"
#include "config/options.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace parley::config {
namespace {

arguments parse(std::vector<std::string_view> args) { return parse_arguments(args); }

TEST(command_line, nothing_given) {
    arguments a = parse({});
    EXPECT_TRUE(a.error.empty());
    EXPECT_FALSE(a.source.path.has_value());
    EXPECT_TRUE(a.source.overrides.empty());
    EXPECT_FALSE(a.check_config || a.show_help || a.show_version);
}

TEST(command_line, config_path_both_spellings_and_check) {
    arguments a = parse({"--config", "/tmp/a.toml", "--check-config"});
    ASSERT_TRUE(a.error.empty()) << a.error;
    EXPECT_EQ(a.source.path, "/tmp/a.toml");
    EXPECT_TRUE(a.check_config);
    EXPECT_EQ(parse({"--config=b.toml"}).source.path, "b.toml");
    EXPECT_EQ(parse({"--config", "a", "--config", "b"}).error, "option --config given twice");
}

TEST(command_line, cluster_rebalance_is_a_command_of_its_own) {
    arguments a = parse({"--config", "/tmp/a.toml", "--cluster-rebalance", "--cluster-redis", "redis://a:1,redis://b:2"});
    ASSERT_TRUE(a.error.empty()) << a.error;
    EXPECT_TRUE(a.cluster_rebalance);
    EXPECT_FALSE(parse({}).cluster_rebalance);
    EXPECT_EQ(parse({"--cluster-rebalance=yes"}).error, "option --cluster-rebalance takes no value");
    EXPECT_NE(usage_text().find("--cluster-rebalance"), std::string::npos);
}

TEST(command_line, table_flags_become_overrides_in_order) {
    arguments a = parse({"--port", "9000", "--threads=4", "--log-level", "debug", "--max-message=1000"});
    ASSERT_TRUE(a.error.empty()) << a.error;
    ASSERT_EQ(a.source.overrides.size(), 4u);
    EXPECT_EQ(a.source.overrides[0].key, "server.port");
    EXPECT_EQ(a.source.overrides[0].value, "9000");
    EXPECT_EQ(a.source.overrides[0].flag, "--port");
    EXPECT_EQ(a.source.overrides[1].key, "server.threads");
    EXPECT_EQ(a.source.overrides[1].value, "4");
    EXPECT_EQ(a.source.overrides[2].key, "log.level");
    EXPECT_EQ(a.source.overrides[3].key, "limits.max_message_bytes");
    EXPECT_EQ(a.source.overrides[3].flag, "--max-message");
}

TEST(command_line, values_are_not_checked_here) {
    arguments a = parse({"--port", "lots"});
    EXPECT_TRUE(a.error.empty()) << "load() reports it, naming the flag";
    EXPECT_EQ(a.source.overrides.at(0).value, "lots");
}

TEST(command_line, set_any_key) {
    arguments a = parse({"--set", "limits.max_connections=50", "--set=server.motd=a=b", "--set", "server.motd="});
    ASSERT_TRUE(a.error.empty()) << a.error;
    ASSERT_EQ(a.source.overrides.size(), 3u);
    EXPECT_EQ(a.source.overrides[0].key, "limits.max_connections");
    EXPECT_EQ(a.source.overrides[0].value, "50");
    EXPECT_EQ(a.source.overrides[0].flag, "--set");
    EXPECT_EQ(a.source.overrides[1].value, "a=b") << "only the first '=' separates";
    EXPECT_EQ(a.source.overrides[2].value, "");
    EXPECT_EQ(parse({"--set", "limits.max_connections"}).error,
              "option --set expects SECTION.KEY=VALUE, got 'limits.max_connections'");
    EXPECT_EQ(parse({"--set", "limits.max_conections=5"}).error,
              "unknown key 'limits.max_conections' in --set; did you mean 'limits.max_connections'?");
}

TEST(command_line, usage_errors) {
    EXPECT_EQ(parse({"--prot", "1"}).error, "unknown option '--prot'; did you mean '--port'?");
    EXPECT_EQ(parse({"--frobnicate"}).error, "unknown option '--frobnicate'");
    EXPECT_EQ(parse({"-p"}).error, "unknown option '-p'");
    EXPECT_EQ(parse({"--port"}).error, "option --port needs a value");
    EXPECT_EQ(parse({"--port", "--threads", "2"}).error, "option --port needs a value");
    EXPECT_EQ(parse({"serve"}).error, "unexpected argument 'serve'");
    EXPECT_EQ(parse({"--help=1"}).error, "option --help takes no value");
}

TEST(command_line, help_and_version) {
    EXPECT_TRUE(parse({"--help"}).show_help);
    EXPECT_TRUE(parse({"-h"}).show_help);
    EXPECT_TRUE(parse({"--version"}).show_version);
}

TEST(command_line, from_argc_and_argv_without_the_program_name) {
    const char* argv[] = {"parleyd", "--port", "9000", "--check-config"};
    arguments a = parse_arguments(4, argv);
    ASSERT_TRUE(a.error.empty()) << a.error;
    EXPECT_TRUE(a.check_config);
    ASSERT_EQ(a.source.overrides.size(), 1u);
    EXPECT_EQ(a.source.overrides[0].key, "server.port");
    EXPECT_EQ(a.source.overrides[0].value, "9000");
    EXPECT_TRUE(parse_arguments(1, argv).source.overrides.empty()) << "argv[0] is not a flag";
}

TEST(command_line, every_table_flag_is_accepted) {
    for (const auto& o : options()) {
        if (o.flag.empty()) {
            continue;
        }
        arguments a = parse({o.flag, "1"});
        ASSERT_TRUE(a.error.empty()) << o.flag << ": " << a.error;
        EXPECT_EQ(a.source.overrides.at(0).key, o.name());
    }
}

TEST(command_line, usage_lists_every_flag_with_its_key_and_default) {
    std::string text = usage_text();
    const settings defaults;
    for (const auto& o : options()) {
        if (o.flag.empty()) {
            continue;
        }
        EXPECT_NE(text.find("  " + std::string(o.flag) + " " + std::string(o.value_name)), std::string::npos) << o.flag;
        // Descriptions wrap; compare with the line breaks and indents taken out.
        std::string flat;
        for (std::size_t i = 0; i < text.size(); ++i) {
            if (text[i] == '\n') {
                while (i + 1 < text.size() && text[i + 1] == ' ') {
                    ++i;
                }
                flat += ' ';
            } else {
                flat += text[i];
            }
        }
        EXPECT_NE(flat.find("[" + o.name() + ", default " + o.text(defaults) + "]"), std::string::npos) << o.flag;
    }
    for (std::string_view general : {"--config PATH", "--check-config", "--set SECTION.KEY=VALUE", "--help", "--version"}) {
        EXPECT_NE(text.find(general), std::string::npos) << general;
    }
    EXPECT_NE(text.find("  --port N                      TCP port for HTTP and WebSocket. [server.port, default 8080]\n"),
              std::string::npos)
        << text;
}

}  // namespace
}  // namespace parley::config
