#include "hostile.hpp"

#include "hostile_rounds.hpp"

#include <chrono>
#include <exception>
#include <stdexcept>

namespace parley::soak {

using integration::json;
using integration::ws_client;

namespace {

// Hostile user names are unique over the run, so the registry sees names come and go.
std::atomic<std::uint64_t> next_name{0};

// A short name for an exception's message, to count it by: the HTTP status of a refused
// upgrade, else the words before the first colon ("connect to port 4711 failed" loses its
// number, since the tally keys must not vary from one round to the next).
std::string exception_kind(std::string_view what) {
    if (const std::size_t http = what.find("HTTP/1.1 "); http != std::string_view::npos) {
        return std::string("exception http_").append(what.substr(http + 9, 3));
    }
    std::string kind = "exception ";
    for (char c : what.substr(0, what.find(':'))) {
        if (c < '0' || c > '9') {
            kind.push_back(c);
        }
    }
    return kind;
}

}  // namespace

void hostile_round::count_close(std::string_view prefix, std::optional<std::uint16_t> code) {
    std::string outcome(prefix);
    if (!outcome.empty()) {
        outcome.push_back(' ');
    }
    outcome.append(code ? "close_" + std::to_string(*code) : std::string("close_none"));
    count(outcome);
}

ws_client hostile_round::open(integration::client_options options) {
    options.source_address = std::string(source_);
    return ws_client(env_.port, std::move(options));
}

ws_client hostile_round::upgraded(integration::client_options options) {
    ws_client client = open(std::move(options));
    client.upgrade();
    return client;
}

ws_client hostile_round::logged_in(integration::client_options options) {
    ws_client client = upgraded(std::move(options));
    const std::string user = "h" + std::to_string(next_name.fetch_add(1) + 1);
    client.send_json({{"type", "login"}, {"user", user}});
    auto reply = client.recv_until([](const json& m) { return m.value("type", "") != "presence"; },
                                   std::chrono::milliseconds(10000));
    if (!reply || reply->value("type", "") != "welcome") {
        throw std::runtime_error("login refused: " + (reply ? reply->dump() : std::string("no reply")));
    }
    return client;
}

void hostile_round::join_busy_room(ws_client& client) {
    client.send_json({{"type", "join"}, {"room", env_.busy_room}, {"id", "j"}});
    auto reply = client.recv_until([](const json& m) { return m.contains("re"); }, std::chrono::milliseconds(10000));
    if (!reply || reply->value("type", "") != "joined") {
        throw std::runtime_error("join refused: " + (reply ? reply->dump() : std::string("no reply")));
    }
}

std::string hostile_round::random_bytes(std::size_t n) {
    std::uniform_int_distribution<int> byte(0, 255);
    std::string bytes(n, '\0');
    for (char& c : bytes) {
        c = static_cast<char>(byte(rng_));
    }
    return bytes;
}

const std::vector<behaviour>& hostile_behaviours() {
    // Each behaviour connects from an address of its own: the per-address limit refuses only
    // the one that asks for it (per_ip_hog), and the counts of one do not mix with another's.
    static const std::vector<behaviour> table = {
        {"connect_close", "127.0.2.1", 1, connect_and_leave},
        {"stall_before_request", "127.0.2.2", 1, stall_before_request},
        {"stall_mid_request", "127.0.2.3", 1, stall_mid_request},
        {"drip_request", "127.0.2.4", 1, drip_request},
        {"garbage_http", "127.0.2.5", 1, garbage_http},
        {"bad_upgrade", "127.0.2.6", 1, bad_upgrade},
        {"per_ip_hog", "127.0.2.7", 1, per_ip_hog},
        {"bad_frames", "127.0.2.8", 2, bad_frames},
        {"bad_requests", "127.0.2.9", 1, bad_requests},
        {"flood", "127.0.2.10", 1, flood},
        {"slow_consumer", "127.0.2.11", 2, slow_consumer},
        {"silent", "127.0.2.12", 1, silent},
        {"reset", "127.0.2.13", 2, reset_midway},
    };
    return table;
}

void hostile_crowd::start() {
    std::uint32_t seed = 1;
    for (const behaviour& b : hostile_behaviours()) {
        for (int t = 0; t < b.threads; ++t) {
            threads_.emplace_back([this, &b, seed = seed++] {
                hostile_round round(env_, b.name, b.source_address, seed);
                while (round.running()) {
                    try {
                        b.round(round);
                    } catch (const std::exception& e) {
                        // A reset or refusal mid-round is part of the game; it is counted (and
                        // the first one kept) so a behaviour that only ever fails shows up in
                        // the report. The pause keeps a failing loop from spinning.
                        round.count(exception_kind(e.what()));
                        round.note_first(e.what());
                        std::this_thread::sleep_for(std::chrono::milliseconds(50));
                    }
                }
            });
        }
    }
}

void hostile_crowd::join() {
    for (std::thread& t : threads_) {
        if (t.joinable()) {
            t.join();
        }
    }
    threads_.clear();
}

}  // namespace parley::soak
