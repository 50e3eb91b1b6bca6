// The CPU cost of one room broadcast in the real rooms/ code, per member: a room of N members
// spread evenly over 2 workers (member i on worker i % 2), built with chat_hub, room,
// worker_context and one chat_session per member.
//
//   broadcast/room_say/N     room::say: seq, encode once, history append, one task per worker;
//                            then each worker's task walks its members and queues the frame on
//                            each (worker_context::deliver -> session_output::send)
//   broadcast/say_request/N  the same, started as a client's `say` request arriving at the
//                            publisher's chat_session (request parsing, rate limit, membership
//                            check on top)
//
// Workers run "inline on drain": each worker's executor is a plain queue and the benchmark thread
// runs both queues after the say, so the figure is the CPU work of a broadcast on one core, with
// no thread wake-up, no cross-core hand-off and no I/O (the socket side is in design_bench.cpp).
// Each member's output keeps the frame reference in a queue as a connection does; the benchmark
// releases the queues after every broadcast, as a connection's flush does once the bytes are out,
// so that release (an atomic decrement per member) is in the figure too.
//
// items_per_second counts member deliveries (N per broadcast, the publisher included, as the
// protocol has it); per_member is its inverse, the CPU time per member delivered.

#include "protocol/shared_frame.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/history/memory_history_store.hpp"
#include "rooms/room.hpp"
#include "rooms/worker_context.hpp"
#include "tests/bench/bench_support.hpp"

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using parley::bench::drained_executor;
using parley::protocol::shared_frame;
using parley::rooms::chat_session;
using parley::rooms::worker_context;

constexpr std::uint32_t worker_count = 2;
constexpr std::string_view room_name = "lobby";
constexpr std::int64_t first_ts = 1'764'460'800'000;

// A connection's outbound side without a socket: the queue of frame references and nothing else.
class queue_output final : public parley::rooms::session_output {
public:
    void send(const shared_frame& frame) override { queue_.push_back(frame); }
    void close(parley::protocol::close_code, std::string_view) override { ++closes_; }

    // Drops the references, as a flush does once the bytes are written; returns how many.
    std::size_t release() {
        const std::size_t n = queue_.size();
        queue_.clear();
        return n;
    }
    std::size_t closes() const { return closes_; }

private:
    std::vector<shared_frame> queue_;
    std::size_t closes_ = 0;
};

// One room of `members` sessions over worker_count workers, every member logged in and joined.
class broadcast_world {
public:
    explicit broadcast_world(std::size_t members) : settings_(parley::bench::bench_settings()) {
        std::vector<worker_context*> workers;
        for (std::uint32_t i = 0; i < worker_count; ++i) {
            executors_.push_back(std::make_unique<drained_executor>());
            contexts_.push_back(std::make_unique<worker_context>(i, *executors_.back()));
            workers.push_back(contexts_.back().get());
        }
        hub_ = std::make_unique<parley::rooms::chat_hub>(
            settings_, parley::rooms::make_memory_history_store(settings_.history_per_room, first_ts), workers);
        for (std::size_t i = 0; i < members; ++i) {
            members_.push_back(std::make_unique<member>(*contexts_[i % worker_count]));
            std::string name = "user_";
            name += std::to_string(i);
            ok_ = parley::bench::login_and_join(members_.back()->session, name, room_name) && ok_;
        }
        run_workers();
        release_all();  // the welcome and joined replies
        room_ = hub_->rooms().find(room_name);
        ok_ = ok_ && room_ && room_->member_count() == members;
    }
    ~broadcast_world() {
        members_.clear();
        run_workers();  // anything the leaves posted runs while the contexts exist
    }
    broadcast_world(const broadcast_world&) = delete;
    broadcast_world& operator=(const broadcast_world&) = delete;

    bool ok() const { return ok_; }
    parley::rooms::room& room() { return *room_; }
    chat_session& publisher() { return members_.front()->session; }

    void run_workers() {
        for (auto& e : executors_) {
            e->drain();
        }
    }
    std::size_t release_all() {
        std::size_t released = 0;
        for (auto& m : members_) {
            released += m->output.release();
        }
        return released;
    }
    // Frames queued on members by broadcasts, over all workers, since the start.
    std::uint64_t deliveries() const {
        std::uint64_t n = 0;
        for (const auto& c : contexts_) {
            n += c->counters().fanout_deliveries.get();
        }
        return n;
    }
    std::size_t closes() const {
        std::size_t n = 0;
        for (const auto& m : members_) {
            n += m->output.closes();
        }
        return n;
    }

private:
    struct member {
        explicit member(worker_context& worker) : session(worker, output) {}
        queue_output output;  // before session: the session refers to it
        chat_session session;
    };

    parley::config::settings settings_;
    std::vector<std::unique_ptr<drained_executor>> executors_;
    std::vector<std::unique_ptr<worker_context>> contexts_;
    std::unique_ptr<parley::rooms::chat_hub> hub_;
    std::shared_ptr<parley::rooms::room> room_;
    std::vector<std::unique_ptr<member>> members_;  // last: destroyed first, while the rest exists
    bool ok_ = true;
};

// Building a room of N members costs O(N^2) (each `joined` lists the members so far), so each size
// is built once and kept for the whole run; the benchmark calls its function several times.
broadcast_world& world_of(std::size_t members) {
    static std::map<std::size_t, std::unique_ptr<broadcast_world>> worlds;
    auto& w = worlds[members];
    if (!w) {
        w = std::make_unique<broadcast_world>(members);
    }
    return *w;
}

void report(benchmark::State& state, broadcast_world& world, std::uint64_t delivered, std::size_t released) {
    const auto members = static_cast<std::uint64_t>(state.range(0));
    const auto expected = static_cast<std::uint64_t>(state.iterations()) * members;
    if (delivered != expected || released != expected || world.closes() != 0) {
        state.SkipWithError("a member missed a broadcast or was closed");
        return;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(delivered));
    state.counters["per_member"] =
        benchmark::Counter(static_cast<double>(delivered), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void room_say(benchmark::State& state) {
    broadcast_world& world = world_of(static_cast<std::size_t>(state.range(0)));
    if (!world.ok()) {
        state.SkipWithError("building the room failed");
        return;
    }
    const std::uint64_t before = world.deliveries();
    std::size_t released = 0;
    std::int64_t ts = first_ts;
    std::size_t line = 0;
    for (auto _ : state) {
        world.room().say("user_0", parley::bench::chat_lines[line++ % parley::bench::chat_lines.size()], ++ts);
        world.run_workers();
        released += world.release_all();
    }
    report(state, world, world.deliveries() - before, released);
}

void say_request(benchmark::State& state) {
    broadcast_world& world = world_of(static_cast<std::size_t>(state.range(0)));
    if (!world.ok()) {
        state.SkipWithError("building the room failed");
        return;
    }
    // The requests as a client sends them, made before the loop.
    std::vector<std::string> requests;
    for (std::string_view text : parley::bench::chat_lines) {
        std::string r = R"({"type":"say","room":")";
        r.append(room_name).append(R"(","text":")").append(text).append("\"}");
        requests.push_back(std::move(r));
    }
    const std::uint64_t before = world.deliveries();
    std::size_t released = 0;
    std::size_t line = 0;
    for (auto _ : state) {
        world.publisher().on_text(requests[line++ % requests.size()]);
        world.run_workers();
        released += world.release_all();
    }
    report(state, world, world.deliveries() - before, released);
}

BENCHMARK(room_say)->Name("broadcast/room_say")->Arg(100)->Arg(1000);
BENCHMARK(say_request)->Name("broadcast/say_request")->Arg(100)->Arg(1000);

}  // namespace
