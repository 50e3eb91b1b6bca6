#include "server/worker.hpp"

#include "protocol/frame_encoder.hpp"
#include "rooms/chat_hub.hpp"
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
// Small frames copied for one write; more than a loopback socket takes in one call anyway.
constexpr std::size_t send_staging_size = 64 * 1024;
// How often timeouts are checked; also the resolution of every connection timeout.
constexpr std::chrono::milliseconds housekeeping_period{250};
// Shutdown closes one batch per step of this length across the close window.
constexpr std::chrono::milliseconds close_step{50};
}  // namespace

worker::worker(std::uint32_t index)
    : index_(index),
      // Not the single-thread hint: with it, Asio queues a post made from this worker's own
      // thread privately until the running handler ends, so it could be overtaken by a post from
      // another worker made later, breaking a room's seq order across workers.
      io_(std::make_unique<asio::io_context>()),
      work_(asio::make_work_guard(*io_)),
      chat_(index, *this),
      receive_buffer_(receive_buffer_size),
      send_staging_(send_staging_size),
      poller_(std::make_unique<connection_poller>(*io_)),
      ping_frame_(protocol::shared_frame::copy_of(protocol::encode_frame(protocol::opcode::ping, {}))),
      housekeeping_timer_(std::make_unique<asio::steady_timer>(*io_)),
      shutdown_timer_(std::make_unique<asio::steady_timer>(*io_)),
      batch_timer_(std::make_unique<asio::steady_timer>(*io_)) {}

worker::~worker() {
    if (thread_.joinable()) {
        io_->stop();
        thread_.join();
    }
}

void worker::post(std::function<void()> task) { asio::post(*io_, std::move(task)); }

void worker::start(std::function<void()> on_exit) {
    asio::post(*io_, [this] { housekeeping(); });
    poller_->start();
    thread_ = std::thread([this, on_exit = std::move(on_exit)] {
        rooms::worker_context::set_current(&chat_);
        try {
            io_->run();
        } catch (const std::exception& e) {
            // A handler that throws is a bug; log it loudly rather than lose the worker silently.
            spdlog::critical("worker {} stopped by an exception: {}", index_, e.what());
            std::terminate();
        }
        if (on_exit) {
            on_exit();
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
    to_close_.clear();
    // A connection's destructor detaches it: move the list out first so it is not changed while
    // it is being destroyed.
    auto open = std::move(connections_);
    connections_.clear();
    open.clear();
    retired_.clear();
    poller_.reset();
    housekeeping_timer_.reset();
    shutdown_timer_.reset();
    batch_timer_.reset();
    io_.reset();
}

void worker::schedule_flush(boost::intrusive_ptr<ws_connection> connection) {
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

void worker::attach(boost::intrusive_ptr<ws_connection> connection) {
    connection->worker_slot = static_cast<std::uint32_t>(connections_.size());
    connections_.push_back(std::move(connection));
}

void worker::detach(ws_connection* connection) {
    std::size_t slot = connection->worker_slot;
    if (slot >= connections_.size() || connections_[slot].get() != connection) {
        return;
    }
    retired_.push_back(std::move(connections_[slot]));
    if (slot + 1 != connections_.size()) {
        connections_[slot] = std::move(connections_.back());
        connections_[slot]->worker_slot = static_cast<std::uint32_t>(slot);
    }
    connections_.pop_back();
    if (!release_posted_ && io_) {
        release_posted_ = true;
        asio::post(*io_, [this] {
            release_posted_ = false;
            retired_.clear();
        });
    }
    // io_ is null while destroy_io() tears the io_context down (and with it the last connections).
    // Not while batches are still being closed: those connections are already gone, and the
    // last batch stops the loop itself.
    if (stopping_ && connections_.empty() && io_ && to_close_.empty()) {
        drained();
    }
}

void worker::housekeeping() {
    now_ms_ = precise_ms();
    // Lists sized by a burst (every connection dirty in one pass, a mass disconnect) give their
    // storage back once the burst is over.
    for (auto* list : {&pending_flush_, &flushing_, &retired_}) {
        if (list->empty() && list->capacity() > 1024) {
            std::vector<boost::intrusive_ptr<ws_connection>>().swap(*list);
        }
    }
    if (index_ == 0) {
        heap_return_.tick(chat_.hub().history().stats().evicted_bytes, std::chrono::steady_clock::now());
        // About once a second: timed bans and mutes end, as events in their rooms, and big rooms
        // hear their member count.
        if (++housekeeping_passes_ % 4 == 0) {
            const std::shared_ptr<const config::settings> s = chat_.hub().settings();
            chat_.hub().rooms().tick(rooms::unix_millis(), chat_.hub().cluster(),
                                     {s->presence_max_members, static_cast<std::int64_t>(s->presence_count_interval_ms)});
        }
    }
    // check_timeouts() only queues frames and starts closes; it never detaches a connection, so
    // the list cannot change under this loop.
    for (const auto& c : connections_) {
        c->check_timeouts(now_ms_);
    }
    housekeeping_timer_->expires_after(housekeeping_period);
    housekeeping_timer_->async_wait([this](boost::system::error_code ec) {
        if (!ec) {
            housekeeping();
        }
    });
}

void worker::stop_loop() {
    poller_->stop();
    housekeeping_timer_->cancel();
    batch_timer_->cancel();
    shutdown_timer_->cancel();
    work_.reset();
    io_->stop();
}

void worker::stop() {
    asio::post(*io_, [this] { stop_loop(); });
}

void worker::drained() {
    // The loop itself keeps running: a worker without WebSocket connections may still hold
    // keep-alive HTTP connections (a load balancer polling /readyz), which get their 503 until
    // every worker is done and the server stops them all.
    if (!drained_) {
        drained_ = true;
        if (on_drained_) {
            on_drained_();
        }
    }
}

void worker::shutdown(std::chrono::milliseconds window, std::chrono::milliseconds deadline,
                      std::function<void()> on_drained) {
    asio::post(*io_, [this, window, deadline, on_drained = std::move(on_drained)]() mutable {
        stopping_ = true;
        on_drained_ = std::move(on_drained);
        shutdown_timer_->expires_after(deadline);
        shutdown_timer_->async_wait([this](boost::system::error_code ec) {
            if (!ec) {
                spdlog::warn("worker {}: shutdown timeout with {} connections still open", index_, connections_.size());
                drained();
            }
        });
        if (connections_.empty()) {
            drained();
            return;
        }
        for (const auto& c : connections_) {
            to_close_.push_back(c);
        }
        next_to_close_ = 0;
        std::size_t steps = std::max<std::size_t>(1, static_cast<std::size_t>(window / close_step));
        std::size_t per_step = (to_close_.size() + steps - 1) / steps;
        close_batch(per_step);
    });
}

void worker::close_batch(std::size_t count) {
    for (std::size_t done = 0; done < count && next_to_close_ < to_close_.size(); ++done) {
        // Queued after every frame the client already has in its queue: messages sent before
        // the shutdown still reach it, then the 1001.
        // Already ended ones ignore this.
        to_close_[next_to_close_++]->close(protocol::close_code::going_away, "server shutting down");
    }
    if (next_to_close_ < to_close_.size()) {
        batch_timer_->expires_after(close_step);
        batch_timer_->async_wait([this, count](boost::system::error_code ec) {
            if (!ec) {
                close_batch(count);
            }
        });
        return;
    }
    to_close_.clear();
    next_to_close_ = 0;
    // Connections that upgraded after the shutdown began (their request was already in flight).
    auto late = connections_;
    for (const auto& c : late) {
        c->close(protocol::close_code::going_away, "server shutting down");
    }
    if (connections_.empty()) {
        drained();
    }
}

}  // namespace parley::server
