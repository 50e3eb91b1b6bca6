#include "config/loader.hpp"

#include "config/options.hpp"
#include "config/toml_nodes.hpp"
#include "config/webhook_tables.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

namespace parley::config {
namespace {

constexpr std::string_view command_line_file = "command line";

// Collects the problems of one file; each names its line and dotted key.
class file_checker {
public:
    file_checker(std::string_view file, settings& out, std::vector<config_error>& errors)
        : file_(file), out_(out), errors_(errors) {}

    void check_root(const toml::table& root) {
        for (auto&& [name, node] : root) {
            const std::string section(name.str());
            int line = line_of(name, node);
            if (std::find(sections().begin(), sections().end(), section) == sections().end()) {
                unknown_section(section, node, line);
            } else if (const option* tables = find_option(section, "")) {
                // Not a section: the root key holds the whole option, an array of tables ([[webhooks]]).
                check_value(*tables, node, line);
            } else if (const toml::table* table = node.as_table()) {
                check_section(section, *table);
            } else {
                error(line, section, "expects a section [" + section + "] of settings, got " + describe(node));
            }
        }
    }

private:
    void error(int line, std::string key, std::string message) {
        errors_.push_back({std::string(file_), line, std::move(key), std::move(message)});
    }

    static std::vector<std::string> keys_of(std::string_view section) {
        std::vector<std::string> keys;
        for (const auto& o : options()) {
            if (o.section == section) {
                keys.emplace_back(o.key);
            }
        }
        return keys;
    }

    static std::string list(const std::vector<std::string>& words) {
        std::string text;
        for (std::size_t i = 0; i < words.size(); ++i) {
            text += (i == 0 ? "" : ", ") + words[i];
        }
        return text;
    }

    void unknown_section(const std::string& section, const toml::node& node, int line) {
        std::vector<std::string> known(sections().begin(), sections().end());
        if (!node.is_table()) {
            // A key outside any section: perhaps one of ours written without its header.
            for (const auto& o : options()) {
                if (o.key == section) {
                    error(line, section,
                          "unknown key '" + section + "' outside any section; did you mean '" + o.name() +
                              "' (" + section + " under [" + std::string(o.section) + "])?");
                    return;
                }
            }
            error(line, section,
                  "unknown key '" + section + "' outside any section; settings go in the sections " + list(known));
            return;
        }
        if (std::string guess = nearest(section, known); !guess.empty()) {
            error(line, section, "unknown section [" + section + "]; did you mean [" + guess + "]?");
        } else {
            error(line, section, "unknown section [" + section + "]; the sections are " + list(known));
        }
    }

    void unknown_key(const std::string& section, const std::string& key, int line) {
        const std::string where = "unknown key '" + key + "' in [" + section + "]";
        std::vector<std::string> keys = keys_of(section);
        if (std::string guess = nearest(key, keys); !guess.empty()) {
            error(line, section + "." + key, where + "; did you mean '" + guess + "'?");
            return;
        }
        for (const auto& o : options()) {
            if (o.key == key) {
                error(line, section + "." + key, where + "; did you mean '" + o.name() + "'?");
                return;
            }
        }
        if (find_option(key, "") != nullptr) {
            // `webhooks = [...]` written below a section header belongs to that section.
            error(line, section + "." + key,
                  where + "; [[" + key + "]] tables go at the top level of the file, not inside a section");
            return;
        }
        error(line, section + "." + key, where + "; the keys of [" + section + "] are " + list(keys));
    }

    void check_section(const std::string& section, const toml::table& table) {
        for (auto&& [name, node] : table) {
            const std::string key(name.str());
            int line = line_of(name, node);
            const option* o = find_option(section, key);
            if (o == nullptr) {
                unknown_key(section, key, line);
                continue;
            }
            check_value(*o, node, line);
        }
    }

    void check_value(const option& o, const toml::node& node, int line) {
        std::optional<option_value> value = convert(o, node, line);
        if (!value) {
            return;
        }
        if (std::string why = o.set(out_, *value); !why.empty()) {
            error(line, o.name(), why);
        }
    }

    std::optional<option_value> type_error(const option& o, const toml::node& node, int line) {
        error(line, o.name(), "expects " + std::string(o.expects()) + ", got " + describe(node));
        return std::nullopt;
    }

    std::optional<option_value> convert(const option& o, const toml::node& node, int line) {
        switch (o.type) {
        case value_type::boolean:
            if (const auto* b = node.as_boolean()) {
                return b->get();
            }
            break;
        case value_type::whole:
            if (const auto* n = node.as_integer()) {
                return n->get();
            }
            break;
        case value_type::number:
            if (const auto* n = node.as_integer()) {
                return static_cast<double>(n->get());
            }
            if (const auto* d = node.as_floating_point()) {
                return d->get();
            }
            break;
        case value_type::string:
        case value_type::choice:
            if (const auto* s = node.as_string()) {
                return s->get();
            }
            break;
        case value_type::string_list:
            return convert_strings(o, node, line);
        case value_type::room_list:
            return convert_rooms(o, node, line);
        case value_type::webhook_list:
            return convert_webhooks(o, node, line);
        }
        return type_error(o, node, line);
    }

    std::optional<option_value> convert_strings(const option& o, const toml::node& node, int line) {
        const toml::array* array = node.as_array();
        if (array == nullptr) {
            if (const auto* single = node.as_string(); single != nullptr && o.one_or_list) {
                // "" is the empty list, as it was when the option took one string.
                return single->get().empty() ? std::vector<std::string>{} : std::vector<std::string>{single->get()};
            }
            return type_error(o, node, line);
        }
        std::vector<std::string> entries;
        for (std::size_t i = 0; i < array->size(); ++i) {
            const toml::node& entry = *array->get(i);
            if (const auto* s = entry.as_string()) {
                entries.push_back(s->get());
            } else {
                error(line, o.name(),
                      "expects " + std::string(o.expects()) + "; entry " + std::to_string(i + 1) + " is " +
                          describe(entry));
                return std::nullopt;
            }
        }
        return entries;
    }

    std::optional<option_value> convert_rooms(const option& o, const toml::node& node, int line) {
        const toml::array* array = node.as_array();
        if (array == nullptr) {
            if (node.is_table()) {
                error(line, o.name(),
                      "expects " + std::string(o.expects()) + ", got a single table; write [[rooms.permanent]] "
                      "with double brackets, once per room");
                return std::nullopt;
            }
            return type_error(o, node, line);
        }
        std::vector<permanent_room> rooms;
        bool ok = true;
        for (std::size_t i = 0; i < array->size(); ++i) {
            const toml::node& entry = *array->get(i);
            int entry_line = static_cast<int>(entry.source().begin.line);
            if (entry_line == 0) {
                entry_line = line;
            }
            const toml::table* table = entry.as_table();
            if (table == nullptr) {
                error(entry_line, o.name(), "expects " + std::string(o.expects()) + "; entry " +
                                                std::to_string(i + 1) + " is " + describe(entry));
                ok = false;
                continue;
            }
            auto room = convert_room(o, *table, entry_line);
            if (!room) {
                ok = false;
                continue;
            }
            if (std::string why = room_name_problem(room->name); !why.empty()) {
                error(entry_line, o.name(), why);
                ok = false;
                continue;
            }
            for (const auto& earlier : rooms) {
                if (earlier.name == room->name) {
                    error(entry_line, o.name(), "room '" + room->name + "' is declared twice");
                    ok = false;
                }
            }
            rooms.push_back(std::move(*room));
        }
        if (!ok) {
            return std::nullopt;
        }
        return rooms;
    }

    std::optional<option_value> convert_webhooks(const option& o, const toml::node& node, int line) {
        if (auto hooks = read_webhook_tables(o, node, line, file_, errors_)) {
            return std::move(*hooks);
        }
        return std::nullopt;
    }

    std::optional<permanent_room> convert_room(const option& o, const toml::table& table, int table_line) {
        permanent_room room;
        bool has_name = false;
        bool ok = true;
        for (auto&& [name, node] : table) {
            const std::string key(name.str());
            int line = line_of(name, node);
            if (key == "private") {
                if (const auto* b = node.as_boolean()) {
                    room.is_private = b->get();
                } else {
                    error(line, o.name() + "." + key, "expects true or false, got " + describe(node));
                    ok = false;
                }
                continue;
            }
            if (key == "members" || key == "owners" || key == "moderators") {
                std::vector<std::string>& list = key == "members" ? room.members
                                                 : key == "owners" ? room.owners
                                                                   : room.moderators;
                const toml::array* array = node.as_array();
                for (std::size_t i = 0; array != nullptr && i < array->size(); ++i) {
                    if (const auto* member = array->get(i)->as_string()) {
                        list.push_back(member->get());
                    } else {
                        array = nullptr;
                    }
                }
                if (array == nullptr) {
                    error(line, o.name() + "." + key, "expects a list of user names, got " + describe(node));
                    ok = false;
                }
                continue;
            }
            std::string* field = key == "name" ? &room.name : key == "topic" ? &room.topic : nullptr;
            if (field == nullptr) {
                std::string guess = nearest(
                    key, std::vector<std::string>{"name", "topic", "private", "members", "owners", "moderators"});
                error(line, o.name() + "." + key,
                      "unknown key '" + key + "' in [[rooms.permanent]]; " +
                          (guess.empty() ? std::string("the keys are name, topic, private, members, owners and moderators")
                                         : "did you mean '" + guess + "'?"));
                ok = false;
            } else if (const auto* s = node.as_string()) {
                *field = s->get();
                has_name = has_name || field == &room.name;
            } else {
                error(line, o.name() + "." + key, "expects a string, got " + describe(node));
                ok = false;
            }
        }
        if (ok && !has_name) {
            error(table_line, o.name(), "each [[rooms.permanent]] table needs a name");
            ok = false;
        }
        if (!ok) {
            return std::nullopt;
        }
        return room;
    }

    std::string_view file_;
    settings& out_;
    std::vector<config_error>& errors_;
};

void apply_overrides(const std::vector<override_value>& overrides, settings& out, std::vector<config_error>& errors) {
    for (const auto& ov : overrides) {
        const std::string flag = ov.flag.empty() ? std::string("--set") : ov.flag;
        const option* o = find_option(ov.key);
        if (o == nullptr) {
            std::vector<std::string> names;
            for (const auto& candidate : options()) {
                names.push_back(candidate.name());
            }
            std::string guess = nearest(ov.key, names);
            errors.push_back({std::string(command_line_file), 0, ov.key,
                              "unknown key" + (guess.empty() ? std::string() : "; did you mean '" + guess + "'?") +
                                  " (" + flag + ")"});
            continue;
        }
        if (std::string why = o->set_from_string(out, ov.value); !why.empty()) {
            errors.push_back({std::string(command_line_file), 0, o->name(), why + " (" + flag + ")"});
        }
    }
}

// Reads a whole file; on failure returns nullopt and sets `reason` from errno.
std::optional<std::string> read_file(const std::string& path, std::string& reason) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        reason = std::strerror(EISDIR);
        return std::nullopt;
    }
    errno = 0;
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) {
        reason = std::strerror(errno);
        return std::nullopt;
    }
    std::string text;
    char buffer[16384];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, file.get())) {
        text.append(buffer, n);
    }
    if (std::ferror(file.get())) {
        reason = std::strerror(errno != 0 ? errno : EIO);
        return std::nullopt;
    }
    return text;
}

}  // namespace

std::string config_error::text() const {
    std::string out;
    if (!file.empty()) {
        out += file;
        if (line > 0) {
            out += ":" + std::to_string(line);
        }
        out += ": ";
    } else if (line > 0) {
        out += "line " + std::to_string(line) + ": ";
    }
    if (!key.empty()) {
        out += key + ": ";
    }
    return out + message;
}

load_result load_text(std::string_view toml_text, std::string_view file,
                      const std::vector<override_value>& overrides) {
    load_result result;
    result.path = std::string(file);
    try {
        toml::table root = toml::parse(toml_text, std::string(file));
        file_checker(file, result.value, result.errors).check_root(root);
    } catch (const toml::parse_error& e) {
        result.errors.push_back({std::string(file), static_cast<int>(e.source().begin.line), {},
                                 std::string(e.description())});
        return result;
    } catch (const std::exception& e) {
        result.errors.push_back({std::string(file), 0, {}, std::string("cannot be loaded: ") + e.what()});
        return result;
    }
    // Tables iterate in key order, not file order.
    std::stable_sort(result.errors.begin(), result.errors.end(),
                     [](const config_error& a, const config_error& b) { return a.line < b.line; });

    apply_overrides(overrides, result.value, result.errors);

    // Combinations are judged only once every key holds a value it accepts: a key the file got
    // wrong still holds its default, which would make the judgement misleading.
    if (result.errors.empty()) {
        std::string where = file.empty() ? std::string(command_line_file) : std::string(file);
        for (auto& problem : problems(result.value)) {
            result.errors.push_back({where, 0, {}, std::move(problem)});
        }
    }
    return result;
}

load_result load(const config_source& source) {
    std::string path;
    if (source.path) {
        path = *source.path;
    } else {
        std::error_code ec;
        if (std::filesystem::exists(default_config_path, ec)) {
            path = std::string(default_config_path);
        }
    }
    if (path.empty()) {
        // Built-in defaults, with the overrides on top.
        load_result result = load_text("", "", source.overrides);
        result.path.clear();
        return result;
    }
    std::string reason;
    std::optional<std::string> text = read_file(path, reason);
    if (!text) {
        load_result result;
        result.path = path;
        result.errors.push_back({path, 0, {}, "cannot read the configuration file: " + reason});
        return result;
    }
    return load_text(*text, path, source.overrides);
}

reload_plan plan_reload(const settings& running, const settings& loaded) {
    reload_plan plan;
    plan.next = running;
    for (const auto& o : options()) {
        // By value, not by text: the text of [[webhooks]] hides a changed secret.
        if (o.same(running, loaded)) {
            continue;
        }
        std::string before = o.text(running);
        std::string after = o.text(loaded);
        // A secret is never logged, not even its old value.
        std::string change = o.secret ? o.name() + ": changed" : o.name() + ": " + before + " -> " + after;
        if (o.reloadable) {
            o.copy(plan.next, loaded);
            plan.applied.push_back(std::move(change));
        } else {
            plan.needs_restart.push_back(change + " (restart to apply)");
        }
    }
    return plan;
}

}  // namespace parley::config
