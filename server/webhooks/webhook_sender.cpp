#include "server/webhooks/webhook_sender.hpp"

#include "rooms/history/unix_clock.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>

namespace parley::server {

namespace asio = boost::asio;

struct webhook_sender::receiver {
    receiver(const asio::any_io_executor& ex, std::size_t limit) : queue(limit), timer(ex) {}

    // Read by publish() on any worker.
    std::atomic<protocol::webhook_event_mask> kinds{0};
    webhook_queue queue;
    std::atomic<bool> wake_posted{false};  // a wake() is on its way to the main loop

    // The main loop's.
    config::webhook_endpoint settings;
    http_url url;
    std::shared_ptr<asio::ssl::context> tls;
    asio::steady_timer timer;        // the batch's wait, or the backoff before a resend
    std::uint64_t timer_turn = 0;    // a timer handler from an older turn does nothing
    bool waiting = false;            // the timer counts down batch_wait
    bool busy = false;               // a batch is in flight or waits to be sent again
    bool removed = false;            // a reload removed it, or the daemon stops
    unsigned failures = 0;           // of the batch in hand
    std::size_t batch_events = 0;
    std::string body;                // of the batch in hand
    std::function<void()> cancel;    // of the POST in flight
};

namespace {

protocol::webhook_event_mask kinds_of(const std::vector<std::string>& words) {
    protocol::webhook_event_mask mask = 0;
    for (const std::string& word : words) {
        if (word == protocol::all_webhook_events) {
            return protocol::every_webhook_event;
        }
        if (auto kind = protocol::webhook_event_of(word)) {
            mask |= protocol::bit_of(*kind);
        }
    }
    return mask;
}

}  // namespace

webhook_sender::webhook_sender(asio::any_io_executor ex, rooms::chat_events& events, std::string node)
    : ex_(std::move(ex)), events_(events), node_(std::move(node)), run_(std::to_string(rooms::unix_millis())) {
    events_.attach(this);
}

webhook_sender::~webhook_sender() {
    stop();
    events_.attach(nullptr);
}

std::string webhook_sender::configure(const std::vector<config::webhook_endpoint>& endpoints) {
    std::shared_ptr<const receiver_list> old;
    {
        std::lock_guard lock(list_mutex_);
        old = receivers_;
    }
    auto next = std::make_shared<receiver_list>();
    std::string problem;
    protocol::webhook_event_mask wanted = 0;
    for (const config::webhook_endpoint& e : endpoints) {
        auto same = std::find_if(old->begin(), old->end(), [&e](const auto& r) { return r->settings.url == e.url; });
        std::shared_ptr<receiver> r = same != old->end() ? *same : std::make_shared<receiver>(ex_, e.queue_events);
        std::string error;
        std::optional<http_url> url = parse_http_url(e.url, error);
        std::shared_ptr<asio::ssl::context> tls = r->tls;
        if (url && url->tls && (!tls || r->settings.ca_file != e.ca_file)) {
            tls = make_client_tls(e.ca_file, error);
        }
        if (!url || (url->tls && !tls)) {
            problem = "webhook " + e.url + ": " + error;
            if (same == old->end()) {
                continue;  // a new receiver that cannot work is left out
            }
            next->push_back(r);  // an existing one keeps its previous settings
            wanted |= r->kinds.load(std::memory_order_relaxed);
            continue;
        }
        r->settings = e;
        r->url = *url;
        r->tls = std::move(tls);
        r->kinds.store(kinds_of(e.events), std::memory_order_relaxed);
        r->queue.set_limit(e.queue_events);
        wanted |= r->kinds.load(std::memory_order_relaxed);
        next->push_back(std::move(r));
    }
    {
        std::lock_guard lock(list_mutex_);
        receivers_ = next;
    }
    for (const auto& r : *old) {
        if (std::find(next->begin(), next->end(), r) == next->end()) {
            r->removed = true;
            drop_queued(*r);
        }
    }
    events_.set_wanted(stopped_ ? 0 : wanted);
    return problem;
}

void webhook_sender::stop() {
    if (stopped_) {
        return;
    }
    stopped_ = true;
    events_.set_wanted(0);
    std::shared_ptr<const receiver_list> list;
    {
        std::lock_guard lock(list_mutex_);
        list = std::exchange(receivers_, std::make_shared<const receiver_list>());
    }
    for (const auto& r : *list) {
        r->removed = true;
        drop_queued(*r);
    }
}

void webhook_sender::drop_queued(receiver& r) {
    ++r.timer_turn;
    r.timer.cancel();
    if (r.cancel) {
        std::exchange(r.cancel, nullptr)();
    }
    std::size_t lost = r.queue.take(r.queue.size()).size();
    counters_.queued.fetch_sub(lost, std::memory_order_relaxed);
    if (r.busy) {
        lost += r.batch_events;
    }
    if (lost > 0) {
        counters_.dropped.fetch_add(lost, std::memory_order_relaxed);
        spdlog::warn("webhook {}: {} event(s) not delivered ({})", r.settings.url, lost,
                     stopped_ ? "the daemon stops" : "no longer configured");
    }
}

void webhook_sender::publish(protocol::webhook_event kind, std::string_view room, std::string_view user,
                             const protocol::shared_frame& frame, std::int64_t ts_ms) {
    std::shared_ptr<const receiver_list> list;
    {
        std::lock_guard lock(list_mutex_);
        list = receivers_;
    }
    const std::uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed) + 1;
    for (const std::shared_ptr<receiver>& r : *list) {
        if ((r->kinds.load(std::memory_order_relaxed) & protocol::bit_of(kind)) == 0) {
            continue;
        }
        auto pushed = r->queue.push({id, kind, ts_ms, std::string(room), std::string(user), frame}, batch_size);
        if (pushed == webhook_queue::pushed::dropped) {
            counters_.dropped.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        counters_.queued.fetch_add(1, std::memory_order_relaxed);
        if ((pushed == webhook_queue::pushed::first || pushed == webhook_queue::pushed::full_batch) &&
            !r->wake_posted.exchange(true, std::memory_order_acq_rel)) {
            asio::post(ex_, [this, r] { wake(r); });
        }
    }
}

void webhook_sender::wake(const std::shared_ptr<receiver>& r) {
    r->wake_posted.store(false, std::memory_order_release);
    if (r->removed || r->busy) {
        return;  // the batch in hand, once done, looks at the queue again
    }
    if (r->queue.size() >= batch_size) {
        send_next(r);
    } else {
        arm_wait(r);
    }
}

void webhook_sender::arm_wait(const std::shared_ptr<receiver>& r) {
    if (r->waiting || r->queue.size() == 0) {
        return;
    }
    r->waiting = true;
    const std::uint64_t turn = ++r->timer_turn;
    r->timer.expires_at(r->queue.oldest_since() + batch_wait);
    r->timer.async_wait([this, r, turn](boost::system::error_code) {
        if (turn != r->timer_turn) {
            return;
        }
        r->waiting = false;
        if (!r->removed && !r->busy) {
            send_next(r);
        }
    });
}

void webhook_sender::send_next(const std::shared_ptr<receiver>& r) {
    if (r->waiting) {
        r->waiting = false;
        ++r->timer_turn;
        r->timer.cancel();
    }
    std::vector<webhook_item> batch = r->queue.take(batch_size);
    if (batch.empty()) {
        return;
    }
    counters_.queued.fetch_sub(batch.size(), std::memory_order_relaxed);
    r->batch_events = batch.size();
    r->body = webhook_body(batch, node_, run_);
    r->busy = true;
    r->failures = 0;
    post_batch(r);
}

void webhook_sender::post_batch(const std::shared_ptr<receiver>& r) {
    http_request_spec spec;
    spec.method = "POST";
    spec.content_type = "application/json";
    spec.body = r->body;
    // Signed when sent, so a resend carries a fresh time and passes the receiver's replay check.
    spec.headers.emplace_back("X-Parley-Signature", webhook_signature(r->settings.secret, rooms::unix_millis() / 1000,
                                                                      r->body));
    spec.timeout = std::chrono::milliseconds(r->settings.timeout_ms);
    spec.body_limit = 64 * 1024;  // the answer is not read; a longer one is still a delivery
    r->cancel = http_fetch(ex_, r->tls, r->url, std::move(spec), [this, r](http_answer answer) {
        on_answer(r, answer);
    });
}

void webhook_sender::on_answer(const std::shared_ptr<receiver>& r, const http_answer& answer) {
    r->cancel = nullptr;
    if (r->removed) {
        return;
    }
    if (answer.status >= 200 && answer.status < 300) {
        counters_.delivered.fetch_add(r->batch_events, std::memory_order_relaxed);
        counters_.batches.fetch_add(1, std::memory_order_relaxed);
        if (r->failures > 0) {
            spdlog::info("webhook {}: delivering again after {} failed attempt(s)", r->settings.url, r->failures);
        }
        r->busy = false;
        r->failures = 0;
        r->batch_events = 0;
        r->body = std::string();
        if (r->queue.size() >= batch_size) {
            send_next(r);
        } else {
            arm_wait(r);
        }
        return;
    }
    ++r->failures;
    counters_.retries.fetch_add(1, std::memory_order_relaxed);
    const std::chrono::milliseconds wait = webhook_backoff(r->failures);
    const std::string why = answer.status != 0 ? "answered " + std::to_string(answer.status) : answer.error;
    spdlog::warn("webhook {}: {}; the batch of {} event(s) is sent again in {} ms ({} waiting)", r->settings.url,
                 why, r->batch_events, wait.count(), r->queue.size());
    const std::uint64_t turn = ++r->timer_turn;
    r->timer.expires_after(wait);
    r->timer.async_wait([this, r, turn](boost::system::error_code) {
        if (turn == r->timer_turn && !r->removed) {
            post_batch(r);
        }
    });
}

}  // namespace parley::server
