// SIGTERM: connected clients get 1001 and the daemon exits with status 0.
#include "test_support.hpp"

#include <future>

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

}  // namespace
}  // namespace parley::integration
