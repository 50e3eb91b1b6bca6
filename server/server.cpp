#include "server/server.hpp"

#include "rooms/chat_hub.hpp"
#include "rooms/cluster/cluster_node.hpp"
#include "server/cluster/redis_transport.hpp"
#include "server/cluster/node_id.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/history/memory_history_store.hpp"
#include "rooms/history/unix_clock.hpp"
#include "server/http_session.hpp"
#include "server/logging.hpp"
#include "server/systemd_notify.hpp"
#include "server/tls_context.hpp"
#include "server/token_key_source.hpp"
#include "server/worker.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdlib>
#include <stdexcept>

namespace parley::server {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

std::vector<config::redis_endpoint> cluster_redis_from(const config::settings& s) {
    std::vector<config::redis_endpoint> shards;
    for (const std::string& url : s.cluster_redis) {
        std::string why;
        auto endpoint = config::parse_redis_url(url, &why);
        if (!endpoint) {
            throw std::runtime_error("cluster.redis " + why);
        }
        shards.push_back(std::move(*endpoint));
    }
    return shards;
}

void report_cluster(cluster::report_level level, std::string_view line) {
    switch (level) {
    case cluster::report_level::debug: spdlog::debug("cluster: {}", line); break;
    case cluster::report_level::info: spdlog::info("cluster: {}", line); break;
    case cluster::report_level::warn: spdlog::warn("cluster: {}", line); break;
    case cluster::report_level::error: spdlog::error("cluster: {}", line); break;
    }
}

cluster::cluster_options cluster_options_from(const config::settings& s) {
    cluster::cluster_options o;
    o.node_id = s.cluster_node_id.empty() ? cluster::default_node_id() : s.cluster_node_id;
    o.name_ttl = std::chrono::milliseconds(s.cluster_name_ttl_ms);
    o.stream_length = s.cluster_history_messages;
    o.history_per_room = s.history_per_room;
    o.presence_max_members = s.presence_max_members;
    o.report = report_cluster;
    return o;
}

}  // namespace

server::server(const config::settings& settings, config::config_source source,
               std::shared_ptr<const tls_context> tls, std::unique_ptr<rooms::history_store> history)
    : settings_(settings),
      source_(std::move(source)),
      tls_(std::move(tls)),
      acceptor_(main_io_),
      stop_signals_(main_io_, SIGINT, SIGTERM),
      reload_signal_(main_io_, SIGHUP),
      accept_retry_(main_io_) {
    unsigned threads = settings_.threads ? settings_.threads : std::max(1u, std::thread::hardware_concurrency());
    std::vector<rooms::worker_context*> contexts;
    for (unsigned i = 0; i < threads; ++i) {
        workers_.push_back(std::make_unique<worker>(i));
        contexts.push_back(&workers_.back()->chat());
        http_shared_.worker_counters.push_back(&workers_.back()->http());
    }
    std::unique_ptr<rooms::message_bus> bus;
    if (!settings_.cluster_redis.empty()) {
        // The cluster's thread is worker 0's: its Redis connections and its logic run there.
        auto options = cluster_options_from(settings_);
        cluster_transport_ = std::make_unique<cluster::redis_transport>(
            workers_.front()->io().get_executor(), cluster_redis_from(settings_), options.name_ttl / 3,
            settings_.cluster_mode == "redis-cluster");
        cluster_ = std::make_unique<cluster::cluster_node>(*cluster_transport_, std::move(options));
        history = cluster_->make_history_store();
        bus = cluster_->make_bus();
    }
    if (!history) {
        history = rooms::make_memory_history_store(settings_.history_per_room, rooms::unix_millis(), 0,
                                                   settings_.history_memory_budget_bytes);
    }
    hub_ = std::make_unique<rooms::chat_hub>(settings_, std::move(history), contexts, std::move(bus));
    token_keys_ = std::make_unique<token_key_source>(
        main_io_.get_executor(), [this](std::shared_ptr<const protocol::token_keys> keys) {
            hub_->update_public_keys(std::move(keys));
        });
    if (std::string error = token_keys_->configure(settings_, "start"); !error.empty()) {
        throw std::runtime_error(error);
    }
    hub_->on_keys_wanted([this] { token_keys_->wanted(); });
    webhooks_ = std::make_unique<webhook_sender>(
        main_io_.get_executor(), hub_->rooms().events(),
        settings_.cluster_node_id.empty() ? cluster::default_node_id() : settings_.cluster_node_id);
    if (std::string error = webhooks_->configure(settings_.webhooks); !error.empty()) {
        throw std::runtime_error(error);
    }
    http_shared_.webhooks = &webhooks_->counters();
    if (cluster_) {
        hub_->set_cluster(cluster_.get());
        cluster_->attach(*hub_);
    }

    boost::system::error_code ec;
    auto address = asio::ip::make_address(settings_.bind, ec);
    if (ec) {
        throw std::runtime_error("'" + settings_.bind + "' is not an IPv4 or IPv6 address");
    }
    tcp::endpoint endpoint(address, settings_.port);
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen(asio::socket_base::max_listen_connections);
}

server::~server() {
    for (auto& w : workers_) {
        w->join();
    }
    if (cluster_) {
        // Its connections live on worker 0's loop, which goes below.
        cluster_->stop();
        cluster_transport_->stop();
    }
    // History reads finishing now would post replies to loops about to go; messages already
    // accepted are still written when the hub (and with it the store) goes, below.
    hub_->history().stop_reads();
    webhooks_.reset();  // before the hub, whose rooms report to it
    // Pending handlers may still hold connections whose teardown touches the hub: destroy them
    // while the hub exists.
    for (auto& w : workers_) {
        w->destroy_io();
    }
    hub_.reset();
}

void server::run() {
    wait_stop_signal();
    wait_reload_signal();
    for (auto& w : workers_) {
        // The last worker to stop ends the main loop too (which still waits for signals).
        w->start([this] {
            asio::post(main_io_, [this] {
                if (++stopped_workers_ == workers_.size()) {
                    main_io_.stop();
                }
            });
        });
    }
    if (cluster_) {
        cluster_transport_->start(*cluster_);
    }
    do_accept();
    systemd::ready("serving");
    main_io_.run();
    for (auto& w : workers_) {
        w->join();
    }
    spdlog::info("parleyd stopped");
}

void server::wait_stop_signal() {
    stop_signals_.async_wait([this](boost::system::error_code ec, int signal) {
        if (ec) {
            return;
        }
        if (stopping_) {
            // The admin (or a supervisor) insists: no more waiting for clients.
            spdlog::warn("signal {} received again during shutdown: exiting now", signal);
            spdlog::default_logger()->flush();
            std::_Exit(1);
        }
        spdlog::info("signal {} received, shutting down", signal);
        do_stop();
        wait_stop_signal();
    });
}

void server::wait_reload_signal() {
    reload_signal_.async_wait([this](boost::system::error_code ec, int) {
        if (ec) {
            return;
        }
        do_reload();
        wait_reload_signal();
    });
}

void server::reload() {
    asio::post(main_io_, [this] { do_reload(); });
}

void server::do_reload() {
    if (stopping_) {
        return;
    }
    systemd::reloading();
    config::load_result loaded = config::load(source_);
    if (!loaded.ok()) {
        spdlog::error("reload rejected, the running configuration stays in force: {} problem(s) in {}",
                      loaded.errors.size(), loaded.path.empty() ? "the configuration" : loaded.path);
        for (const auto& e : loaded.errors) {
            spdlog::error("  {}", e.text());
        }
        systemd::ready("reload rejected");
        return;
    }
    config::reload_plan plan = config::plan_reload(settings_, loaded.value);
    // Before the "reload:" lines below, so that whoever sees one may rely on the certificate too.
    reload_tls();
    // Applied before it is logged: whoever sees a "reload:" line (an admin, a test) may rely on
    // the change, since each worker gets the new settings ahead of any later client request.
    settings_ = std::move(plan.next);
    set_log_level(settings_.log_level);
    hub_->update_settings(settings_);
    token_keys_->configure(settings_, "reload");
    if (std::string error = webhooks_->configure(settings_.webhooks); !error.empty()) {
        spdlog::error("reload: {}; that receiver keeps its previous settings", error);
    }
    for (const auto& line : plan.needs_restart) {
        spdlog::warn("reload: {}", line);
    }
    for (const auto& line : plan.applied) {
        spdlog::info("reload: {}", line);
    }
    if (plan.applied.empty()) {
        spdlog::info("reload: {} read, nothing changed that a reload applies",
                     loaded.path.empty() ? "built-in defaults" : loaded.path);
    }
    systemd::ready("serving");
}

void server::reload_tls() {
    if (!tls_) {
        return;
    }
    // The running paths: a changed path needs a restart (plan_reload says so); renewed files at
    // the same paths, as certbot leaves them, are what a reload is for.
    std::string error;
    auto fresh = tls_context::load(settings_.tls_cert_file, settings_.tls_key_file, error);
    if (!fresh) {
        spdlog::error("reload: TLS certificate not replaced, new connections keep the previous one: {}", error);
        return;
    }
    tls_ = std::move(fresh);
    spdlog::info("reload: TLS certificate read again from {} ({}); new connections use it",
                 settings_.tls_cert_file, tls_->description());
}

void server::stop() {
    asio::post(main_io_, [this] {
        if (!stopping_) {
            do_stop();
        }
    });
}

void server::do_stop() {
    stopping_ = true;
    systemd::stopping();
    // Refuse new work first: no new connections, /readyz 503 for the load balancer, upgrades
    // that were already on their way get 503.
    accepting_.store(false, std::memory_order_relaxed);
    boost::system::error_code ec;
    acceptor_.close(ec);
    accept_retry_.cancel();
    reload_signal_.cancel();
    token_keys_->stop();  // its refresh timer and fetches would keep the main loop running
    auto window = std::chrono::milliseconds(settings_.shutdown_close_window_ms);
    auto deadline = std::chrono::milliseconds(settings_.shutdown_timeout_ms);
    spdlog::info("shutdown: closing connections over {} ms, at most {} ms", window.count(), deadline.count());
    for (auto& w : workers_) {
        // Every loop runs until all workers have closed their connections: an idle worker keeps
        // answering its keep-alive HTTP connections (/readyz 503) meanwhile.
        w->shutdown(window, deadline, [this] {
            asio::post(main_io_, [this] {
                if (++drained_workers_ != workers_.size()) {
                    return;
                }
                auto stop_workers = [this] {
                    // The events of the drain (disconnections, rooms vacated) had the close
                    // window to go out; what is still queued is counted and logged as lost.
                    webhooks_->stop();
                    for (auto& each : workers_) {
                        each->stop();
                    }
                };
                if (!cluster_) {
                    stop_workers();
                    return;
                }
                // The other nodes drop this one's users and names now, not after their lease.
                cluster_->depart([this, stop_workers] { asio::post(main_io_, stop_workers); });
            });
        });
    }
}

void server::do_accept() {
    worker& target = *workers_[next_worker_];
    next_worker_ = (next_worker_ + 1) % workers_.size();
    // The socket is created on the target worker's io_context: from here on only that worker
    // touches it.
    acceptor_.async_accept(target.io(), [this, &target](boost::system::error_code ec, tcp::socket socket) {
        if (ec == asio::error::operation_aborted || stopping_) {
            return;
        }
        if (ec) {
            // Out of descriptors or a transient error: log, back off briefly, keep serving.
            spdlog::warn("accept failed: {}", ec.message());
            accept_retry_.expires_after(std::chrono::milliseconds(50));
            accept_retry_.async_wait([this](boost::system::error_code e) {
                if (!e) {
                    do_accept();
                }
            });
            return;
        }
        boost::system::error_code peer_ec;
        auto remote = socket.remote_endpoint(peer_ec);
        peer_address peer = peer_ec ? peer_address{} : peer_address::from(remote.address(), remote.port());
        connection_slot slot;
        std::optional<reject_reason> refused;
        switch (limiter_.try_admit(peer, settings_.max_connections, settings_.max_connections_per_ip, slot)) {
        case connection_limiter::verdict::admitted: break;
        case connection_limiter::verdict::over_total: refused = reject_reason::max_connections; break;
        case connection_limiter::verdict::over_per_ip: refused = reject_reason::max_connections_per_ip; break;
        }
        auto session = std::make_shared<http_session>(std::move(socket), target, *hub_, http_shared_, std::move(slot),
                                                      refused, tls_);
        asio::post(target.io(), [session] { session->start(); });
        do_accept();
    });
}

}  // namespace parley::server
