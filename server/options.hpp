#pragma once

#include "config/loader.hpp"

#include <string>

namespace parley::server {

// What the command line asked for. Flags never fill settings directly: they become overrides
// that are applied on top of the config file (at start and again at every reload), so a flag
// always wins over the file.
struct command_line {
    config::config_source source;  // --config PATH, and one override per settings flag
    bool check_config = false;     // --check-config: load, report, exit 0 or 1
    bool show_help = false;
    bool show_version = false;
    std::string error;  // non-empty: a usage error, to print with the help hint
};

// Flags: --config PATH, --check-config, --set SECTION.KEY=VALUE (any key of the option table),
// the short flags the option table names (--port N, --threads T, ...), --help, --version.
// Values are checked when the configuration is loaded, not here.
command_line parse_command_line(int argc, char** argv);
// The flags, generated from the option table.
std::string usage_text();

}  // namespace parley::server
