#pragma once

// The well-behaved clients of one room, all driven by one thread: each member says something
// at a steady pace with an id, now and then asks for the room's history (as a client scrolling
// back does), reads everything it is sent, and checks it. The checks, per
// member: the room's seq numbers arrive without a gap, a duplicate or a reordering; each
// well-behaved sender's messages arrive in the order it sent them, none missing; every say is
// acked; every history reply is in seq order without a gap; no error reply; the connection is
// never closed. Across members, through a room_ledger: the same seq carries the same message
// for everyone, for the sender's ack and in every history reply.

#include "room_ledger.hpp"
#include "ws_client.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace parley::soak {

using milliseconds = std::chrono::milliseconds;

struct good_room_report {
    std::string room;
    std::size_t members = 0;
    std::size_t members_left = 0;      // still connected at the end
    std::uint64_t says = 0;
    std::uint64_t acks = 0;
    std::uint64_t deliveries = 0;      // room messages received, all members together
    std::uint64_t hostile_deliveries = 0;  // of those, messages of senders outside the room's good set
    std::uint64_t other_events = 0;    // presence, system notices, typing
    std::uint64_t history_replies = 0;
    std::int64_t final_seq = 0;        // the room's last seq when the run ended
    std::uint64_t problem_count = 0;
    std::vector<std::string> problems;  // the first few, described
};

class good_room {
public:
    // index names the room ("soak-<index>") and its members ("good-<index>-<i>");
    // source_address is the loopback address its members connect from. Each member asks for
    // the newest history_limit messages about every history_interval.
    good_room(std::uint16_t port, std::size_t index, std::size_t members, std::string source_address,
              milliseconds say_interval, milliseconds history_interval, std::size_t history_limit);
    good_room(const good_room&) = delete;
    good_room& operator=(const good_room&) = delete;

    const std::string& name() const { return name_; }

    // Connects, logs in and joins every member, on the caller's thread. Throws
    // std::runtime_error on any failure. No member says anything yet; run() must follow soon,
    // since members that do not answer the daemon's pings are closed at its idle timeout.
    void connect();

    // The room's thread: every member says something every say_interval (spread out, with
    // jitter) while `chatting` is true. Then the members stop saying and the room waits until
    // every say is acked and every member has the room's last message, at most drain_timeout.
    void run(const std::atomic<bool>& chatting, milliseconds drain_timeout);

    // Progress, readable from any thread while run() goes on.
    std::uint64_t deliveries() const { return deliveries_.load(std::memory_order_relaxed); }
    std::uint64_t problem_count() const { return problem_count_.load(std::memory_order_relaxed); }

    // After run() returned.
    good_room_report report() const;

private:
    using clock = std::chrono::steady_clock;

    struct member {
        member(integration::ws_client c, std::string name) : client(std::move(c)), user(std::move(name)) {}

        integration::ws_client client;
        std::string user;
        std::int64_t last_seq = 0;              // the last seq received
        std::vector<std::uint32_t> next_n;      // per good sender: the n expected next from it
        std::uint32_t said = 0;                 // says sent; the n-th say carries id n
        std::map<std::uint32_t, clock::time_point> unacked;  // n -> when sent
        clock::time_point next_say{};
        clock::time_point next_history{};
        std::uint32_t histories = 0;  // history requests sent; the k-th carries id "h<k>"
        std::uint32_t history_unanswered = 0;
        bool gone = false;
    };

    void say(member& m, clock::time_point now);
    void read_all(member& m);
    void on_message(member& m, const integration::json& message);
    void on_chat(member& m, const integration::json& message);
    void on_ack(member& m, const integration::json& message);
    void ask_history(member& m, clock::time_point now);
    void on_history(member& m, const integration::json& reply);
    // Records one message object (live or from history) in the ledger; false on a mismatch.
    bool record(const integration::json& message, std::int64_t seq);
    bool drained() const;
    // The index of a good member of this room from a user name, or room_ledger::hostile.
    std::int32_t sender_index(const std::string& user) const;
    void problem(const member& m, const std::string& what);

    std::uint16_t port_;
    std::size_t index_;
    std::string name_;
    std::string source_address_;
    milliseconds say_interval_;
    milliseconds history_interval_;
    std::size_t history_limit_;
    std::size_t member_count_;
    std::vector<member> members_;
    room_ledger ledger_;
    std::mt19937 rng_;
    std::int64_t max_seq_ = 0;  // the highest seq any member received or any ack named
    std::string padding_;

    std::uint64_t says_ = 0;
    std::uint64_t acks_ = 0;
    std::uint64_t hostile_deliveries_ = 0;
    std::uint64_t other_events_ = 0;
    std::uint64_t history_replies_ = 0;
    std::atomic<std::uint64_t> deliveries_{0};
    std::atomic<std::uint64_t> problem_count_{0};
    std::vector<std::string> problems_;
};

}  // namespace parley::soak
