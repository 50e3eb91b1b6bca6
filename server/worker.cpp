#include "server/worker.hpp"

#include "server/ws_connection.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

namespace parley::server {

namespace asio = boost::asio;

namespace {
// One read of this size drains what a busy client sent in one event; shared by the worker's
// connections, so its size does not multiply with the connection count.
constexpr std::size_t receive_buffer_size = 256 * 1024;
}  // namespace

worker::worker(std::uint32_t index)
    : index_(index),
      // Not the single-thread hint: with it, Asio queues a post made from this worker's own
      // thread privately until the running handler ends, so it could be overtaken by a post from
      // another worker made later, breaking a room's seq order across workers.
      io_(std::make_unique<asio::io_context>()),
      work_(asio::make_work_guard(*io_)),
      chat_(index, *this),
      receive_buffer_(receive_buffer_size) {}

worker::~worker() {
    if (thread_.joinable()) {
        io_->stop();
        thread_.join();
    }
}

void worker::post(std::function<void()> task) { asio::post(*io_, std::move(task)); }

void worker::start() {
    thread_ = std::thread([this] {
        try {
            io_->run();
        } catch (const std::exception& e) {
            // A handler that throws is a bug; log it loudly rather than lose the worker silently.
            spdlog::critical("worker {} stopped by an exception: {}", index_, e.what());
            std::terminate();
        }
    });
}

void worker::join() {
    if (thread_.joinable()) {
        thread_.join();
    }
}

void worker::destroy_io() {
    // Connections waiting for a flush own timers and sockets of this io_context: release them
    // while it still exists.
    pending_flush_.clear();
    flushing_.clear();
    io_.reset();
}

void worker::schedule_flush(std::shared_ptr<ws_connection> connection) {
    pending_flush_.push_back(std::move(connection));
    if (!flush_posted_) {
        flush_posted_ = true;
        // Runs after every handler already queued in this pass: their frames ride the same write.
        asio::post(*io_, [this] { flush_pending(); });
    }
}

void worker::flush_pending() {
    flush_posted_ = false;
    flushing_.swap(pending_flush_);
    for (auto& connection : flushing_) {
        connection->flush();
    }
    flushing_.clear();
}

void worker::attach(ws_connection* connection) {
    connection->worker_slot = connections_.size();
    connections_.push_back(connection);
}

void worker::detach(ws_connection* connection) {
    std::size_t slot = connection->worker_slot;
    if (slot >= connections_.size() || connections_[slot] != connection) {
        return;
    }
    connections_[slot] = connections_.back();
    connections_[slot]->worker_slot = slot;
    connections_.pop_back();
    // io_ is null while destroy_io() tears the io_context down (and with it the last connections).
    if (stopping_ && connections_.empty() && io_) {
        work_.reset();
        io_->stop();
    }
}

void worker::shutdown(std::chrono::milliseconds grace) {
    asio::post(*io_, [this, grace] {
        stopping_ = true;
        auto timer = std::make_shared<asio::steady_timer>(*io_, grace);
        timer->async_wait([this, timer](boost::system::error_code) {
            work_.reset();
            io_->stop();
        });
        if (connections_.empty()) {
            work_.reset();
            io_->stop();
            return;
        }
        // close() may detach connections from the list; walk a copy.
        auto open = connections_;
        for (ws_connection* c : open) {
            c->close(protocol::close_code::going_away, "server shutting down");
        }
    });
}

}  // namespace parley::server
