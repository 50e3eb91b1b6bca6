// Memory is bounded: clients inventing room names (join, say, leave, 100,000 times) leave the
// daemon within history.memory_budget_bytes of where it started, with either store; /metrics
// shows the bytes the logs hold and the evictions; an evicted room comes back from the file
// (SQLite) or starts a new epoch (memory).

#include "http_response.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace parley::integration {
namespace {

// A sanitized daemon (daemon_process::sanitized) keeps freed memory aside and serves every
// request several times slower: fewer rooms, and its resident size is not checked (the metrics
// still are).
constexpr int sanitized_rooms = 10'000;
constexpr int default_rooms = 100'000;

constexpr std::int64_t budget = 8 * 1024 * 1024;
constexpr int connections = 4;
constexpr int batch = 500;  // rooms a connection has in flight at once

int room_count(bool sanitized) {
    // PARLEY_MEMORY_TEST_ROOMS: another count, for a quick local run.
    const char* set = std::getenv("PARLEY_MEMORY_TEST_ROOMS");
    return set != nullptr ? std::atoi(set) : sanitized ? sanitized_rooms : default_rooms;
}

std::string room_name(int i) {
    return "invented-" + std::to_string(i);
}

// VmRSS of a process, in KiB; 0 when it cannot be read.
std::int64_t rss_kib(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0) {
            return std::atoll(line.c_str() + 6);
        }
    }
    return 0;
}

class MemoryBudgetTest : public parley_test, public ::testing::WithParamInterface<std::string> {
protected:
    std::string daemon_config() const override {
        // With sqlite the daemon gets a file in a fresh directory (daemon_process): no store or
        // path here, which would make the test choose them itself.
        std::string config = "[limits]\nrate_limit_per_second = 10000000\nrate_limit_burst = 10000000\n"
                             "[history]\nmemory_budget_bytes = " + std::to_string(budget) + "\n";
        if (GetParam() == "memory") {
            config += "store = \"memory\"\n";
        }
        return config;
    }
    std::vector<std::string> daemon_args() const override { return {}; }

    // A sample's value from /metrics.
    double metric(const std::string& name) {
        ws_client client(port());
        const http_response response = parse_http_response(
            client.raw_http("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
        std::istringstream lines(response.body);
        std::string line;
        while (std::getline(lines, line)) {
            if (line.rfind(name + " ", 0) == 0) {
                return std::strtod(line.c_str() + name.size() + 1, nullptr);
            }
        }
        throw std::runtime_error("no sample " + name + " in:\n" + response.body);
    }

    // Joins rooms [first, last), says one message into each and leaves it, `batch` rooms of
    // requests at a time in one write, then reads until every one of them was left.
    static void invent_rooms(ws_client& client, int first, int last) {
        for (int begin = first; begin < last; begin += batch) {
            const int end = std::min(last, begin + batch);
            std::string out;
            for (int i = begin; i < end; ++i) {
                const std::string room = room_name(i);
                out += client.encode_frame(opcode::text, json({{"type", "join"}, {"room", room}}).dump());
                out += client.encode_frame(opcode::text,
                                           json({{"type", "say"}, {"room", room}, {"text", "hello " + room}}).dump());
                out += client.encode_frame(opcode::text, json({{"type", "leave"}, {"room", room}}).dump());
            }
            client.send_raw(out, milliseconds(30000));
            int left = 0;
            while (left < end - begin) {
                const json m = next_message(client, milliseconds(30000));
                const std::string type = m.value("type", "");
                if (type == "error") {
                    throw std::runtime_error("error reply: " + m.dump());
                }
                left += type == "left" ? 1 : 0;
            }
        }
    }
};

TEST_P(MemoryBudgetTest, InventedRoomsLeaveTheDaemonWithinItsBudget) {
    const bool sanitized = daemon_->sanitized();
    const int rooms = room_count(sanitized);
    std::vector<ws_client> clients;
    for (int c = 0; c < connections; ++c) {
        clients.push_back(login("inventor" + std::to_string(c)));
    }
    const json first = join_room(clients[0], room_name(0));
    call(clients[0], {{"type", "leave"}, {"room", room_name(0)}, {"id", "leave-0"}});
    const std::int64_t baseline = rss_kib(daemon_->pid());
    ASSERT_GT(baseline, 0);

    const auto started = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    // What the logs hold while rooms are invented, sampled: with either store it stays near the
    // budget (SQLite: unwritten idle logs are not let past it; see sqlite_history_store.cpp).
    std::atomic<bool> inventing{true};
    double peak_held = 0;
    std::thread sampler([&] {
        while (inventing.load()) {
            try {
                peak_held = std::max(peak_held, metric("parley_history_memory_bytes"));
            } catch (const std::exception& e) {
                ADD_FAILURE() << "metrics: " << e.what();
                return;
            }
            std::this_thread::sleep_for(milliseconds(50));
        }
    });
    for (int c = 0; c < connections; ++c) {
        threads.emplace_back([&, c] {
            try {
                invent_rooms(clients[static_cast<std::size_t>(c)], rooms * c / connections,
                             rooms * (c + 1) / connections);
            } catch (const std::exception& e) {
                ADD_FAILURE() << "connection " << c << ": " << e.what();
                failures.fetch_add(1);
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    inventing.store(false);
    sampler.join();
    ASSERT_EQ(failures.load(), 0);
    // The bound is the budget and a sixteenth of it, plus the rooms in flight (in use, never
    // evicted); a quarter above the budget covers both here.
    EXPECT_LE(peak_held, static_cast<double>(budget + budget / 4)) << "held while inventing";
    const auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started);
    std::printf("%d rooms in %lld ms\n", rooms, static_cast<long long>(took.count()));

    // The SQLite writer evicts between batches: the held bytes come down shortly after.
    const auto deadline = std::chrono::steady_clock::now() + milliseconds(30000);
    double held = metric("parley_history_memory_bytes");
    std::int64_t rss = rss_kib(daemon_->pid());
    const std::int64_t rss_limit = baseline * 105 / 100 + budget / 1024;
    while ((held > budget || (!sanitized && rss > rss_limit)) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(milliseconds(200));
        held = metric("parley_history_memory_bytes");
        rss = rss_kib(daemon_->pid());
    }
    std::printf("rss: %lld KiB at the start, %lld KiB after (limit %lld); logs hold %.0f bytes, at most %.0f "
                "sampled while inventing\n",
                static_cast<long long>(baseline), static_cast<long long>(rss), static_cast<long long>(rss_limit), held,
                peak_held);
    EXPECT_LE(held, static_cast<double>(budget));
    EXPECT_GT(held, 0.0);
    // A log is counted at 1 KiB at least (room_log.cpp), so at most budget / 1 KiB of them stay.
    const double evictions = metric("parley_history_evictions_total");
    EXPECT_GE(evictions, static_cast<double>(rooms - budget / 1024)) << "the invented rooms beyond the budget went";
    if (!sanitized) {
        EXPECT_LE(rss, rss_limit) << "resident memory did not settle within the budget";
    }

    // The first room was evicted long ago.
    const json again = join_room(clients[0], room_name(0));
    if (GetParam() == "sqlite") {
        EXPECT_EQ(again.at("epoch"), first.at("epoch"));
        ASSERT_EQ(again.at("history").size(), 1u) << again.dump();
        EXPECT_EQ(again.at("history")[0].at("seq"), 1);
        EXPECT_EQ(again.at("history")[0].at("text"), "hello " + room_name(0));
    } else {
        EXPECT_NE(again.at("epoch"), first.at("epoch")) << "the memory store's evicted room starts over";
        EXPECT_TRUE(again.at("history").empty()) << again.dump();
    }
}

std::string store_name(const ::testing::TestParamInfo<std::string>& store) {
    return store.param;
}

INSTANTIATE_TEST_SUITE_P(Stores, MemoryBudgetTest, ::testing::Values("sqlite", "memory"), store_name);

}  // namespace
}  // namespace parley::integration
