#pragma once

// Hostile clients: each behaviour is one kind of misuse, run over and over by its own threads
// from its own loopback address while the well-behaved rooms chat. A round does the misuse once
// and counts what it did and what the server answered in the shared tally; the soak's checks
// then require that the server took the expected action (so the hostility really happened).

#include "soak_config.hpp"
#include "tally.hpp"
#include "ws_client.hpp"

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace parley::soak {

// What every round may use. Read-only while the hostile phase runs (counts is thread-safe).
struct hostile_env {
    std::uint16_t port = 0;
    soak_limits limits;
    std::string busy_room;  // a well-behaved room hostile clients join, flood and stall in
    tally* counts = nullptr;
    const std::atomic<bool>* running = nullptr;
};

// The state of one round of one behaviour, on the thread that runs it.
class hostile_round {
public:
    hostile_round(const hostile_env& env, std::string_view behaviour, std::string_view source_address,
                  std::uint32_t seed)
        : env_(env), behaviour_(behaviour), source_(source_address), rng_(seed) {}

    const hostile_env& env() const { return env_; }
    std::mt19937& rng() { return rng_; }
    bool running() const { return env_.running->load(std::memory_order_relaxed); }

    // Counts outcome for this behaviour.
    void count(std::string_view outcome, std::uint64_t n = 1) { env_.counts->add(behaviour_, outcome, n); }
    void note_first(std::string_view text) { env_.counts->note_first(behaviour_, text); }
    // "close_1002", or "close_none" when no close came in time: the server's answer, counted.
    void count_close(std::string_view prefix, std::optional<std::uint16_t> code);

    // A TCP connection from this behaviour's address (not upgraded).
    integration::ws_client open(integration::client_options options = {});
    // One that completed the upgrade.
    integration::ws_client upgraded(integration::client_options options = {});
    // One that is logged in under a fresh name; throws if the server refuses.
    integration::ws_client logged_in(integration::client_options options = {});
    // Joins env().busy_room; throws if the server refuses.
    void join_busy_room(integration::ws_client& client);
    // n random bytes.
    std::string random_bytes(std::size_t n);

private:
    const hostile_env& env_;
    std::string_view behaviour_;
    std::string_view source_;
    std::mt19937 rng_;
};

// A hostile behaviour: its name, the loopback address it connects from, how many threads run
// it, and one round of it.
struct behaviour {
    std::string_view name;
    std::string_view source_address;
    int threads;
    void (*round)(hostile_round&);
};

// Every behaviour the soak runs (hostile_http.cpp and hostile_ws.cpp define the rounds).
const std::vector<behaviour>& hostile_behaviours();

// Runs every behaviour's threads until stop(); each thread repeats its round while
// env.running is true. An exception in a round (a refused connect, a reset) is counted as
// "exception" and the loop goes on.
class hostile_crowd {
public:
    explicit hostile_crowd(hostile_env env) : env_(std::move(env)) {}
    ~hostile_crowd() { join(); }

    void start();
    // Waits for every thread to finish its round; env.running must already be false.
    void join();

private:
    hostile_env env_;
    std::vector<std::thread> threads_;
};

}  // namespace parley::soak
