// The option table itself: complete, consistent, and its accessors round-trip.

#include "config/loader.hpp"
#include "config/options.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace parley::config {
namespace {

TEST(option_table, names_and_flags_are_unique_and_sections_are_grouped_in_order) {
    std::set<std::string> names;
    std::set<std::string_view> flags;
    std::size_t section_index = 0;
    for (const auto& o : options()) {
        EXPECT_TRUE(names.insert(o.name()).second) << o.name();
        if (!o.flag.empty()) {
            EXPECT_TRUE(flags.insert(o.flag).second) << o.flag;
            EXPECT_TRUE(o.flag.starts_with("--")) << o.flag;
            EXPECT_FALSE(o.value_name.empty()) << o.flag;
        }
        while (section_index < sections().size() && sections()[section_index] != o.section) {
            ++section_index;
        }
        EXPECT_LT(section_index, sections().size()) << o.name() << " is out of section order";
        EXPECT_FALSE(o.help.empty()) << o.name();
        EXPECT_TRUE(o.help.ends_with(".")) << o.name();
    }
    EXPECT_EQ(names.size(), 65u) << "an option was added or removed: update the sample file too";
}

TEST(option_table, every_field_of_settings_is_reached) {
    // Changing each option through the table must change the settings' value text; if two
    // entries pointed at one field, or one at none, the counts would not match.
    const settings defaults;
    for (const auto& o : options()) {
        settings s;
        std::string before = o.text(s);
        if (o.type == value_type::room_list) {
            EXPECT_EQ(o.set(s, std::vector<permanent_room>{{"x", ""}}), "");
        } else if (o.type == value_type::webhook_list) {
            webhook_endpoint hook;
            hook.url = "https://hooks.example/p";
            hook.events = {"*"};
            hook.secret = std::string(16, 's');
            EXPECT_EQ(o.set(s, std::vector<webhook_endpoint>{hook}), "");
        } else if (o.type == value_type::boolean) {
            EXPECT_EQ(o.set(s, !defaults.metrics_enabled), "");
        } else if (o.type == value_type::whole) {
            std::string min = std::to_string(static_cast<long long>(o.min));
            std::string max = std::to_string(static_cast<long long>(o.max));
            EXPECT_EQ(o.set_from_string(s, o.text(defaults) == min ? max : min), "") << o.name();
        } else if (o.type == value_type::number) {
            EXPECT_EQ(o.set(s, 1.5), "");
        } else if (o.type == value_type::string_list) {
            EXPECT_EQ(o.set_from_string(s, o.key == "redis" ? "redis://127.0.0.1:6380,redis://127.0.0.1:6381" : "*"), "")
                << o.name();
        } else if (!o.allowed.empty()) {
            std::string_view other = toml_quote(o.allowed.front()) == before ? o.allowed.back() : o.allowed.front();
            EXPECT_EQ(o.set_from_string(s, other), "") << o.name();
        } else {
            std::string_view value = o.key == "bind"       ? "::1"
                                     : o.key == "node_id"  ? "node-7"
                                     : o.key == "jwks_url" ? "https://id.example/keys"
                                                           : "/other";
            EXPECT_EQ(o.set_from_string(s, value), "") << o.name();
        }
        EXPECT_NE(o.text(s), before) << o.name();
        std::size_t changed = 0;
        for (const auto& other : options()) {
            changed += other.text(s) != other.text(defaults) ? 1 : 0;
        }
        EXPECT_EQ(changed, 1u) << o.name() << " changed another field too";
    }
}

TEST(option_table, bounds_fit_the_fields_and_are_enforced_at_both_ends) {
    for (const auto& o : options()) {
        if (o.type != value_type::whole) {
            continue;
        }
        settings s;
        auto min = static_cast<long long>(o.min);
        auto max = static_cast<long long>(o.max);
        EXPECT_EQ(o.set_from_string(s, std::to_string(max)), "") << o.name();
        EXPECT_EQ(o.text(s), std::to_string(max)) << o.name() << ": the maximum does not fit the field";
        EXPECT_EQ(o.set_from_string(s, std::to_string(min)), "") << o.name();
        EXPECT_EQ(o.text(s), std::to_string(min)) << o.name();
        EXPECT_EQ(o.set_from_string(s, std::to_string(max + 1)), "must be " + o.rule() + ", got " + std::to_string(max + 1));
        EXPECT_EQ(o.text(s), std::to_string(min)) << "a refused value leaves the field as it was";
        if (min > 0) {
            EXPECT_FALSE(o.set_from_string(s, std::to_string(min - 1)).empty()) << o.name();
        }
    }
}

TEST(option_table, the_flags_parleyd_always_had) {
    const std::pair<std::string_view, std::string_view> expected[] = {
        {"--bind", "server.bind"},
        {"--port", "server.port"},
        {"--threads", "server.threads"},
        {"--ws-path", "server.ws_path"},
        {"--max-room-members", "rooms.max_members"},
        {"--rate-limit", "limits.rate_limit_per_second"},
        {"--rate-burst", "limits.rate_limit_burst"},
        {"--write-queue-limit", "limits.write_queue_limit_bytes"},
        {"--history", "rooms.history_per_room"},
        {"--max-message", "limits.max_message_bytes"},
        {"--log-level", "log.level"},
        {"--log-format", "log.format"},
        {"--log-file", "log.file"},
        {"--max-connections", "limits.max_connections"},
    };
    for (const auto& [flag, name] : expected) {
        const option* o = find_flag(flag);
        ASSERT_NE(o, nullptr) << flag;
        EXPECT_EQ(o->name(), name);
        EXPECT_EQ(find_option(name), o);
    }
    EXPECT_EQ(find_flag("--nope"), nullptr);
    EXPECT_EQ(find_option("limits"), nullptr);
}

TEST(option_table, command_line_text_of_each_type) {
    settings s;
    const option& enabled = *find_option("metrics.enabled");
    EXPECT_EQ(enabled.set_from_string(s, "false"), "");
    EXPECT_FALSE(s.metrics_enabled);
    EXPECT_EQ(enabled.set_from_string(s, "yes"), "");
    EXPECT_TRUE(s.metrics_enabled);
    EXPECT_EQ(enabled.set_from_string(s, "maybe"), "expects true or false, got 'maybe'");

    const option& rate = *find_option("limits.rate_limit_per_second");
    EXPECT_EQ(rate.set_from_string(s, "0.5"), "");
    EXPECT_DOUBLE_EQ(s.rate_limit_per_second, 0.5);
    EXPECT_EQ(rate.text(s), "0.5");
    EXPECT_EQ(rate.set_from_string(s, "fast"), "expects a number, got 'fast'");
    EXPECT_EQ(rate.set_from_string(s, "nan"), "must be from 0.001 to 10000000, got nan");

    const option& port = *find_option("server.port");
    EXPECT_EQ(port.set_from_string(s, "80x"), "expects a whole number, got '80x'");
    EXPECT_EQ(port.set_from_string(s, "99999999999999999999"), "must be from 0 to 65535, got 99999999999999999999");

    const option& origins = *find_option("server.allowed_origins");
    EXPECT_EQ(origins.set_from_string(s, " https://a.example ,https://b.example:8443"), "");
    EXPECT_EQ(s.allowed_origins, (std::vector<std::string>{"https://a.example", "https://b.example:8443"}));
    EXPECT_EQ(origins.text(s), R"(["https://a.example", "https://b.example:8443"])");
    EXPECT_EQ(origins.set_from_string(s, ""), "");
    EXPECT_TRUE(s.allowed_origins.empty());
    EXPECT_FALSE(origins.set_from_string(s, "https://a.example/").empty()) << "an origin has no path";
}

TEST(option_table, string_text_is_toml_that_reads_back_the_same) {
    settings s;
    s.motd = "quote \" backslash \\ tab \t newline \n bell \x07 é";
    const option& motd = *find_option("server.motd");
    load_result r = load_text("[server]\nmotd = " + motd.text(s) + "\n", "q.toml");
    ASSERT_TRUE(r.ok()) << r.errors.front().text();
    EXPECT_EQ(r.value.motd, s.motd);
}

TEST(nearest, suggests_only_likely_typos) {
    std::vector<std::string> keys = {"max_connections", "max_connections_per_ip", "login_timeout_ms", "level"};
    EXPECT_EQ(nearest("max_conections", keys), "max_connections");
    EXPECT_EQ(nearest("max_connection_per_ip", keys), "max_connections_per_ip");
    EXPECT_EQ(nearest("levle", keys), "level");
    EXPECT_EQ(nearest("colour", keys), "");
    EXPECT_EQ(nearest("x", keys), "");
    EXPECT_EQ(nearest("anything", {}), "");
}

}  // namespace
}  // namespace parley::config
