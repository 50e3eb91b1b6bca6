// SIGTERM: connected clients get 1001 and the daemon exits with status 0.
#include "http_response.hpp"
#include "test_support.hpp"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <future>
#include <iostream>

namespace parley::integration {
namespace {

class ShutdownTest : public parley_test {};

TEST_F(ShutdownTest, ClientsGetGoingAwayAndDaemonExitsCleanly) {
    ws_client alice = login("alice");
    ws_client idle = connect();
    join_room(alice, "r");
    // Stop on another thread: the daemon may wait for the clients' close replies.
    auto stopped = std::async(std::launch::async, [this] { return daemon_->stop(); });
    EXPECT_EQ(alice.expect_close(milliseconds(10000)), 1001);
    EXPECT_EQ(idle.expect_close(milliseconds(10000)), 1001);
    const exit_status status = stopped.get();
    EXPECT_TRUE(status.exited && status.code == 0) << status.describe();
    EXPECT_TRUE(alice.wait_eof());
}

TEST_F(ShutdownTest, TcpClosesRightAfterTheCloseHandshake) {
    ws_client alice = login("alice");
    auto stopped = std::async(std::launch::async, [this] { return daemon_->stop(); });
    ASSERT_EQ(alice.expect_close(milliseconds(10000)), 1001);  // answers the close
    // Both close frames are exchanged: the server closes TCP now (RFC 6455 section 7.1.1),
    // well before any shutdown deadline for clients that never answer.
    EXPECT_TRUE(alice.wait_eof(milliseconds(1000))) << "TCP still open 1 s after the close handshake";
    const exit_status status = stopped.get();
    EXPECT_TRUE(status.exited && status.code == 0) << status.describe();
}

TEST_F(ShutdownTest, SilentClientDoesNotHoldUpShutdown) {
    // This client never answers the close: the daemon must still exit, by its own deadline.
    ws_client mute = login("mute");
    const auto started = std::chrono::steady_clock::now();
    const exit_status status = daemon_->stop(milliseconds(15000));
    EXPECT_TRUE(status.exited && status.code == 0) << status.describe();
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(12));
}


// ---------------------------------------------------------------------------------------------
// Shutdown driven by signals the test sends itself (send_signal), so that it can look at the
// daemon while it shuts down.

using clock = std::chrono::steady_clock;

// The log line written once the daemon has stopped accepting (after /readyz turned 503 and the
// listening socket closed).
constexpr const char* shutdown_begun = "shutdown: closing connections";

class SignalShutdownTest : public parley_test {
protected:
    // Sends SIGTERM once and waits for the daemon to stop accepting.
    void begin_shutdown() {
        const std::size_t from = daemon_->line_count();
        daemon_->send_signal(SIGTERM);
        ASSERT_TRUE(daemon_->wait_for_line("shutting down", from, milliseconds(5000)));
        ASSERT_TRUE(daemon_->wait_for_line(shutdown_begun, from, milliseconds(5000)));
    }
    // After begin_shutdown(): the daemon must exit by itself with status 0 within timeout.
    void expect_clean_exit(milliseconds timeout) {
        ASSERT_TRUE(daemon_->wait_exit(timeout)) << "the daemon did not exit within " << timeout.count() << " ms";
        const exit_status status = daemon_->stop();
        EXPECT_TRUE(status.exited && status.code == 0) << status.describe();
    }
};

TEST_F(SignalShutdownTest, MessagesSentBeforeSigtermReachEveryMemberBeforeTheClose) {
    constexpr int member_count = 10;
    constexpr int message_count = 50;
    std::vector<ws_client> members;
    for (int i = 0; i < member_count; ++i) {
        members.push_back(login("member" + std::to_string(i)));
        join_room(members.back(), "r");
    }
    ws_client publisher = login("publisher");
    join_room(publisher, "r");
    for (int i = 0; i < message_count; ++i) {
        publisher.send_json({{"type", "say"}, {"room", "r"}, {"text", "m" + std::to_string(i)}, {"id", i}});
    }
    std::vector<std::int64_t> acked;
    for (int i = 0; i < message_count; ++i) {
        const json ack = wait_reply(publisher, i);
        ASSERT_EQ(ack.value("type", ""), "ack") << ack;
        acked.push_back(ack.at("seq").get<std::int64_t>());
    }
    // Nobody has read a message yet: every one of them is still on its way when SIGTERM comes.
    daemon_->send_signal(SIGTERM);

    for (int m = 0; m < member_count; ++m) {
        std::vector<json> received;
        while (auto message = members[m].recv_json(milliseconds(10000))) {
            if (message->value("type", "") == "message") {
                received.push_back(*message);
            }
        }
        EXPECT_EQ(members[m].close_code(), std::optional<std::uint16_t>(1001))
            << "member " << m << " after " << received.size() << " messages";
        ASSERT_EQ(received.size(), static_cast<std::size_t>(message_count)) << "member " << m;
        for (int i = 0; i < message_count; ++i) {
            EXPECT_EQ(received[i].value("text", ""), "m" + std::to_string(i)) << "member " << m;
            EXPECT_EQ(received[i].value("seq", std::int64_t{0}), acked[i]) << "member " << m;
        }
    }
    EXPECT_EQ(publisher.expect_close(milliseconds(10000)), 1001);
    expect_clean_exit(milliseconds(10000));
}

class ReadyzShutdownTest : public SignalShutdownTest {
protected:
    std::string daemon_config() const override { return "[server]\nshutdown_close_window_ms = 2000\n"; }
};

TEST_F(ReadyzShutdownTest, ReadyzTurns503AndNewConnectionsAreRefused) {
    const std::string request = "GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ws_client http(port());
    const http_response before = parse_http_response(http.raw_http(request));
    EXPECT_EQ(before.status, 200);
    EXPECT_EQ(before.body, "ready");
    // A WebSocket client that never answers the close keeps the daemon up for a while.
    ws_client mute = login("mute");

    begin_shutdown();
    const http_response after = parse_http_response(http.raw_http(request));
    EXPECT_EQ(after.status, 503) << "the same keep-alive connection, after SIGTERM";
    EXPECT_EQ(after.body, "shutting down");
    EXPECT_TRUE(daemon_->running()) << "the daemon should still wait for the mute client";
    EXPECT_THROW(ws_client late(port()), std::runtime_error) << "a new TCP connection was accepted";

    EXPECT_EQ(mute.expect_close(milliseconds(5000)), 1001);
    expect_clean_exit(milliseconds(10000));
}

class CloseWindowTest : public SignalShutdownTest {
protected:
    std::string daemon_config() const override { return "[server]\nshutdown_close_window_ms = 1000\n"; }
};

TEST_F(CloseWindowTest, GoingAwayClosesAreSpreadOverTheWindow) {
    constexpr std::size_t client_count = 40;
    std::vector<ws_client> clients;
    for (std::size_t i = 0; i < client_count; ++i) {
        clients.push_back(login("c" + std::to_string(i)));
    }
    const auto signalled = clock::now();
    daemon_->send_signal(SIGTERM);
    // One thread watches every client at once and notes when each one's close arrives.
    std::vector<std::optional<clock::time_point>> arrived(client_count);
    std::vector<std::optional<std::uint16_t>> codes(client_count);
    const auto deadline = signalled + milliseconds(5000);
    std::size_t done = 0;
    while (done < client_count && clock::now() < deadline) {
        std::vector<pollfd> fds;
        std::vector<std::size_t> which;
        for (std::size_t i = 0; i < client_count; ++i) {
            if (!arrived[i]) {
                fds.push_back({clients[i].fd(), POLLIN, 0});
                which.push_back(i);
            }
        }
        if (::poll(fds.data(), fds.size(), 20) <= 0) {
            continue;
        }
        const auto now = clock::now();
        for (std::size_t k = 0; k < fds.size(); ++k) {
            if (fds[k].revents == 0) {
                continue;
            }
            const std::size_t i = which[k];
            // Reads what is there without waiting; answers the close frame if it came.
            if (auto code = clients[i].expect_close(milliseconds(0))) {
                arrived[i] = now;
                codes[i] = code;
                ++done;
            }
        }
    }
    ASSERT_EQ(done, client_count) << "some clients got no close within 5 s";
    clock::time_point first = *arrived[0];
    clock::time_point last = *arrived[0];
    for (std::size_t i = 0; i < client_count; ++i) {
        EXPECT_EQ(codes[i], std::optional<std::uint16_t>(1001)) << "client " << i;
        first = std::min(first, *arrived[i]);
        last = std::max(last, *arrived[i]);
    }
    const auto spread = std::chrono::duration_cast<milliseconds>(last - first);
    const auto latest = std::chrono::duration_cast<milliseconds>(last - signalled);
    EXPECT_GE(spread, milliseconds(400)) << "the closes came all at once";
    EXPECT_LE(latest, milliseconds(1000 + 750)) << "closes came after the 1000 ms window";
    expect_clean_exit(milliseconds(10000));
}

class SecondSigtermTest : public SignalShutdownTest {
protected:
    std::string daemon_config() const override { return "[server]\nshutdown_timeout_ms = 20000\n"; }
};

TEST_F(SecondSigtermTest, SecondSigtermExitsAtOnce) {
    // This client never reads, so never answers the close: the daemon would wait for it.
    ws_client mute = login("mute");
    begin_shutdown();
    ASSERT_TRUE(daemon_->running()) << "the daemon did not wait for the mute client";
    const std::size_t from = daemon_->line_count();
    const auto again = clock::now();
    daemon_->send_signal(SIGTERM);
    const bool exited = daemon_->wait_exit(milliseconds(2000));
    EXPECT_TRUE(exited) << "still running 2 s after the second SIGTERM";
    EXPECT_LT(clock::now() - again, milliseconds(2000));
    // What server.cpp does on a second signal: logs it and exits with status 1 at once.
    const exit_status status = daemon_->stop(milliseconds(100));
    EXPECT_TRUE(status.exited && status.code == 1) << status.describe();
    EXPECT_TRUE(daemon_->wait_for_line("exiting now", from, milliseconds(1000)));
    if (HasFailure()) {
        std::cerr << "daemon output (last lines):\n" << daemon_->tail(60);
    }
    daemon_.reset();  // handled here: TearDown expects status 0 from a normal stop
}

}  // namespace
}  // namespace parley::integration
