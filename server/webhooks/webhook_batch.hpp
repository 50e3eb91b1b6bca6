#pragma once

#include "protocol/shared_frame.hpp"
#include "protocol/webhook_events.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace parley::server {

// One chat event waiting for a receiver. The frame is the one the room's members were sent,
// shared (a reference count), so queueing a message costs no copy of its text.
struct webhook_item {
    std::uint64_t id = 0;  // counts this run's events; with the run's tag, unique per daemon
    protocol::webhook_event kind = protocol::webhook_event::message;
    std::int64_t ts_ms = 0;
    std::string room;
    std::string user;
    protocol::shared_frame frame;  // empty for the events that have none
};

// The events waiting for one receiver, at most `limit` of them: an event that finds the queue
// full is dropped and counted (a dead receiver costs bounded memory, and never a worker's time).
// Thread: push() from any worker (under a room's lock: it only takes this queue's short lock);
// the rest from the sender's thread.
class webhook_queue {
public:
    explicit webhook_queue(std::size_t limit) : limit_(limit) {}

    enum class pushed { queued, first, full_batch, dropped };
    // queued: added. first: added to an empty queue, full_batch: the queue reached batch_size
    // (the sender is to be woken for either). dropped: the queue was full.
    pushed push(webhook_item&& item, std::size_t batch_size);

    // Up to max events, oldest first, taken off the queue.
    std::vector<webhook_item> take(std::size_t max);
    std::size_t size() const;
    // When the oldest waiting event was queued (meaningful while size() > 0).
    std::chrono::steady_clock::time_point oldest_since() const;
    // A reload may change the bound; events beyond a lowered one stay until sent.
    void set_limit(std::size_t limit);
    std::uint64_t dropped() const;

private:
    mutable std::mutex mutex_;
    std::deque<webhook_item> items_;
    std::size_t limit_;
    std::chrono::steady_clock::time_point oldest_since_{};
    std::uint64_t dropped_ = 0;
};

// The POST body of a batch: {"node":..., "events":[{"id":"<run>-<n>","type":...,"ts":...,
// "room":...,"user":...,"data":{the event as clients got it}}, ...]} (docs/webhooks.md).
std::string webhook_body(const std::vector<webhook_item>& batch, std::string_view node, std::string_view run);

// How long to wait before sending a failed batch again: 500 ms after the first failure,
// doubling, at most 60 s.
std::chrono::milliseconds webhook_backoff(unsigned failures);

// The signature header's value for a body sent at unix_s: "t=<unix_s>,v1=<hex HMAC-SHA256 of
// secret over '<unix_s>.<body>'>". The receiver recomputes it, and refuses a t too far from its
// clock (a replayed request).
std::string webhook_signature(std::string_view secret, std::int64_t unix_s, std::string_view body);

}  // namespace parley::server
