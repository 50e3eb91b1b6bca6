// The sample file config/parley.toml and the option reference in docs/operations.md stay in step
// with the option table.

#include "config/loader.hpp"
#include "config/options.hpp"
#include "config/reference.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>

namespace parley::config {
namespace {

const std::string sample_path = std::string(PARLEY_SOURCE_DIR) + "/config/parley.toml";

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string trim(std::string text) {
    auto first = text.find_first_not_of(" \t\r\n");
    auto last = text.find_last_not_of(" \t\r\n");
    return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

struct live_line {
    int line;
    std::string value;
};

// Every `key = value` line that is not a comment, by (section, key), with each place it occurs.
std::map<std::pair<std::string, std::string>, std::vector<live_line>> live_lines(const std::string& text) {
    std::map<std::pair<std::string, std::string>, std::vector<live_line>> found;
    std::istringstream in(text);
    std::string line;
    std::string section;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        std::string t = trim(line);
        if (t.empty() || t.front() == '#') {
            continue;
        }
        if (t.front() == '[') {
            section = trim(t.substr(t.find_first_not_of('['), t.find(']') - t.find_first_not_of('[')));
            continue;
        }
        auto eq = t.find('=');
        if (eq == std::string::npos) {
            continue;
        }
        found[{section, trim(t.substr(0, eq))}].push_back({number, trim(t.substr(eq + 1))});
    }
    return found;
}

TEST(sample_file, loads_without_errors_and_equals_the_defaults) {
    load_result r = load({.path = sample_path, .overrides = {}});
    for (const auto& e : r.errors) {
        ADD_FAILURE() << e.text();
    }
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.path, sample_path);
    const settings defaults;
    for (const auto& o : options()) {
        EXPECT_EQ(o.text(r.value), o.text(defaults)) << o.name();
    }
}

TEST(sample_file, every_option_is_one_live_line_with_its_default_in_its_section) {
    auto lines = live_lines(read(sample_path));
    ASSERT_FALSE(lines.empty()) << "cannot read " << sample_path;
    const settings defaults;
    for (const auto& o : options()) {
        auto it = lines.find({std::string(o.section), std::string(o.key)});
        if (o.type == value_type::room_list || o.type == value_type::webhook_list) {
            // None by default; a live `permanent = []` would forbid [[rooms.permanent]] below it,
            // and `webhooks = []` cannot be written at the top level after the sections.
            EXPECT_EQ(it, lines.end()) << o.name();
            continue;
        }
        ASSERT_NE(it, lines.end()) << o.name() << " has no live line in [" << o.section << "]";
        ASSERT_EQ(it->second.size(), 1u) << o.name() << " appears more than once";
        EXPECT_EQ(it->second.front().value, o.text(defaults))
            << o.name() << " at line " << it->second.front().line << " is not written as its default";
        lines.erase(it);
    }
    for (const auto& [where, places] : lines) {
        ADD_FAILURE() << "line " << places.front().line << ": " << where.first << "." << where.second
                      << " is not in the option table";
    }
}

TEST(sample_file, every_option_has_prose_before_it_and_tables_are_shown_commented) {
    std::string text = read(sample_path);
    std::istringstream in(text);
    std::string line;
    std::string previous;
    while (std::getline(in, line)) {
        std::string t = trim(line);
        if (!t.empty() && t.front() != '#' && t.front() != '[') {
            EXPECT_TRUE(previous.starts_with("#")) << "no comment right before '" << t << "'";
        }
        previous = t;
    }
    EXPECT_NE(text.find("# [[rooms.permanent]]\n# name = "), std::string::npos);
    EXPECT_NE(text.find("# [[webhooks]]\n# url = "), std::string::npos);
}

TEST(sample_file, its_commented_webhook_example_loads) {
    // The example, uncommented, is what an admin starts from: it must be valid as it stands.
    std::string text = read(sample_path);
    auto begin = text.find("# [[webhooks]]\n");
    ASSERT_NE(begin, std::string::npos);
    std::string example;
    std::istringstream in(text.substr(begin));
    std::string line;
    while (std::getline(in, line) && line.starts_with("#") && line != "#") {
        example += line.substr(line.starts_with("# ") ? 2 : 1) + "\n";
    }
    load_result r = load_text(example, "example.toml");
    for (const auto& e : r.errors) {
        ADD_FAILURE() << e.text() << "\n" << example;
    }
    ASSERT_EQ(r.value.webhooks.size(), 1u) << example;
    EXPECT_FALSE(r.value.webhooks[0].events.empty());
}

TEST(reference, lists_every_option_with_its_default_and_reload) {
    std::string md = reference_markdown();
    const settings defaults;
    for (std::string_view section : sections()) {
        const std::string heading =
            section == "webhooks" ? "### [[webhooks]]\n" : "### [" + std::string(section) + "]\n";
        EXPECT_NE(md.find(heading), std::string::npos) << section;
    }
    EXPECT_NE(md.find("| `port` | `8080` |  | no |"), std::string::npos);
    EXPECT_NE(md.find("| `max_connections` | `1000000` | connections | yes |"), std::string::npos);
    EXPECT_NE(md.find("| `[[rooms.permanent]]` | none |"), std::string::npos);
    EXPECT_NE(md.find("| `[[webhooks]]` | none |  | yes |"), std::string::npos);
    for (const auto& o : options()) {
        EXPECT_NE(md.find(std::string(o.help.substr(0, 30))), std::string::npos) << o.name();
    }
    EXPECT_EQ(md.back(), '\n');
}

TEST(reference, docs_operations_embeds_the_current_table) {
    const std::string path = std::string(PARLEY_SOURCE_DIR) + "/docs/operations.md";
    if (!std::ifstream(path)) {
        GTEST_SKIP() << "docs/operations.md does not exist yet";
    }
    const std::string text = read(path);
    const std::string begin = "<!-- options:begin -->";
    const std::string end = "<!-- options:end -->";
    auto b = text.find(begin);
    auto e = text.find(end);
    ASSERT_NE(b, std::string::npos) << "docs/operations.md lacks " << begin;
    ASSERT_NE(e, std::string::npos) << "docs/operations.md lacks " << end;
    ASSERT_LT(b, e);
    EXPECT_EQ(trim(text.substr(b + begin.size(), e - b - begin.size())), trim(reference_markdown()))
        << "regenerate the table with parley-config-reference";
}

TEST(sample_file, the_history_file_lies_in_the_units_state_directory) {
    // systemd makes /var/lib/<StateDirectory> writable for the service (the rest of the file
    // system is read-only under ProtectSystem=strict): the default file must be inside it.
    std::string unit = read(std::string(PARLEY_SOURCE_DIR) + "/config/parleyd.service");
    auto at = unit.find("\nStateDirectory=");
    ASSERT_NE(at, std::string::npos) << "the unit declares no StateDirectory";
    auto begin = at + std::string("\nStateDirectory=").size();
    std::string state_dir = "/var/lib/" + unit.substr(begin, unit.find('\n', begin) - begin) + "/";
    EXPECT_EQ(settings{}.history_path.rfind(state_dir, 0), 0u) << settings{}.history_path << " vs " << state_dir;
    load_result sample = load({.path = sample_path, .overrides = {}});
    ASSERT_TRUE(sample.ok());
    EXPECT_EQ(sample.value.history_path, settings{}.history_path);
    EXPECT_EQ(sample.value.history_store, history_backend::sqlite);
}

}  // namespace
}  // namespace parley::config
