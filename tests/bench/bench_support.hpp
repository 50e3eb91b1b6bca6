#pragma once

// Pieces shared by the benchmarks that drive the real rooms/ code: a worker executor the
// benchmark thread runs by hand, settings that let a benchmark send as fast as it can, the
// protocol steps that put a session in a room, and the chat lines the broadcasts carry.
// Only a .cpp in this folder becomes a benchmark executable, so this header is not one.

#include "config/settings.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/session_output.hpp"

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::bench {

// A worker's task queue whose tasks the benchmark thread runs when it calls drain(): a broadcast
// is then measured as the CPU work it causes on the workers, without the wake-up and hand-off of
// a real worker thread in the figure.
// Thread: post() and drain() from one thread at a time; the benchmark arranges that.
class drained_executor final : public rooms::worker_executor {
public:
    void post(std::function<void()> task) override { queued_.push_back(std::move(task)); }

    // Runs every queued task in the order posted, and those they post meanwhile; returns how
    // many ran. Swapping the queue out first keeps a task that posts from invalidating the one
    // being run.
    std::size_t drain() {
        std::size_t ran = 0;
        while (!queued_.empty()) {
            running_.swap(queued_);
            for (auto& task : running_) {
                task();
                ++ran;
            }
            running_.clear();
        }
        return ran;
    }

private:
    std::vector<std::function<void()>> queued_;
    std::vector<std::function<void()>> running_;
};

// The defaults, except what would get in a benchmark's way: no rate limit (a publisher says
// thousands of times a second), and no presence, so the joins that build a room leave nothing
// queued behind them. Neither setting is read on the path of a broadcast `message`.
inline config::settings bench_settings() {
    config::settings s;
    s.rate_limit_per_second = 1e12;
    s.rate_limit_burst = 1e12;
    s.presence_max_members = 0;
    return s;
}

// Logs the session in as `user` and joins `room` through protocol requests, as a client would.
// True when both succeeded.
inline bool login_and_join(rooms::chat_session& session, std::string_view user, std::string_view room) {
    std::string request = R"({"type":"login","user":")";
    request.append(user).append("\"}");
    session.on_text(request);
    request = R"({"type":"join","room":")";
    request.append(room).append("\"}");
    session.on_text(request);
    return session.logged_in() && session.room_count() == 1;
}

// Lines of the length chat lines usually have (20 to 80 bytes), with no character JSON escapes.
inline constexpr std::array<std::string_view, 8> chat_lines = {
    "hey, is anyone around for the standup?",
    "running 5 min late, start without me",
    "ok",
    "the deploy finished, error rate back to normal since 14:02",
    "can someone review the retry change before lunch? it is small",
    "thanks!",
    "I'll take the on-call handover today",
    "lunch at noon at the usual place, who is in?",
};

}  // namespace parley::bench
