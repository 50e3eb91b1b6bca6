// auth.mode, history.store and log.format: words in the file and on the command line, enumerators
// in settings. The word is read and checked once, by the option table, and written back the same.

#include "config/loader.hpp"
#include "config/options.hpp"
#include "config/reference.hpp"

#include <gtest/gtest.h>

#include <string>

namespace parley::config {
namespace {

template <typename E>
void expect_words_round_trip(std::string_view name, E settings::*field) {
    const option& o = *find_option(name);
    EXPECT_EQ(o.type, value_type::choice) << name;
    ASSERT_EQ(o.allowed.size(), choice_words<E>::names.size()) << name;
    for (std::size_t i = 0; i < o.allowed.size(); ++i) {
        const auto value = static_cast<E>(i);
        EXPECT_EQ(o.allowed[i], name_of(value)) << name;
        EXPECT_EQ(choice_of<E>(name_of(value)), value) << name;
        settings s;
        ASSERT_EQ(o.set_from_string(s, name_of(value)), "") << name;
        EXPECT_EQ(s.*field, value) << name;
        EXPECT_EQ(o.text(s), "\"" + std::string(name_of(value)) + "\"") << name;
    }
}

TEST(choice_options, each_word_reads_to_its_enumerator_and_prints_back) {
    expect_words_round_trip("auth.mode", &settings::auth_mode);
    expect_words_round_trip("history.store", &settings::history_store);
    expect_words_round_trip("log.format", &settings::log_format);
}

TEST(choice_options, defaults_and_the_file) {
    const settings defaults;
    EXPECT_EQ(defaults.auth_mode, auth_mode::none);
    EXPECT_EQ(defaults.history_store, history_backend::sqlite);
    EXPECT_EQ(defaults.log_format, log_format::text);
    load_result r = load_text("[history]\nstore = \"memory\"\n[auth]\nmode = \"token\"\n"
                              "token_secret = \"0123456789abcdef0123456789abcdef\"\n[log]\nformat = \"json\"\n",
                              "c.toml");
    ASSERT_TRUE(r.ok()) << r.errors.front().text();
    EXPECT_EQ(r.value.history_store, history_backend::memory);
    EXPECT_EQ(r.value.auth_mode, auth_mode::token);
    EXPECT_EQ(r.value.log_format, log_format::json);
}

TEST(choice_options, another_word_is_an_error_naming_file_line_key_and_the_words) {
    load_result r = load_text("[history]\nstore = \"disk\"\n[auth]\nmode = \"Token\"\n[log]\nformat = 1\n", "c.toml");
    ASSERT_EQ(r.errors.size(), 3u);
    EXPECT_EQ(r.errors[0].text(), "c.toml:2: history.store: must be one of sqlite, memory; got 'disk'");
    EXPECT_EQ(r.errors[1].text(), "c.toml:4: auth.mode: must be one of none, token; got 'Token'")
        << "words are matched exactly";
    EXPECT_EQ(r.errors[2].text(), "c.toml:6: log.format: expects a string, got a whole number (1)");
}

TEST(choice_options, flags_take_the_words_too) {
    load_result r = load_text("", "", {{"history.store", "memory", "--history-store"}, {"log.format", "json", "--log-format"}});
    ASSERT_TRUE(r.ok()) << r.errors.front().text();
    EXPECT_EQ(r.value.history_store, history_backend::memory);
    EXPECT_EQ(r.value.log_format, log_format::json);
    load_result bad = load_text("", "", {{"auth.mode", "jwt", "--auth"}});
    ASSERT_EQ(bad.errors.size(), 1u);
    EXPECT_EQ(bad.errors[0].text(), "command line: auth.mode: must be one of none, token; got 'jwt' (--auth)");
}

// --help and the reference print defaults through option::text (command_line_test, sample_test).
TEST(choice_options, help_reference_and_reload_print_the_words) {
    const settings defaults;
    EXPECT_EQ(find_option("history.store")->text(defaults), "\"sqlite\"");
    EXPECT_EQ(find_option("auth.mode")->text(defaults), "\"none\"");
    EXPECT_EQ(find_option("log.format")->text(defaults), "\"text\"");
    EXPECT_NE(reference_markdown().find("`\"sqlite\"`"), std::string::npos);
    settings running;
    settings loaded;
    loaded.auth_mode = auth_mode::token;
    loaded.auth_token_secret = std::string(32, 's');
    reload_plan plan = plan_reload(running, loaded);
    ASSERT_FALSE(plan.applied.empty());
    EXPECT_EQ(plan.applied.front(), "auth.mode: \"none\" -> \"token\"");
    EXPECT_EQ(plan.next.auth_mode, auth_mode::token);
}

TEST(choice_options, a_value_outside_the_enumeration_has_no_word) {
    EXPECT_EQ(name_of(static_cast<log_format>(7)), "");
    EXPECT_FALSE(choice_of<log_format>("").has_value());
    EXPECT_FALSE(choice_of<history_backend>("SQLite").has_value());
}

}  // namespace
}  // namespace parley::config
