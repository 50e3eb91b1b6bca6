#include "server/server.hpp"

#include "rooms/chat_hub.hpp"
#include "rooms/chat_session.hpp"
#include "server/http_session.hpp"
#include "server/worker.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <csignal>
#include <stdexcept>

namespace parley::server {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
constexpr std::chrono::milliseconds shutdown_grace{2000};
}

server::server(const config::settings& settings)
    : settings_(settings), acceptor_(main_io_), signals_(main_io_, SIGINT, SIGTERM), accept_retry_(main_io_) {
    unsigned threads = settings_.threads ? settings_.threads : std::max(1u, std::thread::hardware_concurrency());
    std::vector<rooms::worker_context*> contexts;
    for (unsigned i = 0; i < threads; ++i) {
        workers_.push_back(std::make_unique<worker>(i));
        contexts.push_back(&workers_.back()->chat());
    }
    hub_ = std::make_unique<rooms::chat_hub>(
        settings_, rooms::make_memory_history_store(settings_.history_per_room, rooms::unix_millis()), contexts);

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
    // Pending handlers may still hold connections whose teardown touches the hub: destroy them
    // while the hub exists.
    for (auto& w : workers_) {
        w->destroy_io();
    }
    hub_.reset();
}

void server::run() {
    signals_.async_wait([this](boost::system::error_code ec, int signal) {
        if (!ec) {
            spdlog::info("signal {} received, shutting down", signal);
            stop();
        }
    });
    for (auto& w : workers_) {
        w->start();
    }
    do_accept();
    main_io_.run();
    for (auto& w : workers_) {
        w->join();
    }
    spdlog::info("parleyd stopped");
}

void server::stop() {
    asio::post(main_io_, [this] {
        if (stopping_) {
            return;
        }
        stopping_ = true;
        boost::system::error_code ec;
        acceptor_.close(ec);
        accept_retry_.cancel();
        signals_.cancel();
        for (auto& w : workers_) {
            w->shutdown(shutdown_grace);
        }
    });
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
        auto session = std::make_shared<http_session>(std::move(socket), target, *hub_);
        asio::post(target.io(), [session] { session->start(); });
        do_accept();
    });
}

}  // namespace parley::server
