#pragma once

#include "config/settings.hpp"
#include "rooms/chat_events.hpp"
#include "server/http_fetch.hpp"
#include "server/webhooks/webhook_batch.hpp"
#include "server/webhooks/webhook_counters.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace parley::server {

// Sends chat events to the [[webhooks]] receivers (docs/webhooks.md): each receiver has a
// bounded queue that workers add to (publish), and the sender, on the main loop, POSTs them in
// batches of at most batch_size events, or whatever waited batch_wait, one batch in flight per
// receiver (so a receiver gets events in the order they were queued: each room's in its order).
// A batch that fails (an error, a timeout, a status other than 2xx) is sent again, with a fresh
// signature, after webhook_backoff(failures); events keep queueing meanwhile up to the bound, and
// those beyond it are dropped and counted. A worker never waits for a receiver.
// Thread: configure(), stop() and the sending run on the executor's thread (the main loop);
// publish() and counters() on any thread.
class webhook_sender final : public rooms::event_sink {
public:
    static constexpr std::size_t batch_size = 100;
    static constexpr std::chrono::milliseconds batch_wait{50};

    // events: where the rooms report (the sender attaches itself and sets the kinds wanted);
    // node: this daemon's name in every body (the cluster's node id, or the host name).
    webhook_sender(boost::asio::any_io_executor ex, rooms::chat_events& events, std::string node);
    ~webhook_sender() override;
    webhook_sender(const webhook_sender&) = delete;
    webhook_sender& operator=(const webhook_sender&) = delete;

    // At start and on each reload: the receivers become these. A receiver whose url stays keeps
    // its queue and its batch in flight (with the new secret, events, bound and timeout); the
    // events queued for a receiver no longer listed are dropped, counted. Returns "" or what is
    // wrong (an unreadable ca_file: at start the daemon stops; on a reload the receiver keeps
    // its previous settings).
    std::string configure(const std::vector<config::webhook_endpoint>& endpoints);
    // Shutdown: nothing more is sent; what is queued is dropped, counted and logged.
    void stop();

    void publish(protocol::webhook_event kind, std::string_view room, std::string_view user,
                 const protocol::shared_frame& frame, std::int64_t ts_ms) override;

    const webhook_counters& counters() const { return counters_; }

private:
    struct receiver;
    using receiver_list = std::vector<std::shared_ptr<receiver>>;

    void wake(const std::shared_ptr<receiver>& r);
    void arm_wait(const std::shared_ptr<receiver>& r);
    void send_next(const std::shared_ptr<receiver>& r);
    void post_batch(const std::shared_ptr<receiver>& r);
    void on_answer(const std::shared_ptr<receiver>& r, const http_answer& answer);
    void drop_queued(receiver& r);

    boost::asio::any_io_executor ex_;
    rooms::chat_events& events_;
    const std::string node_;
    const std::string run_;  // this run's tag: event ids stay unique across restarts
    webhook_counters counters_;
    std::atomic<std::uint64_t> next_id_{0};
    // Read by publish() on every worker, replaced by configure() on the main loop.
    mutable std::mutex list_mutex_;
    std::shared_ptr<const receiver_list> receivers_ = std::make_shared<const receiver_list>();
    bool stopped_ = false;  // main loop
};

}  // namespace parley::server
