#pragma once

#include "rooms/session_output.hpp"
#include "rooms/worker_context.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace parley::server {

class ws_connection;

// One worker thread with its own io_context. Every connection accepted for this worker lives
// here for its whole life, so its state needs no lock. Also owns what all its connections share:
// the receive buffer (an idle connection owns none) and the list of connections with frames to
// flush at the end of this event-loop pass (the cork: one gathered write per connection per pass).
class worker final : public rooms::worker_executor {
public:
    explicit worker(std::uint32_t index);
    ~worker() override;

    std::uint32_t index() const { return index_; }
    boost::asio::io_context& io() { return *io_; }
    rooms::worker_context& chat() { return chat_; }

    // Thread: any. Runs task on this worker's thread.
    void post(std::function<void()> task) override;

    void start();  // starts the thread
    void join();   // waits for the thread to end
    // Thread: any. Closes every connection with 1001 and stops the loop once they are gone or
    // after `grace`.
    void shutdown(std::chrono::milliseconds grace);
    // Destroys the io_context and with it every handler and connection still pending. Call after
    // join() and before the chat hub goes away.
    void destroy_io();

    // Worker thread only.
    std::vector<char>& receive_buffer() { return receive_buffer_; }
    void schedule_flush(std::shared_ptr<ws_connection> connection);
    void attach(ws_connection* connection);
    void detach(ws_connection* connection);
    std::size_t connection_count() const { return connections_.size(); }

private:
    void flush_pending();

    std::uint32_t index_;
    std::unique_ptr<boost::asio::io_context> io_;
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
    rooms::worker_context chat_;
    std::thread thread_;
    std::vector<char> receive_buffer_;
    std::vector<std::shared_ptr<ws_connection>> pending_flush_;
    std::vector<std::shared_ptr<ws_connection>> flushing_;
    bool flush_posted_ = false;
    bool stopping_ = false;
    std::vector<ws_connection*> connections_;  // for shutdown; index kept in each connection
};

}  // namespace parley::server
