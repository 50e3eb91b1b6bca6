#pragma once

// Test doubles for the seams rooms/ declares toward server/: a session_output that records
// what it is given, and worker executors (one run by hand, one on its own thread).

#include "protocol/frame_encoder.hpp"
#include "protocol/shared_frame.hpp"
#include "rooms/session_output.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace parley::rooms::tests {

using json = nlohmann::json;

// The JSON object inside a recorded server frame. Throws if the payload is not valid JSON
// (including invalid UTF-8), which fails the calling test.
inline json payload_of(const protocol::shared_frame& frame) {
    return json::parse(protocol::frame_payload(frame.view()));
}

// Keeps every frame it is sent (the shared_frame itself, so identity() can be compared) and
// every close call. Thread: like the real one, used only on its worker's thread.
class recording_output final : public session_output {
public:
    struct close_call {
        protocol::close_code code;
        std::string reason;
    };

    void send(const protocol::shared_frame& frame) override { frames.push_back(frame); }
    void close(protocol::close_code code, std::string_view reason) override {
        closes.push_back({code, std::string(reason)});
    }

    // Every recorded frame as JSON, oldest first.
    std::vector<json> messages() const {
        std::vector<json> out;
        for (const auto& f : frames) {
            out.push_back(payload_of(f));
        }
        return out;
    }
    // Recorded frames whose "type" is `type`, with their JSON.
    std::vector<std::pair<protocol::shared_frame, json>> of_type(std::string_view type) const {
        std::vector<std::pair<protocol::shared_frame, json>> out;
        for (const auto& f : frames) {
            json j = payload_of(f);
            if (j.value("type", "") == type) {
                out.emplace_back(f, std::move(j));
            }
        }
        return out;
    }
    void clear() {
        frames.clear();
        closes.clear();
    }

    std::vector<protocol::shared_frame> frames;
    std::vector<close_call> closes;
};

// Queues tasks until the test runs them; counts every post.
// Thread: single-threaded tests only.
class manual_executor final : public worker_executor {
public:
    void post(std::function<void()> task) override {
        ++posts;
        queue_.push_back(std::move(task));
    }
    // Runs queued tasks, including those they post here, until the queue is empty. Returns how
    // many ran.
    std::size_t run_all() {
        std::size_t ran = 0;
        while (!queue_.empty()) {
            auto task = std::move(queue_.front());
            queue_.pop_front();
            task();
            ++ran;
        }
        return ran;
    }
    std::size_t pending() const { return queue_.size(); }

    std::size_t posts = 0;

private:
    std::deque<std::function<void()>> queue_;
};

// Counts tasks posted but not yet finished across a set of executors. A task that posts another
// increments before it finishes, so zero means nothing is queued or running anywhere.
class task_tracker {
public:
    void started_post() { outstanding_.fetch_add(1, std::memory_order_acq_rel); }
    void finished_task() {
        if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            std::lock_guard lock(mutex_);
            idle_.notify_all();
        }
    }
    // Waits until no task is queued or running; false on timeout.
    template <typename Duration>
    bool wait_idle(Duration timeout) {
        std::unique_lock lock(mutex_);
        return idle_.wait_for(lock, timeout, [&] { return outstanding_.load(std::memory_order_acquire) == 0; });
    }

private:
    std::atomic<long> outstanding_{0};
    std::mutex mutex_;
    std::condition_variable idle_;
};

// One worker thread running posted tasks in order, like a worker's io_context.
// Thread: post() from any thread; stop() from the thread that made it.
class threaded_executor final : public worker_executor {
public:
    explicit threaded_executor(task_tracker& tracker) : tracker_(tracker), thread_([this] { loop(); }) {}
    ~threaded_executor() override { stop(); }
    threaded_executor(const threaded_executor&) = delete;
    threaded_executor& operator=(const threaded_executor&) = delete;

    void post(std::function<void()> task) override {
        tracker_.started_post();
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(task));
        wake_.notify_one();
    }

    // Runs fn on the worker thread and waits for it.
    void run_sync(std::function<void()> fn) {
        std::promise<void> done;
        post([&] {
            fn();
            done.set_value();
        });
        done.get_future().wait();
    }

    // Finishes the task in hand and joins the thread; tasks still queued are dropped unrun, here
    // and now: what they hold (a room, and through it a log of the hub's store) goes while the
    // hub still stands. After stop() the test thread may read what the worker's tasks wrote.
    void stop() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
            wake_.notify_one();
        }
        if (thread_.joinable()) {
            thread_.join();
        }
        std::deque<std::function<void()>> dropped;
        {
            std::lock_guard lock(mutex_);
            dropped.swap(queue_);
        }
    }

private:
    void loop() {
        for (;;) {
            std::function<void()> task;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
                if (stopping_) {
                    return;
                }
                task = std::move(queue_.front());
                queue_.pop_front();
            }
            task();
            tracker_.finished_task();
        }
    }

    task_tracker& tracker_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> queue_;
    bool stopping_ = false;
    std::thread thread_;  // last: starts after the members it uses exist
};

}  // namespace parley::rooms::tests
