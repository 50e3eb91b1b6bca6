#pragma once

#include "rooms/session_output.hpp"
#include "rooms/worker_context.hpp"
#include "server/connection_poller.hpp"
#include "server/heap_return.hpp"
#include "server/http_counters.hpp"
#include "server/local_frame_pool.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/smart_ptr/intrusive_ptr.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace parley::server {

class ws_connection;
void intrusive_ptr_add_ref(ws_connection* c) noexcept;
void intrusive_ptr_release(ws_connection* c) noexcept;

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
    // What this worker counts of HTTP before the upgrade; written on its thread only.
    http_counters& http() { return http_; }
    const http_counters& http() const { return http_; }

    // Thread: any. Runs task on this worker's thread, after every task posted before it.
    // (Batching these in a queue of the worker's, one io_context post per batch, was measured:
    // no gain above the noise, and the growing batch vectors cost 40 bytes of heap
    // fragmentation per idle connection after a connect burst.)
    void post(std::function<void()> task) override;

    // Starts the thread; on_exit runs on it after the loop has stopped.
    void start(std::function<void()> on_exit = {});
    void join();   // waits for the thread to end
    // Thread: any. Closes every connection with 1001, in batches spread evenly over `window`
    // (so clients do not all reconnect in the same instant), each after its queued frames; calls
    // on_drained (on this worker's thread, once) when they are gone, or at `deadline` at the
    // latest. The loop keeps running, and answering plain HTTP (/readyz 503), until stop().
    void shutdown(std::chrono::milliseconds window, std::chrono::milliseconds deadline,
                  std::function<void()> on_drained);
    // Thread: any. Stops the loop (after shutdown() reported drained on every worker).
    void stop();
    // Destroys the io_context and with it every handler and connection still pending. Call after
    // join() and before the chat hub goes away.
    void destroy_io();

    // Worker thread only.
    std::vector<char>& receive_buffer() { return receive_buffer_; }
    // Where a flush copies a connection's small queued frames so they leave in one contiguous
    // piece (see ws_connection::flush); shared by the worker's connections like the receive buffer.
    std::vector<char>& send_staging() { return send_staging_; }
    // Where TLS connections decrypt into: one TLS record at most (16 KiB). Allocated by the
    // first TLS connection, so a worker without TLS has none.
    std::vector<char>& tls_plaintext() {
        if (tls_plaintext_.empty()) {
            tls_plaintext_.resize(16 * 1024);
        }
        return tls_plaintext_;
    }
    // The worker's counted references to shared frames, for its connections' write queues.
    local_frame_pool& frame_pool() { return frame_pool_; }
    void schedule_flush(boost::intrusive_ptr<ws_connection> connection);
    // The worker holds each open connection from attach() to detach(). A detached connection is
    // released by a task posted after the current handler, never during it: the poller may still
    // hold events for it in the batch being dispatched.
    void attach(boost::intrusive_ptr<ws_connection> connection);
    void detach(ws_connection* connection);
    connection_poller& poller() { return *poller_; }
    std::size_t connection_count() const { return connections_.size(); }
    // Milliseconds since the worker started, updated by the housekeeping tick (a few times a
    // second): precise enough for timeouts, and reading it costs no clock call.
    std::uint64_t now_ms() const { return now_ms_; }
    // The same clock read now (a clock call): for what must be exact, like a connection's
    // duration.
    std::uint64_t precise_ms() const {
        return static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_).count());
    }
    // One ping frame, encoded once, shared by every keepalive ping of this worker.
    const protocol::shared_frame& ping_frame() const { return ping_frame_; }

private:
    void flush_pending();
    void housekeeping();
    void close_batch(std::size_t count);
    void stop_loop();
    void drained();  // reports the end of shutdown once

    std::uint32_t index_;
    // Declared before anything that may hold a connection: destroyed after every write queue.
    local_frame_pool frame_pool_;
    std::unique_ptr<boost::asio::io_context> io_;
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
    rooms::worker_context chat_;
    http_counters http_;
    std::thread thread_;
    std::vector<char> receive_buffer_;
    std::vector<char> send_staging_;
    std::vector<char> tls_plaintext_;
    std::vector<boost::intrusive_ptr<ws_connection>> pending_flush_;
    std::vector<boost::intrusive_ptr<ws_connection>> flushing_;
    bool flush_posted_ = false;
    bool stopping_ = false;
    bool drained_ = false;
    std::function<void()> on_drained_;
    std::unique_ptr<connection_poller> poller_;
    std::vector<boost::intrusive_ptr<ws_connection>> connections_;  // owning; index kept in each
    std::vector<boost::intrusive_ptr<ws_connection>> retired_;      // detached, released by a task
    bool release_posted_ = false;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    std::uint64_t now_ms_ = 0;
    heap_return heap_return_;  // worker 0's: gives evicted room logs' heap back
    protocol::shared_frame ping_frame_;
    std::unique_ptr<boost::asio::steady_timer> housekeeping_timer_;
    unsigned housekeeping_passes_ = 0;
    std::unique_ptr<boost::asio::steady_timer> shutdown_timer_;   // the deadline
    std::unique_ptr<boost::asio::steady_timer> batch_timer_;      // spreads the 1001 closes
    std::vector<boost::intrusive_ptr<ws_connection>> to_close_;         // open at shutdown, not yet closed
    std::size_t next_to_close_ = 0;
};

}  // namespace parley::server
