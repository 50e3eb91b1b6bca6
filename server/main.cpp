// parleyd: the parley chat server daemon.

#include "server/options.hpp"
#include "server/server.hpp"

#include <boost/system/system_error.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
    auto cli = parley::server::parse_command_line(argc, argv);
    if (cli.show_help) {
        std::fputs(parley::server::usage_text().c_str(), stdout);
        return 0;
    }
    if (cli.show_version) {
        std::printf("parleyd %s\n", PARLEY_VERSION);
        return 0;
    }
    if (!cli.error.empty()) {
        std::fprintf(stderr, "parleyd: %s (see parleyd --help)\n", cli.error.c_str());
        return 2;
    }
    const auto& settings = cli.settings;

    auto logger = spdlog::stdout_logger_mt("parley");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::from_str(settings.log_level));
    spdlog::flush_on(spdlog::level::info);

    // Writes use MSG_NOSIGNAL; this also covers any path that does not.
    std::signal(SIGPIPE, SIG_IGN);

    std::unique_ptr<parley::server::server> daemon;
    try {
        daemon = std::make_unique<parley::server::server>(settings);
    } catch (const boost::system::system_error& e) {
        // The code's message alone ("Address already in use"): what() also names library internals.
        std::fprintf(stderr, "parleyd: cannot listen on %s:%u: %s\n", settings.bind.c_str(),
                     static_cast<unsigned>(settings.port), e.code().message().c_str());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "parleyd: cannot listen on %s:%u: %s\n", settings.bind.c_str(),
                     static_cast<unsigned>(settings.port), e.what());
        return 1;
    }
    auto endpoint = daemon->local_endpoint();
    spdlog::info("parleyd {} listening on {}:{} threads={} ws_path={}", PARLEY_VERSION, endpoint.address().to_string(),
                 endpoint.port(), daemon->thread_count(), settings.ws_path);
    try {
        daemon->run();
    } catch (const std::exception& e) {
        spdlog::critical("fatal: {}", e.what());
        return 1;
    }
    daemon.reset();
    return 0;
}
