#include "config/webhook_tables.hpp"

#include "config/option_checks.hpp"
#include "config/toml_nodes.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>

namespace parley::config {
namespace {

// Position of `key` in webhook_keys; webhook_keys.size() for an unknown key.
std::size_t key_index(std::string_view key) {
    return static_cast<std::size_t>(std::find(webhook_keys.begin(), webhook_keys.end(), key) - webhook_keys.begin());
}

// One [[webhooks]] table as read so far.
struct table_reading {
    webhook_endpoint hook;
    // Per key of webhook_keys: its line (0 when the table lacks it), and whether it was read (of
    // the right type, in range), so that its rule applies: a key that failed to read keeps its
    // default, which would earn it a second, misleading error.
    std::array<int, webhook_keys.size()> line{};
    std::array<bool, webhook_keys.size()> read{};
    bool ok = true;

    int line_of_key(std::string_view key) const { return line[key_index(key)]; }
    bool was_read(std::string_view key) const { return read[key_index(key)]; }
};

struct required_key {
    std::string_view key;
    std::string_view what;  // for "each [[webhooks]] table needs ..."
};
static_assert(webhook_secret_min_bytes == 16, "say the new length in required_keys");
constexpr std::array<required_key, 3> required_keys = {{
    {"url", "a url (http:// or https://) to POST the events to"},
    {"events", "events, the list of event words it receives, or [\"*\"] for all"},
    {"secret", "a secret of at least 16 bytes, which signs each POST"},
}};

class webhook_reader {
public:
    webhook_reader(const option& o, std::string_view file, std::vector<config_error>& errors)
        : option_(o), file_(file), errors_(errors) {}

    std::optional<std::vector<webhook_endpoint>> read(const toml::node& node, int line) {
        const toml::array* array = node.as_array();
        if (array == nullptr) {
            error(line, option_.name(),
                  "expects " + std::string(option_.expects()) + ", got " +
                      (node.is_table() ? "a single table; write [[webhooks]] with double brackets, once per receiver"
                                       : describe(node)));
            return std::nullopt;
        }
        std::vector<webhook_endpoint> hooks;
        std::vector<std::size_t> url_owners;  // index of the table each url of `urls` came from
        std::vector<std::string> urls;
        bool ok = true;
        for (std::size_t i = 0; i < array->size(); ++i) {
            const toml::node& entry = *array->get(i);
            const int entry_line = line_or(entry, line);
            const toml::table* table = entry.as_table();
            if (table == nullptr) {
                error(entry_line, webhook_key_name(i, ""), "expects a table, got " + describe(entry));
                ok = false;
                continue;
            }
            table_reading reading = read_table(i, *table, entry_line);
            // A repeated url is reported even when either table has other problems: it is one
            // more thing to fix, and fixing the others first would not make it go away.
            if (reading.was_read("url")) {
                auto earlier = std::find(urls.begin(), urls.end(), reading.hook.url);
                if (earlier != urls.end()) {
                    error(reading.line_of_key("url"), webhook_key_name(i, "url"),
                          webhook_url_repeated(url_owners[static_cast<std::size_t>(earlier - urls.begin())]));
                    reading.ok = false;
                }
                urls.push_back(reading.hook.url);
                url_owners.push_back(i);
            }
            ok = ok && reading.ok;
            hooks.push_back(std::move(reading.hook));
        }
        if (!ok) {
            return std::nullopt;
        }
        return hooks;
    }

private:
    void error(int line, std::string key, std::string message) {
        errors_.push_back({std::string(file_), line, std::move(key), std::move(message)});
    }

    table_reading read_table(std::size_t index, const toml::table& table, int table_line) {
        table_reading r;
        for (auto&& [name, node] : table) {
            const std::string key(name.str());
            const int line = line_of(name, node);
            const std::size_t k = key_index(key);
            if (k == webhook_keys.size()) {
                unknown_key(index, key, line);
                r.ok = false;
                continue;
            }
            r.line[k] = line;
            r.read[k] = read_key(webhook_key_name(index, key), key, node, line, r.hook);
            r.ok = r.ok && r.read[k];
        }
        for (const auto& [key, what] : required_keys) {
            if (r.line_of_key(key) == 0) {
                error(table_line, webhook_key_name(index, key), "each [[webhooks]] table needs " + std::string(what));
                r.ok = false;
            }
        }
        for (const auto& problem : webhook_problems(r.hook)) {
            if (r.was_read(problem.key)) {
                error(r.line_of_key(problem.key), webhook_key_name(index, problem.key), problem.message);
                r.ok = false;
            }
        }
        return r;
    }

    void unknown_key(std::size_t index, const std::string& key, int line) {
        const std::vector<std::string> keys(webhook_keys.begin(), webhook_keys.end());
        const std::string guess = nearest(key, keys);
        error(line, webhook_key_name(index, key),
              "unknown key '" + key + "' in [[webhooks]]; " +
                  (guess.empty() ? "the keys are url, events, secret, timeout_ms, queue_events and ca_file"
                                 : "did you mean '" + guess + "'?"));
    }

    // Stores the value of a known key into `hook` when it has the right type (and, for a number,
    // is in range); else reports it under `name` and returns false.
    bool read_key(const std::string& name, std::string_view key, const toml::node& node, int line,
                  webhook_endpoint& hook) {
        if (key == "events") {
            return read_events(name, node, line, hook.events);
        }
        if (key == "timeout_ms") {
            return read_whole(name, node, line, webhook_timeout_ms_min, webhook_timeout_ms_max, hook.timeout_ms);
        }
        if (key == "queue_events") {
            return read_whole(name, node, line, webhook_queue_events_min, webhook_queue_events_max,
                              hook.queue_events);
        }
        std::string& field = key == "url" ? hook.url : key == "secret" ? hook.secret : hook.ca_file;
        if (const auto* s = node.as_string()) {
            field = s->get();
            return true;
        }
        // A secret of the wrong type is still the secret: say what it is, never what it holds.
        error(line, name,
              "expects a string, got " + describe(node, key == "secret" ? value_shown::no : value_shown::yes));
        return false;
    }

    bool read_events(const std::string& name, const toml::node& node, int line, std::vector<std::string>& events) {
        static const std::string expected = "expects a list of event words, such as [\"message\", \"dm\"], or [\"*\"]";
        const toml::array* array = node.as_array();
        if (array == nullptr) {
            error(line, name, expected + ", got " + describe(node));
            return false;
        }
        for (std::size_t i = 0; i < array->size(); ++i) {
            const toml::node& entry = *array->get(i);
            const auto* word = entry.as_string();
            if (word == nullptr) {
                error(line, name, expected + "; entry " + std::to_string(i + 1) + " is " + describe(entry));
                return false;
            }
            events.push_back(word->get());
        }
        return true;
    }

    template <typename T>
    bool read_whole(const std::string& name, const toml::node& node, int line, std::int64_t min, std::int64_t max,
                    T& field) {
        const auto* n = node.as_integer();
        if (n == nullptr) {
            error(line, name,
                  "expects a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", got " +
                      describe(node));
            return false;
        }
        // Checked before it is narrowed into the field, where a huge value would wrap into range.
        if (std::string why = check_whole_range(n->get(), min, max); !why.empty()) {
            error(line, name, why);
            return false;
        }
        field = static_cast<T>(n->get());
        return true;
    }

    const option& option_;
    std::string_view file_;
    std::vector<config_error>& errors_;
};

}  // namespace

std::optional<std::vector<webhook_endpoint>> read_webhook_tables(const option& o, const toml::node& node, int line,
                                                                  std::string_view file,
                                                                  std::vector<config_error>& errors) {
    return webhook_reader(o, file, errors).read(node, line);
}

}  // namespace parley::config
