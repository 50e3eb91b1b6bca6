// Order across workers: each worker runs on its own thread, senders on several workers say into
// one room at once, and every member must see every message once, in strictly increasing seq.
// Run it in the thread sanitizer build too: it only counts as passed when that stays quiet.

#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <latch>
#include <map>
#include <set>
#include <thread>

namespace parley::rooms::tests {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t ordering_worker_count = 4;

// A hub whose workers are real threads. Sessions are made, driven and ended only through their
// worker's executor, as server/ does.
class threaded_world {
public:
    threaded_world() {
        std::vector<worker_context*> pointers;
        for (std::uint32_t i = 0; i < ordering_worker_count; ++i) {
            executors_.push_back(std::make_unique<threaded_executor>(tracker_));
            contexts_.push_back(std::make_unique<worker_context>(i, *executors_.back()));
            pointers.push_back(contexts_.back().get());
        }
        hub_ = std::make_unique<chat_hub>(settings_, make_memory_history_store(settings_.history_per_room, test_epoch),
                                          pointers);
        // As server/ does: each thread knows its worker, so broadcasts made there reach that
        // worker's members at once while other workers' tasks still race in (room.cpp).
        for (std::uint32_t i = 0; i < ordering_worker_count; ++i) {
            executor(i).run_sync([context = contexts_[i].get()] { worker_context::set_current(context); });
        }
    }
    ~threaded_world() {
        stop();
        clients_.clear();  // the worker threads are joined: their state is ours now
        stop();            // drops what the clients' goodbyes queued, while the hub stands
    }

    threaded_executor& executor(std::uint32_t worker) { return *executors_.at(worker); }

    // Makes a client on `worker`'s thread, logs it in and joins `room` there.
    test_client& add_member(std::string_view user, std::uint32_t worker, std::string_view room) {
        test_client* made = nullptr;
        executor(worker).run_sync([&] {
            clients_.push_back(std::make_unique<test_client>(*contexts_.at(worker)));
            made = clients_.back().get();
            made->send({{"type", "login"}, {"user", user}});
            made->send({{"type", "join"}, {"room", room}});
        });
        return *made;
    }
    // Sends on the client's own worker thread.
    void post_send(test_client& c, json request) {
        executor(c.session.handle().worker).post([&c, r = std::move(request)] { c.send(r); });
    }
    bool wait_idle() { return tracker_.wait_idle(60s); }
    // Joins every worker thread; afterwards the test thread may read every client.
    void stop() {
        for (auto& e : executors_) {
            e->stop();
        }
    }

private:
    config::settings settings_ = test_settings();
    task_tracker tracker_;
    std::vector<std::unique_ptr<threaded_executor>> executors_;
    std::vector<std::unique_ptr<worker_context>> contexts_;
    std::unique_ptr<chat_hub> hub_;
    std::vector<std::unique_ptr<test_client>> clients_;  // touched only on worker threads until stop()
};

std::int64_t seq_of(const json& message) { return message.at("seq").get<std::int64_t>(); }

// Every sender says `per_sender` numbered lines, each from its own thread.
void run_senders(threaded_world& world, const std::vector<test_client*>& senders, int per_sender,
                 const std::function<void(int)>& between = {}) {
    std::latch start(static_cast<std::ptrdiff_t>(senders.size()) + 1);
    std::vector<std::thread> threads;
    for (test_client* s : senders) {
        threads.emplace_back([&, s] {
            start.arrive_and_wait();
            for (int i = 0; i < per_sender; ++i) {
                world.post_send(*s, {{"type", "say"}, {"room", "hall"}, {"text", std::to_string(i)}});
            }
        });
    }
    start.arrive_and_wait();
    if (between) {
        for (int step = 0; step < 4; ++step) {
            between(step);
        }
    }
    for (auto& t : threads) {
        t.join();
    }
}

TEST(ordering, every_member_gets_every_message_once_in_seq_order) {
    constexpr int members_per_worker = 3;
    constexpr int per_sender = 250;
    threaded_world world;
    std::vector<test_client*> members;
    for (std::uint32_t w = 0; w < ordering_worker_count; ++w) {
        for (int i = 0; i < members_per_worker; ++i) {
            members.push_back(&world.add_member("m" + std::to_string(w) + "_" + std::to_string(i), w, "hall"));
        }
    }
    ASSERT_TRUE(world.wait_idle());
    // One sender per worker plus a second one on worker 0.
    std::vector<test_client*> senders{members[0], members[1], members[3], members[6], members[9]};
    run_senders(world, senders, per_sender);
    ASSERT_TRUE(world.wait_idle()) << "deliveries did not settle";
    world.stop();

    const auto total = static_cast<std::int64_t>(senders.size()) * per_sender;
    for (test_client* m : members) {
        auto got = m->received("message");
        ASSERT_EQ(static_cast<std::int64_t>(got.size()), total) << m->session.user();
        std::map<std::string, int> last_line;  // per sender: lines arrive in the order said
        std::set<std::pair<std::string, std::string>> seen;
        for (std::size_t i = 0; i < got.size(); ++i) {
            ASSERT_EQ(seq_of(got[i]), static_cast<std::int64_t>(i) + 1)
                << m->session.user() << ": seq must be strictly increasing with no gap";
            auto from = got[i]["from"].get<std::string>();
            auto text = got[i]["text"].get<std::string>();
            EXPECT_TRUE(seen.emplace(from, text).second) << "duplicate " << from << ":" << text;
            int line = std::stoi(text);
            auto [it, first] = last_line.emplace(from, line);
            if (!first) {
                EXPECT_GT(line, it->second) << "lines of " << from << " out of order";
                it->second = line;
            }
        }
        EXPECT_EQ(seen.size(), got.size());
    }
}

TEST(ordering, a_member_joining_mid_stream_sees_history_then_live_without_gap_or_repeat) {
    constexpr int per_sender = 200;
    threaded_world world;
    std::vector<test_client*> senders;
    for (std::uint32_t w = 0; w < ordering_worker_count; ++w) {
        senders.push_back(&world.add_member("s" + std::to_string(w), w, "hall"));
    }
    ASSERT_TRUE(world.wait_idle());

    std::vector<test_client*> late;
    run_senders(world, senders, per_sender, [&](int step) {
        auto w = static_cast<std::uint32_t>(step) % ordering_worker_count;
        late.push_back(&world.add_member("late" + std::to_string(step), w, "hall"));
    });
    ASSERT_TRUE(world.wait_idle());
    world.stop();

    const auto total = static_cast<std::int64_t>(senders.size()) * per_sender;
    for (test_client* m : late) {
        auto joined = m->received("joined");
        ASSERT_EQ(joined.size(), 1u);
        std::vector<std::int64_t> seqs;
        for (const auto& h : joined[0]["history"]) {
            seqs.push_back(seq_of(h));
        }
        for (const auto& live : m->received("message")) {
            seqs.push_back(seq_of(live));
        }
        ASSERT_FALSE(seqs.empty());
        EXPECT_EQ(seqs.back(), total) << m->session.user();
        if (joined[0]["history"].empty()) {
            EXPECT_EQ(seqs.front(), 1);
        }
        for (std::size_t i = 1; i < seqs.size(); ++i) {
            ASSERT_EQ(seqs[i], seqs[i - 1] + 1) << m->session.user() << " at " << i;
        }
    }
}

}  // namespace
}  // namespace parley::rooms::tests
