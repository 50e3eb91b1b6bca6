#pragma once

#include "config/loader.hpp"

#include <span>
#include <string>
#include <string_view>

namespace parley::config {

// What parleyd's arguments asked for. Flags never fill settings directly: each settings flag
// becomes an override_value, applied on top of the file by load() (at start and again at every
// reload), so a flag always wins over the file.
struct arguments {
    config_source source;       // --config PATH, and one override per settings flag, in order
    bool check_config = false;  // --check-config
    bool cluster_rebalance = false;  // --cluster-rebalance
    bool show_help = false;     // --help, -h
    bool show_version = false;  // --version
    std::string error;          // non-empty: a usage error ("unknown option '--prot'; did you mean '--port'?")
};

// Parses the arguments after the program name: --config PATH, --check-config, --cluster-rebalance,
// --set SECTION.KEY=VALUE (repeatable), every flag of the option table (`--port 9000` or
// `--port=9000`), --help/-h, --version. Stops at the first usage error. Values are not checked
// here but by load(), which names the flag; an unknown --set key is a usage error.
arguments parse_arguments(std::span<const std::string_view> args);
// The same from main()'s argc and argv; argv[0], the program name, is skipped.
arguments parse_arguments(int argc, const char* const* argv);

// --help text, generated from the option table: each flag with its value name, the first
// sentence of its help, its key and default.
std::string usage_text();

}  // namespace parley::config
