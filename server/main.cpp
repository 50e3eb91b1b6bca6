// parleyd: the parley chat server daemon.

#include "config/command_line.hpp"
#include "config/loader.hpp"
#include "config/redis_url.hpp"
#include "server/cluster/shard_rebalance.hpp"
#include "server/history_setup.hpp"
#include "server/logging.hpp"
#include "server/server.hpp"
#include "server/tls_context.hpp"
#include "server/token_key_file.hpp"

#include <boost/system/system_error.hpp>
#include <spdlog/spdlog.h>

#include <malloc.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

namespace {

namespace config = parley::config;
namespace server = parley::server;
namespace cluster = parley::cluster;

// Prints every problem of a configuration that failed to load, one per line.
void print_errors(const config::load_result& loaded) {
    for (const auto& e : loaded.errors) {
        std::fprintf(stderr, "parleyd: %s\n", e.text().c_str());
    }
}

// --cluster-rebalance: moves the keys of rooms to the Redis server cluster.redis gives them now.
// Returns the exit status.
int rebalance_cluster(const config::settings& settings) {
    if (settings.cluster_redis.empty()) {
        std::fprintf(stderr, "parleyd: --cluster-rebalance needs cluster.redis\n");
        return 2;
    }
    if (settings.cluster_mode == "redis-cluster") {
        // Redis Cluster moves slots with their keys itself (redis-cli --cluster reshard).
        std::fprintf(stderr, "parleyd: --cluster-rebalance is for standalone servers; a Redis Cluster moves its "
                             "slots itself (redis-cli --cluster reshard or rebalance)\n");
        return 2;
    }
    std::vector<config::redis_endpoint> shards;
    for (const std::string& url : settings.cluster_redis) {
        shards.push_back(*config::parse_redis_url(url));  // checked by the loader
    }
    const cluster::rebalance_outcome done = cluster::rebalance_shards(shards, std::chrono::minutes(30));
    std::printf("parleyd: moved %llu key(s) of rooms to the Redis server that holds them now\n",
                static_cast<unsigned long long>(done.moved));
    for (const std::string& key : done.conflicts) {
        std::printf("parleyd: left %s where it is: its new server has a key of that name already\n", key.c_str());
    }
    if (!done.error.empty()) {
        std::fprintf(stderr, "parleyd: rebalance stopped: %s (running it again moves what is left)\n",
                     done.error.c_str());
    }
    return done.ok() ? 0 : 1;
}

// --check-config: the configuration, its TLS files and its token keys. Returns the exit status.
int check_configuration(const config::load_result& loaded, const char* origin) {
    if (!loaded.ok()) {
        print_errors(loaded);
        std::fprintf(stderr, "parleyd: configuration %s has %zu problem(s)\n", origin, loaded.errors.size());
        return 1;
    }
    // The TLS files too: systemd's reload runs this check first, so a renewal that left a
    // broken pair fails `systemctl reload` with the reason rather than only in the log.
    if (!loaded.value.tls_cert_file.empty()) {
        std::string error;
        if (!server::tls_context::load(loaded.value.tls_cert_file, loaded.value.tls_key_file, error)) {
            std::fprintf(stderr, "parleyd: TLS: %s\n", error.c_str());
            std::fprintf(stderr, "parleyd: configuration %s has 1 problem(s)\n", origin);
            return 1;
        }
    }
    if (!loaded.value.auth_public_keys.empty()) {
        std::string error;
        if (!server::read_token_key_file(loaded.value.auth_public_keys, error)) {
            std::fprintf(stderr, "parleyd: %s\n", error.c_str());
            std::fprintf(stderr, "parleyd: configuration %s has 1 problem(s)\n", origin);
            return 1;
        }
    }
    std::printf("parleyd: configuration %s is valid\n", origin);
    return 0;
}

// The TLS context (when configured), the history store and the listening server, in that
// order. Null, after saying why on stderr, when one of them cannot be had.
std::unique_ptr<server::server> make_daemon(const config::settings& settings, const config::config_source& source,
                                            std::shared_ptr<const server::tls_context>& tls) {
    if (!settings.tls_cert_file.empty()) {
        std::string error;
        tls = server::tls_context::load(settings.tls_cert_file, settings.tls_key_file, error);
        if (!tls) {
            std::fprintf(stderr, "parleyd: not starting: TLS: %s\n", error.c_str());
            return nullptr;
        }
    }
    std::unique_ptr<parley::rooms::history_store> history;
    try {
        // A node of a cluster keeps history in the cluster's Redis, not in a file of its own.
        if (settings.cluster_redis.empty()) {
            history = server::open_history(settings);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "parleyd: not starting: history: %s\n", e.what());
        return nullptr;
    }
    try {
        return std::make_unique<server::server>(settings, source, tls, std::move(history));
    } catch (const boost::system::system_error& e) {
        // The code's message alone ("Address already in use"): what() also names library internals.
        std::fprintf(stderr, "parleyd: cannot listen on %s:%u: %s\n", settings.bind.c_str(),
                     static_cast<unsigned>(settings.port), e.code().message().c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "parleyd: cannot listen on %s:%u: %s\n", settings.bind.c_str(),
                     static_cast<unsigned>(settings.port), e.what());
    }
    return nullptr;
}

// The start-up lines: where it listens, where the page is, where history goes, which certificate.
void log_started(const server::server& daemon, const config::settings& settings, const server::tls_context* tls,
                 const char* origin) {
    auto endpoint = daemon.local_endpoint();
    spdlog::info("parleyd {} listening on {}:{} threads={} ws_path={} tls={} config={}", PARLEY_VERSION,
                 endpoint.address().to_string(), endpoint.port(), daemon.thread_count(), settings.ws_path,
                 tls ? "on" : "off", origin);
    // Where a person on this machine opens the chat page (any address when bound to all).
    auto address = endpoint.address();
    std::string host = address.is_unspecified() ? "localhost"
                       : address.is_v6()       ? fmt::format("[{}]", address.to_string())
                                               : address.to_string();
    spdlog::info("chat page at {}://{}:{}/", tls ? "https" : "http", host, endpoint.port());
    if (!settings.cluster_redis.empty()) {
        spdlog::info("history shared by the cluster in redis (up to {} messages per room)",
                     settings.cluster_history_messages);
    } else if (settings.history_store == parley::config::history_backend::sqlite) {
        spdlog::info("history in {} (written every {} ms)", settings.history_path, settings.history_flush_interval_ms);
    } else {
        spdlog::info("history in memory only: lost at restart");
    }
    if (tls) {
        spdlog::info("TLS certificate {} ({})", settings.tls_cert_file, tls->description());
    }
}

}  // namespace

int main(int argc, char** argv) {
    // No fastbins: a freed small chunk is merged with its free neighbours at once instead of
    // being parked unmerged. After a burst of handshakes (each leaves a dozen small freed
    // chunks between the long-lived objects of the connections set up meanwhile) this keeps
    // about 15 bytes less of heap per idle connection resident (docs/performance.md). The
    // per-thread cache in front of the bins still serves the frequent small allocations.
    mallopt(M_MXFAST, 0);
    // One heap for every thread rather than one per thread. Room logs are made on the worker of
    // whoever joins and evicted in least-recently-used order across all workers; with a heap
    // per worker, what one worker's evictions free cannot hold the next worker's new logs, and
    // after many rooms came and went each heap stays at its own peak (100,000 invented rooms:
    // about 1 MB more resident with two workers, and varying by as much from run to run,
    // docs/performance.md). The per-thread cache in front of the heap still serves the frequent
    // small allocations without its lock. MALLOC_ARENA_MAX in the environment still decides.
    if (std::getenv("MALLOC_ARENA_MAX") == nullptr) {
        mallopt(M_ARENA_MAX, 1);
    }
    const parley::config::arguments cli = parley::config::parse_arguments(argc, argv);
    if (cli.show_help) {
        std::fputs(parley::config::usage_text().c_str(), stdout);
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

    config::load_result loaded = config::load(cli.source);
    const char* origin = loaded.path.empty() ? "built-in defaults" : loaded.path.c_str();
    if (cli.check_config) {
        return check_configuration(loaded, origin);
    }
    if (!loaded.ok()) {
        print_errors(loaded);
        std::fprintf(stderr, "parleyd: not starting: configuration %s has %zu problem(s)\n", origin,
                     loaded.errors.size());
        return 1;
    }
    const auto& settings = loaded.value;
    if (cli.cluster_rebalance) {
        return rebalance_cluster(settings);
    }
    try {
        server::setup_logging({settings.log_level, settings.log_format, settings.log_file});
    } catch (const std::exception& e) {
        std::fprintf(stderr, "parleyd: %s\n", e.what());
        return 1;
    }
    // Writes use MSG_NOSIGNAL; this also covers any path that does not.
    std::signal(SIGPIPE, SIG_IGN);

    std::shared_ptr<const server::tls_context> tls;
    std::unique_ptr<server::server> daemon = make_daemon(settings, cli.source, tls);
    if (!daemon) {
        return 1;
    }
    log_started(*daemon, settings, tls.get(), origin);
    try {
        daemon->run();
    } catch (const std::exception& e) {
        spdlog::critical("fatal: {}", e.what());
        return 1;
    }
    daemon.reset();
    return 0;
}
