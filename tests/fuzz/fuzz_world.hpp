#pragma once

// The chat world a fuzzed connection lives in: a real chat_hub with two workers whose tasks run
// on this thread when asked, and other users already online (peers), built the way the unit tests
// in tests/unit/rooms build theirs.

#include "config/settings.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/worker_context.hpp"
#include "tests/unit/rooms/fakes.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace parley::fuzz {

// Limits small enough for short inputs to reach them, one permanent room ("lobby"), no rate limit.
config::settings fuzz_settings();

// Makes this thread the given worker's for the scope, as each worker thread marks itself in the
// daemon (a room then serves the caller's own worker without a task).
class acting_as {
public:
    explicit acting_as(rooms::worker_context& worker);
    ~acting_as();
    acting_as(const acting_as&) = delete;
    acting_as& operator=(const acting_as&) = delete;

private:
    rooms::worker_context* previous_;
};

// A hub with two workers whose tasks run when run() is called, on this thread.
class chat_world {
public:
    chat_world();
    chat_world(const chat_world&) = delete;
    chat_world& operator=(const chat_world&) = delete;

    const config::settings& settings() const { return settings_; }
    rooms::chat_hub& hub() { return *hub_; }
    rooms::worker_context& worker(std::uint32_t index) { return *contexts_.at(index); }
    rooms::tests::manual_executor& executor(std::uint32_t index) { return executors_.at(index); }

    // Runs every worker's tasks, each as that worker, until none is left anywhere.
    void run();

private:
    config::settings settings_;
    std::array<rooms::tests::manual_executor, 2> executors_;
    std::vector<std::unique_ptr<rooms::worker_context>> contexts_;
    std::unique_ptr<rooms::chat_hub> hub_;
};

// Another user, logged in and in its rooms before the fuzzed client connects, with a recording
// output.
class peer {
public:
    peer(chat_world& world, std::uint32_t worker, std::string_view name, std::vector<std::string_view> rooms);
    peer(const peer&) = delete;
    peer& operator=(const peer&) = delete;

    // Says `lines` messages in lobby.
    void say(int lines);
    // Forgets what the login, joins and says brought, once the world has run. Those frames are
    // not parsed: they are the same for every input, and parsing them cost time on each.
    void settle();
    // Checks every frame received since settle() (valid chat messages, seq order per room, no
    // close); returns those of one room, as sent.
    std::vector<std::string> check_frames(std::string_view room) const;
    std::size_t frame_count() const { return output_.frames.size(); }
    // Logs out as a closed connection does.
    void leave();

private:
    rooms::worker_context& worker_;
    rooms::tests::recording_output output_;  // before session_: the session refers to it
    rooms::chat_session session_;
    std::size_t room_count_;
};

}  // namespace parley::fuzz
