// systemd Type=notify: the daemon tells the service manager when it is ready, reloading and
// stopping, through the datagram socket named by NOTIFY_SOCKET.
#include "daemon.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace parley::integration {
namespace {

// A socket standing in for the service manager's notification socket.
class notify_socket {
public:
    notify_socket() {
        path_ = (std::filesystem::temp_directory_path() / ("parley-notify-" + std::to_string(::getpid()))).string();
        ::unlink(path_.c_str());
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, path_.c_str(), sizeof address.sun_path - 1);
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
            throw std::runtime_error(std::string("notify socket: ") + std::strerror(errno));
        }
    }
    ~notify_socket() {
        ::close(fd_);
        ::unlink(path_.c_str());
    }
    const std::string& path() const { return path_; }

    // The next datagram, or empty when none arrives in time.
    std::string next(std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) {
            return {};
        }
        char buffer[4096];
        ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
        return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
    }

private:
    std::string path_;
    int fd_ = -1;
};

TEST(SystemdNotifyTest, ReadyAfterListeningThenReloadingAndStopping) {
    notify_socket manager;
    ::setenv("NOTIFY_SOCKET", manager.path().c_str(), 1);
    daemon_process daemon;  // returns once the "listening on" line is out
    ::unsetenv("NOTIFY_SOCKET");

    std::string ready = manager.next();
    EXPECT_NE(ready.find("READY=1"), std::string::npos) << "got: " << ready;

    daemon.send_signal(SIGHUP);
    std::string reloading = manager.next();
    EXPECT_NE(reloading.find("RELOADING=1"), std::string::npos) << "got: " << reloading;
    std::string ready_again = manager.next();
    EXPECT_NE(ready_again.find("READY=1"), std::string::npos) << "got: " << ready_again;

    daemon.send_signal(SIGTERM);
    std::string stopping = manager.next();
    EXPECT_NE(stopping.find("STOPPING=1"), std::string::npos) << "got: " << stopping;
    ASSERT_TRUE(daemon.wait_exit(std::chrono::milliseconds(10000))) << "no exit 10 s after SIGTERM";
    exit_status status = daemon.stop();
    EXPECT_TRUE(status.exited && status.code == 0) << status.describe();
}

TEST(SystemdNotifyTest, RejectedReloadStillReportsReady) {
    notify_socket manager;
    ::setenv("NOTIFY_SOCKET", manager.path().c_str(), 1);
    daemon_process daemon;
    ::unsetenv("NOTIFY_SOCKET");
    ASSERT_NE(manager.next().find("READY=1"), std::string::npos);

    // After RELOADING=1 the service manager waits for READY=1; a broken file must not leave
    // the unit stuck in "reloading".
    daemon.write_config("[limits\n");
    daemon.send_signal(SIGHUP);
    EXPECT_NE(manager.next().find("RELOADING=1"), std::string::npos);
    EXPECT_NE(manager.next().find("READY=1"), std::string::npos);
    EXPECT_TRUE(daemon.running());
}

}  // namespace
}  // namespace parley::integration
