#pragma once

#include "config/settings.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>
#include <vector>

namespace parley::rooms {
class chat_hub;
}

namespace parley::server {

class worker;

// The daemon: N workers, one listener handing accepted sockets to them round-robin, the chat hub,
// and SIGINT/SIGTERM handling. The constructor binds and listens (throws on failure); run()
// serves until a stop signal and returns after every worker has stopped.
class server {
public:
    explicit server(const config::settings& settings);
    ~server();

    boost::asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }
    unsigned thread_count() const { return static_cast<unsigned>(workers_.size()); }

    void run();
    // Thread: any. Begins the shutdown that run() waits for.
    void stop();

private:
    void do_accept();

    config::settings settings_;
    boost::asio::io_context main_io_;  // listener and signals, on the thread that calls run()
    std::vector<std::unique_ptr<worker>> workers_;
    std::unique_ptr<rooms::chat_hub> hub_;
    boost::asio::ip::tcp::acceptor acceptor_;
    boost::asio::signal_set signals_;
    boost::asio::steady_timer accept_retry_;
    std::size_t next_worker_ = 0;
    bool stopping_ = false;
};

}  // namespace parley::server
