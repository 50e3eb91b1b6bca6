// The SQLite history store in the real daemon: everything accepted survives SIGTERM and a
// restart, seq continues, paging reaches every retained message, kill -9 loses at most the last
// flush interval, and a database file it cannot use stops the start with a clear error.
#include "temp_dir.hpp"
#include "test_support.hpp"

#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>

namespace parley::integration {
namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

constexpr int flush_interval_ms = 100;

class DurableHistoryTest : public parley_test {
protected:
    std::vector<std::string> daemon_args() const override {
        auto args = relaxed_rate_args();
        // Memory holds only the newest 20 per room, so most pages come from the file.
        std::vector<std::string> more = {"--history-path", dir_.file("history.db"),
                                         "--set", "rooms.history_per_room=20",
                                         "--set", "rooms.joined_history=10",
                                         "--set", "history.flush_interval_ms=" + std::to_string(flush_interval_ms)};
        args.insert(args.end(), more.begin(), more.end());
        return args;
    }

    // Says "m1".."mN" in room d with ids and returns the acked seqs by text.
    std::map<std::string, std::int64_t> say_many(ws_client& client, int count) {
        std::map<std::string, std::int64_t> seqs;
        for (int i = 1; i <= count; ++i) {
            std::string text = "m" + std::to_string(i);
            json ack = call(client, {{"type", "say"}, {"room", "d"}, {"text", text}, {"id", i}});
            if (ack.value("type", "") != "ack") {
                throw std::runtime_error("say got " + ack.dump());
            }
            seqs[text] = ack.at("seq").get<std::int64_t>();
        }
        return seqs;
    }

    // Every message of room d, paged forward with `after` from the start.
    static std::vector<json> whole_history(ws_client& client) {
        std::vector<json> all;
        std::int64_t after = 0;
        for (int page = 0; page < 1000; ++page) {
            json reply = call(client, {{"type", "history"}, {"room", "d"}, {"after", after}, {"limit", 37}, {"id", "p"}});
            if (reply.value("type", "") != "history") {
                throw std::runtime_error("history got " + reply.dump());
            }
            if (reply["messages"].empty()) {
                return all;
            }
            for (const json& m : reply["messages"]) {
                all.push_back(m);
                after = m.at("seq").get<std::int64_t>();
            }
        }
        throw std::runtime_error("history never ended");
    }

    temp_dir dir_;
};

TEST_F(DurableHistoryTest, EverythingAcceptedSurvivesSigtermAndSeqContinues) {
    std::int64_t epoch = 0;
    {
        ws_client alice = login("alice");
        epoch = join_room(alice, "d").at("epoch").get<std::int64_t>();
        auto seqs = say_many(alice, 120);
        ASSERT_EQ(seqs["m120"], 120);
    }
    restart_daemon();  // SIGTERM right after the last ack: nothing waited for a flush

    ws_client alice = login("alice");
    json joined = join_room(alice, "d");
    EXPECT_EQ(joined.at("epoch").get<std::int64_t>(), epoch) << "seqs from before the restart stay valid";
    ASSERT_EQ(joined["history"].size(), 10u);
    EXPECT_EQ(joined["history"].back().value("text", ""), "m120");

    auto all = whole_history(alice);
    ASSERT_EQ(all.size(), 120u);
    for (std::size_t i = 0; i < all.size(); ++i) {
        expect_message_object(all[i], "d", "alice", "m" + std::to_string(i + 1));
        EXPECT_EQ(all[i].at("seq").get<std::int64_t>(), static_cast<std::int64_t>(i + 1));
    }
    json older = call(alice, {{"type", "history"}, {"room", "d"}, {"before", 31}, {"limit", 5}, {"id", "b"}});
    ASSERT_EQ(older["messages"].size(), 5u);
    EXPECT_EQ(older["messages"][0].value("text", ""), "m26") << "a before page from the file";

    json ack = call(alice, {{"type", "say"}, {"room", "d"}, {"text", "after restart"}, {"id", "x"}});
    EXPECT_EQ(ack.value("seq", 0), 121) << "a room continues from its last stored seq";
}

TEST_F(DurableHistoryTest, AReconnectingClientRecoversAcrossARestart) {
    std::int64_t epoch = 0;
    {
        ws_client alice = login("alice");
        epoch = join_room(alice, "d").at("epoch").get<std::int64_t>();
        say_many(alice, 15);
    }
    restart_daemon();
    ws_client alice = login("alice");
    json joined = join_room(alice, "d", {{"after", 12}, {"epoch", epoch}});
    EXPECT_EQ(joined.value("recovered", false), true) << joined.dump();
    ASSERT_EQ(joined["history"].size(), 3u);
    EXPECT_EQ(joined["history"][0].value("seq", 0), 13);
}

TEST_F(DurableHistoryTest, KillNineLosesAtMostTheLastFlushInterval) {
    ws_client alice = login("alice");
    join_room(alice, "d");
    struct acked {
        std::int64_t seq;
        clock::time_point at;
    };
    std::vector<acked> acks;
    std::atomic<bool> killed{false};
    clock::time_point kill_time;
    const pid_t pid = daemon_->pid();
    std::thread killer([&] {
        std::this_thread::sleep_for(1500ms);
        kill_time = clock::now();
        ::kill(pid, SIGKILL);
        killed = true;
    });
    // Say and wait for each ack until the daemon dies under us.
    for (int i = 1; !killed || i < 3; ++i) {
        try {
            json ack = call(alice, {{"type", "say"}, {"room", "d"}, {"text", "k" + std::to_string(i)}, {"id", i}}, 2s);
            if (ack.value("type", "") == "ack") {
                acks.push_back({ack.at("seq").get<std::int64_t>(), clock::now()});
            }
        } catch (const std::runtime_error&) {
            break;  // the connection died with the daemon
        }
    }
    killer.join();
    ASSERT_TRUE(daemon_->wait_exit(5s));
    ASSERT_GT(acks.size(), 50u) << "the daemon was killed mid-stream";

    daemon_ = std::make_unique<daemon_process>(daemon_args(), daemon_config());
    ws_client again = login("alice");
    join_room(again, "d");
    auto stored = whole_history(again);
    std::int64_t stored_last = stored.empty() ? 0 : stored.back().at("seq").get<std::int64_t>();
    for (std::size_t i = 0; i < stored.size(); ++i) {
        ASSERT_EQ(stored[i].at("seq").get<std::int64_t>(), static_cast<std::int64_t>(i + 1)) << "no holes";
    }
    // Every message acked longer ago than one flush interval (plus the time a write takes on
    // this shared machine) is on disk.
    const auto bound = kill_time - std::chrono::milliseconds(flush_interval_ms) - 150ms;
    std::size_t must_have = 0;
    for (const acked& a : acks) {
        if (a.at <= bound) {
            ++must_have;
            EXPECT_LE(a.seq, stored_last) << "seq " << a.seq << " was acked "
                                          << std::chrono::duration_cast<std::chrono::milliseconds>(kill_time - a.at).count()
                                          << " ms before the kill and is missing";
        }
    }
    EXPECT_GT(must_have, 0u);
    std::cout << "acked " << acks.size() << ", on disk " << stored.size() << ", lost "
              << acks.size() - std::min(acks.size(), stored.size()) << "\n";

    json ack = call(again, {{"type", "say"}, {"room", "d"}, {"text", "after crash"}, {"id", "x"}});
    EXPECT_GT(ack.value("seq", std::int64_t{0}), acks.back().seq) << "a seq that clients saw is never given again";
}

TEST(DurableHistoryStart, ACorruptDatabaseStopsTheStartNamingFileAndReason) {
    temp_dir dir;
    std::string path = dir.file("history.db");
    std::ofstream(path) << std::string(4096, 'x');
    try {
        daemon_process daemon({"--history-path", path});
        FAIL() << "the daemon started on a corrupt database";
    } catch (const std::runtime_error& e) {
        std::string what = e.what();
        EXPECT_NE(what.find("not starting: history: " + path), std::string::npos) << what;
        EXPECT_NE(what.find("not a database"), std::string::npos) << what;
    }
}

TEST(DurableHistoryStart, ASecondDaemonOnTheSameFileDoesNotStart) {
    temp_dir dir;
    std::string path = dir.file("history.db");
    daemon_process first({"--history-path", path});
    try {
        daemon_process second({"--history-path", path});
        FAIL() << "two daemons write one history file";
    } catch (const std::runtime_error& e) {
        std::string what = e.what();
        EXPECT_NE(what.find("not starting: history: " + path + ": in use by another parleyd"), std::string::npos)
            << what;
    }
    EXPECT_TRUE(first.running()) << "the first one goes on";
}

TEST(DurableHistoryStart, AnUnusableDirectoryStopsTheStartNamingIt) {
    temp_dir dir;
    std::string file = dir.file("plain");
    std::ofstream(file) << "not a directory";
    try {
        daemon_process daemon({"--history-path", file + "/history.db"});
        FAIL() << "the daemon started without a usable history file";
    } catch (const std::runtime_error& e) {
        std::string what = e.what();
        EXPECT_NE(what.find(file), std::string::npos) << what;
        EXPECT_NE(what.find("is not a directory"), std::string::npos) << what;
    }
}

}  // namespace
}  // namespace parley::integration
