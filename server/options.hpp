#pragma once

#include "config/settings.hpp"

#include <string>

namespace parley::server {

// What the command line asked for.
struct command_line {
    config::settings settings;
    bool show_help = false;
    bool show_version = false;
    std::string error;  // non-empty: a usage error, to print with the help hint
};

// Parses argv against one option table (name, help, setter); --help prints that same table.
command_line parse_command_line(int argc, char** argv);
std::string usage_text();

}  // namespace parley::server
