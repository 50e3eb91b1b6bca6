#pragma once

#include "config/loader.hpp"
#include "config/settings.hpp"
#include "rooms/history/history_store.hpp"
#include "server/connection_limiter.hpp"
#include "server/http_session.hpp"
#include "server/token_key_source.hpp"
#include "server/webhooks/webhook_sender.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <memory>
#include <vector>

namespace parley::rooms {
class chat_hub;
}

namespace parley::cluster {
class cluster_node;
class redis_transport;
}

namespace parley::server {

class tls_context;
class worker;

// The daemon: N workers, one listener handing accepted sockets to them round-robin, the chat
// hub, and the signals: SIGHUP reloads the configuration from `source`, SIGINT/SIGTERM begin a
// graceful shutdown, a second one ends the process at once. The constructor binds and listens
// (throws on failure); run() serves until shut down and returns after every worker stopped.
// With a TLS context (tls.cert_file and tls.key_file set) the port speaks only TLS; each reload
// reads the certificate and key again and new connections get the new context, while a reload
// that cannot read them keeps the old one and logs why.
class server {
public:
    // history: where room messages live (open_history); null: memory, sized by the settings.
    // With cluster.redis set the node keeps history in the cluster's Redis instead.
    server(const config::settings& settings, config::config_source source,
           std::shared_ptr<const tls_context> tls = nullptr, std::unique_ptr<rooms::history_store> history = nullptr);
    ~server();

    boost::asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }
    unsigned thread_count() const { return static_cast<unsigned>(workers_.size()); }

    void run();
    // Thread: any. Begins the shutdown that run() waits for.
    void stop();
    // Thread: any. Re-reads the configuration (what SIGHUP does).
    void reload();

private:
    void do_accept();
    void wait_stop_signal();
    void wait_reload_signal();
    void do_reload();
    void reload_tls();
    void do_stop();

    config::settings settings_;      // what runs now; changed only by reloads, on the main thread
    config::config_source source_;   // where reloads read from (file and command-line overrides)
    boost::asio::io_context main_io_;  // listener and signals, on the thread that calls run()
    std::vector<std::unique_ptr<worker>> workers_;
    // This daemon as a node of a cluster ([cluster] redis set), on worker 0's loop; null for a
    // single node. Declared before the hub: the hub's bus refers to the node until the hub is
    // gone; and the node sends through the transport, declared before it.
    std::unique_ptr<cluster::redis_transport> cluster_transport_;
    std::unique_ptr<cluster::cluster_node> cluster_;
    std::unique_ptr<rooms::chat_hub> hub_;
    connection_limiter limiter_;
    std::shared_ptr<const tls_context> tls_;  // for new connections; main thread only
    // The public keys of login tokens (file and JWK Set URL); runs on the main loop.
    std::unique_ptr<token_key_source> token_keys_;
    // The [[webhooks]] receivers' queues and their sender, on the main loop.
    std::unique_ptr<webhook_sender> webhooks_;
    std::atomic<bool> accepting_{true};  // false once shutdown begins: /readyz 503, upgrades 503
    http_shared http_shared_{accepting_, {}};  // read by every HTTP connection; filled with the workers
    boost::asio::ip::tcp::acceptor acceptor_;
    boost::asio::signal_set stop_signals_;
    boost::asio::signal_set reload_signal_;
    boost::asio::steady_timer accept_retry_;
    std::size_t next_worker_ = 0;
    std::size_t stopped_workers_ = 0;
    std::size_t drained_workers_ = 0;  // workers done closing their connections at shutdown
    bool stopping_ = false;
};

}  // namespace parley::server
