#include "config/command_line.hpp"

#include "config/options.hpp"

#include <array>
#include <optional>
#include <vector>

namespace parley::config {
namespace {

struct general_flag {
    std::string_view name;
    std::string_view value_name;
    std::string_view help;
};

constexpr std::array<general_flag, 6> general_flags = {{
    {"--config", "PATH", "read this configuration file instead of the default one"},
    {"--check-config", "", "load the configuration, print every problem found, exit 0 if it is valid, else 1"},
    {"--cluster-rebalance", "", "move the keys of rooms whose Redis server changed (cluster.redis gained or lost a "
                                "server) to the server that holds them now, then exit; run it with every node "
                                "stopped (docs/cluster.md)"},
    {"--set", "SECTION.KEY=VALUE", "set any key of the configuration file, e.g. --set limits.max_connections=50000 "
                                   "(repeatable; a list is comma-separated)"},
    {"--help", "", "print this help and exit (also -h)"},
    {"--version", "", "print the version and exit"},
}};

std::string first_sentence(std::string_view help) {
    auto end = help.find(". ");
    return std::string(end == std::string_view::npos ? help : help.substr(0, end + 1));
}

// One entry of --help: the flag in the left column, the description wrapped to 100 columns.
std::string entry(const std::string& left, std::string_view description) {
    constexpr std::size_t column = 32;
    constexpr std::size_t columns = 100;
    std::string text = left;
    text.resize(std::max(left.size() + 2, column), ' ');
    std::size_t line_start = 0;
    bool first_word = true;
    while (!description.empty()) {
        auto space = description.find(' ');
        std::string_view word = description.substr(0, space);
        description.remove_prefix(space == std::string_view::npos ? description.size() : space + 1);
        if (!first_word && text.size() - line_start + 1 + word.size() > columns) {
            text += "\n";
            line_start = text.size();
            text += std::string(column, ' ');
            first_word = true;
        }
        text += first_word ? "" : " ";
        text += word;
        first_word = false;
    }
    return text + "\n";
}

std::string unknown_option(std::string_view name) {
    std::vector<std::string> flags;
    for (const auto& g : general_flags) {
        flags.emplace_back(g.name);
    }
    for (const auto& o : options()) {
        if (!o.flag.empty()) {
            flags.emplace_back(o.flag);
        }
    }
    std::string message = "unknown option '" + std::string(name) + "'";
    if (std::string guess = nearest(name, flags); !guess.empty()) {
        message += "; did you mean '" + guess + "'?";
    }
    return message;
}

std::string unknown_key(std::string_view key) {
    std::vector<std::string> names;
    for (const auto& o : options()) {
        names.push_back(o.name());
    }
    std::string message = "unknown key '" + std::string(key) + "' in --set";
    if (std::string guess = nearest(key, names); !guess.empty()) {
        message += "; did you mean '" + guess + "'?";
    }
    return message;
}

}  // namespace

arguments parse_arguments(std::span<const std::string_view> args) {
    arguments result;
    for (std::size_t i = 0; i < args.size() && result.error.empty(); ++i) {
        std::string_view arg = args[i];
        if (arg == "--help" || arg == "-h") {
            result.show_help = true;
            continue;
        }
        if (arg == "--version") {
            result.show_version = true;
            continue;
        }
        if (arg == "--check-config") {
            result.check_config = true;
            continue;
        }
        if (arg == "--cluster-rebalance") {
            result.cluster_rebalance = true;
            continue;
        }
        if (!arg.starts_with("--")) {
            result.error = arg.starts_with("-") ? unknown_option(arg) : "unexpected argument '" + std::string(arg) + "'";
            break;
        }
        std::string_view name = arg;
        std::optional<std::string_view> value;
        if (auto eq = arg.find('='); eq != std::string_view::npos) {
            name = arg.substr(0, eq);
            value = arg.substr(eq + 1);
        }
        if (name == "--help" || name == "--version" || name == "--check-config" || name == "--cluster-rebalance") {
            result.error = "option " + std::string(name) + " takes no value";
            break;
        }
        const option* o = find_flag(name);
        if (name != "--config" && name != "--set" && o == nullptr) {
            result.error = unknown_option(name);
            break;
        }
        if (!value) {
            // A following flag is not taken for a value: `--port --threads 2` lacks the port.
            if (i + 1 >= args.size() || args[i + 1].starts_with("--")) {
                result.error = "option " + std::string(name) + " needs a value";
                break;
            }
            value = args[++i];
        }
        if (name == "--config") {
            if (result.source.path) {
                result.error = "option --config given twice";
            } else {
                result.source.path = std::string(*value);
            }
        } else if (name == "--set") {
            auto eq = value->find('=');
            if (eq == std::string_view::npos) {
                result.error = "option --set expects SECTION.KEY=VALUE, got '" + std::string(*value) + "'";
            } else if (find_option(value->substr(0, eq)) == nullptr) {
                result.error = unknown_key(value->substr(0, eq));
            } else {
                result.source.overrides.push_back(
                    {std::string(value->substr(0, eq)), std::string(value->substr(eq + 1)), "--set"});
            }
        } else {
            result.source.overrides.push_back({o->name(), std::string(*value), std::string(name)});
        }
    }
    return result;
}

arguments parse_arguments(int argc, const char* const* argv) {
    std::vector<std::string_view> args;
    for (int i = 1; i < argc; ++i) {
        args.emplace_back(argv[i]);
    }
    return parse_arguments(args);
}

std::string usage_text() {
    const settings defaults;
    std::string text =
        "Usage: parleyd [options]\n"
        "The parley chat server: WebSocket chat at the ws path, GET /healthz and /metrics on the same port.\n"
        "Settings come from the configuration file: --config PATH, else " +
        std::string(default_config_path) +
        " when it exists,\n"
        "else built-in defaults. The flags below override the file; SIGHUP reloads the file.\n\n"
        "General:\n";
    for (const auto& g : general_flags) {
        std::string left = "  " + std::string(g.name) + (g.value_name.empty() ? "" : " " + std::string(g.value_name));
        text += entry(left, g.help);
    }
    text += "\nSettings (each sets one key of the file; any other key: --set):\n";
    for (const auto& o : options()) {
        if (o.flag.empty()) {
            continue;
        }
        std::string left = "  " + std::string(o.flag) + " " + std::string(o.value_name);
        text += entry(left, first_sentence(o.help) + " [" + o.name() + ", default " + o.text(defaults) + "]");
    }
    return text;
}

}  // namespace parley::config
