// The [[webhooks]] tables: read with every key, each mistake reported at its file, line and key
// ("webhooks[2].url"), the same rules for settings built in code, and secrets kept out of every
// text the option table produces.

#include "config/loader.hpp"
#include "config/options.hpp"
#include "protocol/webhook_events.hpp"
#include "tests/unit/config/load_errors.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace parley::config {
namespace {

using tests::all_errors;

const std::string hook_secret = "s3cr3t-0123456789abcdef";

webhook_endpoint hook(std::string url, std::vector<std::string> events = {"*"}) {
    webhook_endpoint h;
    h.url = std::move(url);
    h.events = std::move(events);
    h.secret = hook_secret;
    return h;
}

// The only error of loading `toml`, which must have exactly one.
config_error only_error(const std::string& toml) {
    load_result r = load_text(toml, "h.toml");
    EXPECT_EQ(r.errors.size(), 1u) << all_errors(r);
    return r.errors.empty() ? config_error{} : r.errors.front();
}

TEST(webhooks_config, two_tables_load_with_every_key) {
    load_result r = load_text(R"([server]
port = 9000

[[webhooks]]
url = "https://hooks.example.com/parley"
events = ["message", "dm", "moderation"]
secret = "s3cr3t-0123456789abcdef"
timeout_ms = 2500
queue_events = 500
ca_file = "/etc/parley/hooks-ca.pem"

[[webhooks]]
url = "http://10.0.0.7:8080/events?source=parley"
events = ["*"]
secret = "another-secret-16"
)",
                              "h.toml");
    ASSERT_TRUE(r.ok()) << all_errors(r);
    EXPECT_EQ(r.value.port, 9000) << "the sections before the tables are read as before";
    ASSERT_EQ(r.value.webhooks.size(), 2u);
    const webhook_endpoint& first = r.value.webhooks[0];
    EXPECT_EQ(first.url, "https://hooks.example.com/parley");
    EXPECT_EQ(first.events, (std::vector<std::string>{"message", "dm", "moderation"}));
    EXPECT_EQ(first.secret, hook_secret);
    EXPECT_EQ(first.timeout_ms, 2500u);
    EXPECT_EQ(first.queue_events, 500u);
    EXPECT_EQ(first.ca_file, "/etc/parley/hooks-ca.pem");
    const webhook_endpoint& second = r.value.webhooks[1];
    EXPECT_EQ(second.url, "http://10.0.0.7:8080/events?source=parley");
    EXPECT_EQ(second.events, (std::vector<std::string>{"*"}));
    EXPECT_EQ(second.secret, "another-secret-16");
    EXPECT_EQ(second.timeout_ms, 5000u) << "the defaults of the optional keys";
    EXPECT_EQ(second.queue_events, 10000u);
    EXPECT_EQ(second.ca_file, "");
}

TEST(webhooks_config, none_by_default_and_the_inline_form_is_the_same) {
    load_result empty = load_text("", "h.toml");
    ASSERT_TRUE(empty.ok()) << all_errors(empty);
    EXPECT_TRUE(empty.value.webhooks.empty());

    load_result r = load_text(
        "webhooks = [{ url = \"https://a.example/h\", events = [\"dm\"], secret = \"s3cr3t-0123456789abcdef\" }]\n",
        "h.toml");
    ASSERT_TRUE(r.ok()) << all_errors(r);
    EXPECT_EQ(r.value.webhooks, (std::vector<webhook_endpoint>{hook("https://a.example/h", {"dm"})}));
}

TEST(webhooks_config, every_event_word_and_the_star_are_accepted) {
    std::string events;
    for (std::string_view word : protocol::webhook_event_names) {
        events += (events.empty() ? "\"" : ", \"") + std::string(word) + "\"";
    }
    load_result r = load_text("[[webhooks]]\nurl = \"https://a.example\"\nevents = [" + events +
                                  "]\nsecret = \"s3cr3t-0123456789abcdef\"\n"
                                  "[[webhooks]]\nurl = \"https://b.example\"\nevents = [\"*\"]\n"
                                  "secret = \"s3cr3t-0123456789abcdef\"\n",
                              "h.toml");
    ASSERT_TRUE(r.ok()) << all_errors(r);
    EXPECT_EQ(r.value.webhooks[0].events.size(), protocol::webhook_event_names.size());
}

TEST(webhooks_config, a_single_table_asks_for_double_brackets) {
    config_error e = only_error("[server]\nport = 1\n[webhooks]\nurl = \"https://a.example\"\n");
    EXPECT_EQ(e.file, "h.toml");
    EXPECT_EQ(e.line, 3);
    EXPECT_EQ(e.key, "webhooks");
    EXPECT_NE(e.message.find("got a single table; write [[webhooks]] with double brackets"), std::string::npos)
        << e.message;

    config_error not_tables = only_error("webhooks = \"https://a.example\"\n");
    EXPECT_EQ(not_tables.text(),
              "h.toml:1: webhooks: expects [[webhooks]] tables with a url, events and a secret, and optionally "
              "timeout_ms, queue_events and ca_file, got a string (\"https://a.example\")");

    config_error in_a_section = only_error("[cluster]\nwebhooks = []\n");
    EXPECT_EQ(in_a_section.key, "cluster.webhooks");
    EXPECT_NE(in_a_section.message.find("[[webhooks]] tables go at the top level"), std::string::npos)
        << in_a_section.message;
}

TEST(webhooks_config, unknown_keys_get_the_nearest_guess_or_the_list) {
    load_result r = load_text(R"([[webhooks]]
url = "https://a.example"
events = ["*"]
secret = "s3cr3t-0123456789abcdef"
timeout = 100
colour = "blue"
)",
                              "h.toml");
    ASSERT_EQ(r.errors.size(), 2u) << all_errors(r);
    EXPECT_EQ(r.errors[0].text(), "h.toml:5: webhooks[1].timeout: unknown key 'timeout' in [[webhooks]]; did you "
                                  "mean 'timeout_ms'?");
    EXPECT_EQ(r.errors[1].text(), "h.toml:6: webhooks[1].colour: unknown key 'colour' in [[webhooks]]; the keys are "
                                  "url, events, secret, timeout_ms, queue_events and ca_file");
}

TEST(webhooks_config, the_required_keys_are_named_at_the_line_of_their_table) {
    load_result r = load_text(R"([[webhooks]]
url = "https://a.example"
events = ["*"]
secret = "s3cr3t-0123456789abcdef"

[[webhooks]]
ca_file = "/etc/ca.pem"
)",
                              "h.toml");
    ASSERT_EQ(r.errors.size(), 3u) << all_errors(r);
    for (const auto& e : r.errors) {
        EXPECT_EQ(e.file, "h.toml");
        EXPECT_EQ(e.line, 6) << e.text();
    }
    EXPECT_EQ(r.errors[0].key, "webhooks[2].url");
    EXPECT_EQ(r.errors[0].message, "each [[webhooks]] table needs a url (http:// or https://) to POST the events to");
    EXPECT_EQ(r.errors[1].key, "webhooks[2].events");
    EXPECT_EQ(r.errors[2].key, "webhooks[2].secret");
    EXPECT_NE(r.errors[2].message.find("at least 16 bytes"), std::string::npos) << r.errors[2].message;
}

TEST(webhooks_config, a_url_must_be_http_or_https_with_a_host) {
    const std::string rest = "\nevents = [\"*\"]\nsecret = \"s3cr3t-0123456789abcdef\"\n";
    for (std::string bad : {"ftp://a.example/h", "https://", "http:///path", "hooks.example.com", "https://a b.example",
                            "https://:8080/h", ""}) {
        config_error e = only_error("[[webhooks]]\nurl = \"" + bad + "\"" + rest);
        EXPECT_EQ(e.text(), "h.toml:2: webhooks[1].url: must be an http:// or https:// URL with a host, such as "
                            "\"https://hooks.example.com/parley\", got '" +
                                bad + "'");
    }
    config_error credentials = only_error("[[webhooks]]\nurl = \"https://user:hunter2@a.example/h\"" + rest);
    EXPECT_EQ(credentials.key, "webhooks[1].url");
    EXPECT_NE(credentials.message.find("must not carry a user or password"), std::string::npos);
    EXPECT_EQ(credentials.message.find("hunter2"), std::string::npos) << "a password is never shown";

    load_result at_in_path = load_text("[[webhooks]]\nurl = \"https://a.example/to/@team\"" + rest, "h.toml");
    EXPECT_TRUE(at_in_path.ok()) << all_errors(at_in_path);
    config_error not_string = only_error("[[webhooks]]\nurl = 8080" + rest);
    EXPECT_EQ(not_string.text(), "h.toml:2: webhooks[1].url: expects a string, got a whole number (8080)");
}

TEST(webhooks_config, events_are_known_words_or_the_star) {
    const std::string head = "[[webhooks]]\nurl = \"https://a.example\"\nsecret = \"s3cr3t-0123456789abcdef\"\n";
    const std::string choices =
        "the events are user_connected, user_disconnected, room_occupied, room_vacated, member_joined, member_left, "
        "message, message_edited, message_deleted, dm, moderation, or \"*\" for all of them";

    config_error typo = only_error(head + "events = [\"message\", \"mesage_edited\"]\n");
    EXPECT_EQ(typo.text(), "h.toml:4: webhooks[1].events: unknown event 'mesage_edited' (did you mean "
                           "'message_edited'?); " +
                               choices);
    config_error far = only_error(head + "events = [\"everything\"]\n");
    EXPECT_EQ(far.message, "unknown event 'everything'; " + choices);
    config_error empty = only_error(head + "events = []\n");
    EXPECT_EQ(empty.message, "must list at least one event; " + choices);
    EXPECT_EQ(empty.key, "webhooks[1].events");
    config_error one_string = only_error(head + "events = \"message\"\n");
    EXPECT_EQ(one_string.message,
              "expects a list of event words, such as [\"message\", \"dm\"], or [\"*\"], got a string (\"message\")");
    config_error entry = only_error(head + "events = [\"dm\", 7]\n");
    EXPECT_EQ(entry.message,
              "expects a list of event words, such as [\"message\", \"dm\"], or [\"*\"]; entry 2 is a whole "
              "number (7)");
}

TEST(webhooks_config, a_secret_is_long_and_never_shown) {
    const std::string head = "[[webhooks]]\nurl = \"https://a.example\"\nevents = [\"*\"]\n";
    config_error short_one = only_error(head + "secret = \"tiny-secret\"\n");
    EXPECT_EQ(short_one.text(), "h.toml:4: webhooks[1].secret: must be at least 16 bytes (it is 11): a short HMAC "
                                "key can be guessed from the signed requests");
    config_error number = only_error(head + "secret = 12345678901234567\n");
    EXPECT_EQ(number.text(), "h.toml:4: webhooks[1].secret: expects a string, got a whole number");
}

TEST(webhooks_config, timeout_and_queue_are_whole_numbers_in_range) {
    const std::string head = "[[webhooks]]\nurl = \"https://a.example\"\nevents = [\"*\"]\n"
                             "secret = \"s3cr3t-0123456789abcdef\"\n";
    EXPECT_EQ(only_error(head + "timeout_ms = 99\n").text(),
              "h.toml:5: webhooks[1].timeout_ms: must be from 100 to 60000, got 99");
    EXPECT_EQ(only_error(head + "timeout_ms = 60001\n").message, "must be from 100 to 60000, got 60001");
    EXPECT_EQ(only_error(head + "timeout_ms = 4294967396\n").message, "must be from 100 to 60000, got 4294967396")
        << "checked before it is narrowed into the field";
    EXPECT_EQ(only_error(head + "timeout_ms = 1.5\n").message,
              "expects a whole number from 100 to 60000, got a number with a fraction (1.5)");
    EXPECT_EQ(only_error(head + "queue_events = 0\n").text(),
              "h.toml:5: webhooks[1].queue_events: must be from 1 to 1000000, got 0");
    EXPECT_EQ(only_error(head + "queue_events = 1000001\n").message, "must be from 1 to 1000000, got 1000001");
    EXPECT_EQ(only_error(head + "ca_file = true\n").text(),
              "h.toml:5: webhooks[1].ca_file: expects a string, got a boolean (true)");

    load_result bounds = load_text(head + "timeout_ms = 100\nqueue_events = 1000000\n", "h.toml");
    ASSERT_TRUE(bounds.ok()) << all_errors(bounds);
    EXPECT_EQ(bounds.value.webhooks[0].timeout_ms, 100u);
    EXPECT_EQ(bounds.value.webhooks[0].queue_events, 1000000u);
}

TEST(webhooks_config, two_tables_with_one_url_are_refused) {
    load_result r = load_text(R"([[webhooks]]
url = "https://a.example/h"
events = ["message"]
secret = "s3cr3t-0123456789abcdef"

[[webhooks]]
url = "https://b.example/h"
events = ["dm"]
secret = "s3cr3t-0123456789abcdef"

[[webhooks]]
events = ["dm"]
url = "https://a.example/h"
secret = "s3cr3t-0123456789abcdef"
)",
                              "h.toml");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].text(), "h.toml:13: webhooks[3].url: the same url as webhooks[1]; give each receiver one "
                                  "table, listing every event it wants");
}

TEST(webhooks_config, every_mistake_of_a_file_is_reported_at_once_in_line_order) {
    load_result r = load_text(R"([[webhooks]]
url = "gopher://a.example"
events = ["typing"]
secret = "short"

[[webhooks]]
url = "https://b.example"
events = ["*"]
secret = "s3cr3t-0123456789abcdef"
queue_events = -1
)",
                              "h.toml");
    ASSERT_EQ(r.errors.size(), 4u) << all_errors(r);
    EXPECT_EQ(r.errors[0].key, "webhooks[1].url");
    EXPECT_EQ(r.errors[0].line, 2);
    EXPECT_EQ(r.errors[1].key, "webhooks[1].events");
    EXPECT_EQ(r.errors[1].line, 3);
    EXPECT_EQ(r.errors[2].key, "webhooks[1].secret");
    EXPECT_EQ(r.errors[2].line, 4);
    EXPECT_EQ(r.errors[3].key, "webhooks[2].queue_events");
    EXPECT_EQ(r.errors[3].line, 10);
    EXPECT_TRUE(r.value.webhooks.empty()) << "nothing of a failed list is stored";
}

TEST(webhooks_config, the_option_has_no_key_of_its_own) {
    const option* o = find_option("webhooks");
    ASSERT_NE(o, nullptr);
    EXPECT_EQ(o->name(), "webhooks");
    EXPECT_EQ(o->section, "webhooks");
    EXPECT_EQ(o->key, "");
    EXPECT_EQ(o->type, value_type::webhook_list);
    EXPECT_TRUE(o->reloadable);
    EXPECT_TRUE(o->secret);
    EXPECT_EQ(find_option("webhooks", ""), o);
    EXPECT_EQ(sections().back(), "webhooks");
    // The help lists every event word, so a new kind of event cannot be left out of it.
    for (std::string_view word : protocol::webhook_event_names) {
        EXPECT_NE(o->help.find(word), std::string_view::npos) << word;
    }
}

TEST(webhooks_config, text_hides_the_secrets) {
    settings s;
    s.webhooks = {hook("https://a.example/h", {"message", "dm"}), hook("http://b.example")};
    s.webhooks[1].secret = "another-secret-of-the-second";
    s.webhooks[1].timeout_ms = 250;
    s.webhooks[1].queue_events = 7;
    s.webhooks[1].ca_file = "/etc/ca.pem";
    const std::string text = find_option("webhooks")->text(s);
    EXPECT_EQ(text, "[{ url = \"https://a.example/h\", events = [\"message\", \"dm\"], secret = \"(secret)\" }, "
                    "{ url = \"http://b.example\", events = [\"*\"], secret = \"(secret)\", timeout_ms = 250, "
                    "queue_events = 7, ca_file = \"/etc/ca.pem\" }]");
    EXPECT_EQ(text.find(hook_secret), std::string::npos);
    EXPECT_EQ(find_option("webhooks")->text(settings{}), "[]");
}

TEST(webhooks_config, set_checks_the_same_rules_as_the_file) {
    const option& o = *find_option("webhooks");
    settings s;
    EXPECT_EQ(o.set(s, std::vector<webhook_endpoint>{hook("https://a.example"), hook("https://b.example")}), "");
    EXPECT_EQ(s.webhooks.size(), 2u);

    webhook_endpoint short_secret = hook("https://c.example");
    short_secret.secret = "x";
    EXPECT_EQ(o.set(s, std::vector<webhook_endpoint>{hook("https://a.example"), short_secret}),
              "webhooks[2].secret: must be at least 16 bytes (it is 1): a short HMAC key can be guessed from the "
              "signed requests");
    EXPECT_EQ(s.webhooks.size(), 2u) << "a refused value leaves the field as it was";
    EXPECT_EQ(o.set(s, std::vector<webhook_endpoint>{hook("https://a.example"), hook("https://a.example")}),
              "webhooks[2].url: the same url as webhooks[1]; give each receiver one table, listing every event it "
              "wants");
    const std::string no_events = o.set(s, std::vector<webhook_endpoint>{hook("https://a.example", {})});
    EXPECT_TRUE(no_events.starts_with("webhooks[1].events: must list at least one event")) << no_events;
    webhook_endpoint slow = hook("https://a.example");
    slow.timeout_ms = 60001;
    EXPECT_EQ(o.set(s, std::vector<webhook_endpoint>{slow}),
              "webhooks[1].timeout_ms: must be from 100 to 60000, got 60001");
    webhook_endpoint no_queue = hook("https://a.example");
    no_queue.queue_events = 0;
    EXPECT_EQ(o.set(s, std::vector<webhook_endpoint>{no_queue}),
              "webhooks[1].queue_events: must be from 1 to 1000000, got 0");
    EXPECT_EQ(o.set(s, std::string("https://a.example")), "expects " + std::string(o.expects()));
}

TEST(webhooks_config, settings_built_in_code_get_the_same_rules) {
    settings s;
    s.webhooks = {hook("ftp://a.example")};
    EXPECT_EQ(validate(s), "webhooks[1].url: must be an http:// or https:// URL with a host, such as "
                           "\"https://hooks.example.com/parley\", got 'ftp://a.example'");
    s.webhooks = {hook("https://a.example")};
    EXPECT_EQ(validate(s), "");
}

TEST(webhooks_config, the_command_line_cannot_set_them) {
    settings s;
    EXPECT_EQ(find_option("webhooks")->set_from_string(s, "https://a.example"),
              "can only be set in the configuration file, as [[webhooks]] tables");
    load_result r = load_text("", "h.toml", {{"webhooks", "https://a.example", "--set"}});
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].text(),
              "command line: webhooks: can only be set in the configuration file, as [[webhooks]] tables (--set)");
}

TEST(webhooks_config, a_reload_applies_them_and_says_only_that_they_changed) {
    settings running;
    running.webhooks = {hook("https://a.example/h")};
    settings loaded = running;
    loaded.webhooks.push_back(hook("https://b.example/h", {"dm"}));
    reload_plan plan = plan_reload(running, loaded);
    EXPECT_EQ(plan.applied, (std::vector<std::string>{"webhooks: changed"}));
    EXPECT_TRUE(plan.needs_restart.empty());
    EXPECT_EQ(plan.next.webhooks, loaded.webhooks);
}

TEST(webhooks_config, a_reload_sees_a_new_secret_that_the_text_hides) {
    settings running;
    running.webhooks = {hook("https://a.example/h")};
    settings loaded = running;
    loaded.webhooks[0].secret = "a-brand-new-secret-0123";
    ASSERT_EQ(find_option("webhooks")->text(running), find_option("webhooks")->text(loaded));
    reload_plan plan = plan_reload(running, loaded);
    EXPECT_EQ(plan.applied, (std::vector<std::string>{"webhooks: changed"}));
    EXPECT_EQ(plan.next.webhooks[0].secret, "a-brand-new-secret-0123");
}

}  // namespace
}  // namespace parley::config
