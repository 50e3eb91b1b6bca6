#pragma once

#include "config/settings.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::config {

// Where the daemon looks for its file when --config is not given.
inline constexpr std::string_view default_config_path = "/etc/parley/parley.toml";

// One problem found in a configuration: where it is and what is wrong, in words an admin can act
// on ("unknown key 'max_conections'; did you mean 'max_connections'?", "expects a whole number
// from 1 to 256, got 0", "expects a string, got an integer").
struct config_error {
    std::string file;  // the file's path as given; "command line" for a flag
    int line = 0;      // 1-based; 0 when the problem has no single place (a combination of keys)
    std::string key;   // dotted: "limits.max_message_bytes"; empty for a TOML syntax error
    std::string message;
    // "FILE:LINE: KEY: MESSAGE" (parts that are unknown are left out).
    std::string text() const;
};

// A value given on the command line for a key of the table ("limits.max_message_bytes", "65536").
struct override_value {
    std::string key;
    std::string value;
    std::string flag;  // as typed, for error messages ("--max-message")
};

// What to load: an explicit path (--config), else default_config_path when that file exists,
// else the built-in defaults; then the overrides on top.
struct config_source {
    std::optional<std::string> path;
    std::vector<override_value> overrides;
};

struct load_result {
    settings value;                   // valid only when errors is empty
    std::string path;                 // the file read; empty when running on built-in defaults
    std::vector<config_error> errors; // every problem found, in file order; empty: loaded
    bool ok() const { return errors.empty(); }
};

// Reads, checks (types, ranges, unknown keys, validate()) and returns the settings.
// Never throws; an unreadable file is an error naming the path and the reason.
load_result load(const config_source& source);
// The same from TOML text (tests, --check-config of a string); `file` names it in errors.
load_result load_text(std::string_view toml_text, std::string_view file,
                      const std::vector<override_value>& overrides = {});

// What a reload (SIGHUP) does with a newly loaded configuration.
struct reload_plan {
    settings next;                          // the running settings with every reloadable change
    std::vector<std::string> applied;       // "limits.max_text_bytes: 4096 -> 100"
    std::vector<std::string> needs_restart; // "server.port: 8080 -> 9090 (restart to apply)"
};
// Changes of reloadable keys go into next; changes of the others are listed and not applied.
reload_plan plan_reload(const settings& running, const settings& loaded);

}  // namespace parley::config
