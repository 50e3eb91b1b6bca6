#pragma once

// A single-threaded chat world for protocol tests: a hub with N workers whose executors the test
// runs by hand, and clients (a chat_session with a recording output) on any worker.

#include "config/settings.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/history/memory_history_store.hpp"
#include "rooms/worker_context.hpp"
#include "tests/unit/rooms/fakes.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace parley::rooms::tests {

inline constexpr std::int64_t test_epoch = 1'700'000'000'000;

// Settings for tests: no rate limit unless a test sets one.
inline config::settings test_settings() {
    config::settings s;
    s.rate_limit_per_second = 1e9;
    s.rate_limit_burst = 1e9;
    return s;
}

// Passes when reply is an `error` with this code and a message, carrying `re` when given and no
// "re" otherwise.
inline ::testing::AssertionResult is_error(const json& reply, std::string_view code, const json& re = nullptr) {
    if (reply.value("type", "") != "error" || reply.value("code", "") != code) {
        return ::testing::AssertionFailure() << "expected error " << code << ", got " << reply.dump();
    }
    if (!reply.contains("message") || !reply["message"].is_string() || reply["message"].get<std::string>().empty()) {
        return ::testing::AssertionFailure() << "error without a message: " << reply.dump();
    }
    if (re.is_null() ? reply.contains("re") : reply.value("re", json()) != re) {
        return ::testing::AssertionFailure() << "expected re " << re.dump() << " in " << reply.dump();
    }
    return ::testing::AssertionSuccess();
}

// The seqs of a list of messages (a join's or history's "history"/"messages"), in order.
inline std::vector<std::int64_t> seqs_of(const json& messages) {
    std::vector<std::int64_t> out;
    for (const auto& m : messages) {
        out.push_back(m.at("seq").get<std::int64_t>());
    }
    return out;
}

class test_client {
public:
    explicit test_client(worker_context& worker) : session(worker, output) {}

    // Sends one client message (a JSON object, or raw text for malformed input).
    void send(const json& request) { session.on_text(request.dump()); }
    void send_raw(std::string_view text) { session.on_text(text); }

    // Everything received so far, as JSON, and forgets it.
    std::vector<json> take() {
        auto out = output.messages();
        output.frames.clear();
        return out;
    }
    // The one frame received since the last take(); fails the test if there is not exactly one.
    json take_one() {
        auto all = take();
        EXPECT_EQ(all.size(), 1u) << json(all).dump();
        return all.empty() ? json::object() : all.front();
    }
    // Received frames of one type, as JSON, without forgetting them.
    std::vector<json> received(std::string_view type) const {
        std::vector<json> out;
        for (auto& [frame, j] : output.of_type(type)) {
            out.push_back(j);
        }
        return out;
    }

    recording_output output;  // before session: the session refers to it
    chat_session session;
};

class chat_world {
public:
    explicit chat_world(config::settings s = test_settings(), std::uint32_t worker_count = 2,
                        std::int64_t epoch = test_epoch, std::unique_ptr<message_bus> bus = nullptr,
                        std::unique_ptr<history_store> store = nullptr)
        : settings_(std::move(s)) {
        std::vector<worker_context*> pointers;
        for (std::uint32_t i = 0; i < worker_count; ++i) {
            executors_.push_back(std::make_unique<manual_executor>());
            contexts_.push_back(std::make_unique<worker_context>(i, *executors_.back()));
            pointers.push_back(contexts_.back().get());
        }
        if (!store) {
            store = make_memory_history_store(settings_.history_per_room, epoch);
        }
        hub_ = std::make_unique<chat_hub>(settings_, std::move(store), pointers, std::move(bus));
    }
    ~chat_world() {
        clients_.clear();
        run();  // tasks still queued reach worker_contexts: run them while everything exists
    }
    chat_world(const chat_world&) = delete;
    chat_world& operator=(const chat_world&) = delete;

    chat_hub& hub() { return *hub_; }
    manual_executor& executor(std::uint32_t worker) { return *executors_.at(worker); }
    worker_context& context(std::uint32_t worker) { return *contexts_.at(worker); }

    // A connected client that has not logged in.
    test_client& connect(std::uint32_t worker = 0) {
        clients_.push_back(std::make_unique<test_client>(*contexts_.at(worker)));
        return *clients_.back();
    }
    // A client logged in as `user` (welcome consumed).
    test_client& login(std::string_view user, std::uint32_t worker = 0) {
        test_client& c = connect(worker);
        c.send({{"type", "login"}, {"user", user}});
        json reply = c.take_one();
        EXPECT_EQ(reply.value("type", ""), "welcome") << reply.dump();
        return c;
    }
    // Joins `room` and runs every worker, so the join's presence is delivered. Returns the
    // `joined` reply and removes it from what the client received; other frames stay.
    json join(test_client& c, std::string_view room) {
        std::size_t before = c.output.frames.size();
        c.send({{"type", "join"}, {"room", room}});
        auto& frames = c.output.frames;
        if (frames.size() == before) {
            run();  // a join that waited for its room to be fed (a cluster's) is answered by a task
        }
        EXPECT_GT(frames.size(), before);
        json reply = frames.size() > before ? payload_of(frames[before]) : json::object();
        EXPECT_EQ(reply.value("type", ""), "joined") << reply.dump();
        if (frames.size() > before) {
            frames.erase(frames.begin() + static_cast<std::ptrdiff_t>(before));
        }
        run();
        return reply;
    }
    // Drops a client's session as a closed connection does (end(), then destruction).
    void disconnect(test_client& c) {
        c.session.end(true);
        for (auto it = clients_.begin(); it != clients_.end(); ++it) {
            if (it->get() == &c) {
                clients_.erase(it);
                return;
            }
        }
    }
    // Runs every worker's queued tasks until none is left anywhere.
    void run() {
        bool ran = true;
        while (ran) {
            ran = false;
            for (auto& e : executors_) {
                ran = e->run_all() > 0 || ran;
            }
        }
    }
    // Forgets what every client received so far.
    void clear_all() {
        for (auto& c : clients_) {
            c->output.clear();
        }
    }

private:
    config::settings settings_;
    std::vector<std::unique_ptr<manual_executor>> executors_;
    std::vector<std::unique_ptr<worker_context>> contexts_;
    std::unique_ptr<chat_hub> hub_;
    std::vector<std::unique_ptr<test_client>> clients_;
};

}  // namespace parley::rooms::tests
