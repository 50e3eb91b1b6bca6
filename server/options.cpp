#include "server/options.hpp"

#include "config/command_line.hpp"

#include <string_view>
#include <vector>

namespace parley::server {

// The parsing itself lives in config/ (it needs nothing of the server) so that its unit tests
// run without the network stack.
command_line parse_command_line(int argc, char** argv) {
    std::vector<std::string_view> args;
    for (int i = 1; i < argc; ++i) {
        args.emplace_back(argv[i]);
    }
    config::arguments parsed = config::parse_arguments(args);
    command_line result;
    result.source = std::move(parsed.source);
    result.check_config = parsed.check_config;
    result.show_help = parsed.show_help;
    result.show_version = parsed.show_version;
    result.error = std::move(parsed.error);
    return result;
}

std::string usage_text() { return config::usage_text(); }

}  // namespace parley::server
