// The service-manager notifications, read back from a datagram socket standing in for systemd.

#include "server/systemd_notify.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>

namespace parley::server::tests {
namespace {

unsigned long long monotonic_usec() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<unsigned long long>(now.tv_sec) * 1000000ULL +
           static_cast<unsigned long long>(now.tv_nsec) / 1000ULL;
}

// A bound AF_UNIX datagram socket in a fresh temporary folder, exported as NOTIFY_SOCKET for
// the duration of a test.
class notify_socket {
public:
    notify_socket() {
        const char* base = std::getenv("TMPDIR");
        std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/parley-notify-XXXXXX";
        if (mkdtemp(pattern.data()) == nullptr) {
            ADD_FAILURE() << "mkdtemp: " << std::strerror(errno);
            return;
        }
        dir_ = pattern;
        path_ = dir_ + "/notify";
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        if (fd_ < 0 || path_.size() >= sizeof(address.sun_path)) {
            ADD_FAILURE() << "cannot create a socket at " << path_;
            return;
        }
        std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
            ADD_FAILURE() << "bind " << path_ << ": " << std::strerror(errno);
            return;
        }
        ::setenv("NOTIFY_SOCKET", path_.c_str(), 1);
    }
    ~notify_socket() {
        ::unsetenv("NOTIFY_SOCKET");
        if (fd_ >= 0) {
            ::close(fd_);
        }
        if (!path_.empty()) {
            ::unlink(path_.c_str());
        }
        if (!dir_.empty()) {
            ::rmdir(dir_.c_str());
        }
    }
    notify_socket(const notify_socket&) = delete;
    notify_socket& operator=(const notify_socket&) = delete;

    // The next datagram, or nothing if none arrives within the timeout.
    std::optional<std::string> receive(int timeout_ms = 2000) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, timeout_ms) != 1) {
            return std::nullopt;
        }
        char buffer[4096];
        ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
        if (n < 0) {
            return std::nullopt;
        }
        return std::string(buffer, static_cast<std::size_t>(n));
    }

private:
    std::string dir_;
    std::string path_;
    int fd_ = -1;
};

TEST(systemd_notify, ready_sends_ready_and_status) {
    notify_socket socket;
    systemd::ready("listening on 0.0.0.0:8080");
    EXPECT_EQ(socket.receive(), "READY=1\nSTATUS=listening on 0.0.0.0:8080");
}

TEST(systemd_notify, ready_without_status_sends_only_ready) {
    notify_socket socket;
    systemd::ready("");
    EXPECT_EQ(socket.receive(), "READY=1");
}

TEST(systemd_notify, reloading_carries_the_monotonic_time) {
    notify_socket socket;
    auto before = monotonic_usec();
    systemd::reloading();
    auto after = monotonic_usec();
    auto message = socket.receive();
    ASSERT_TRUE(message.has_value());
    const std::string prefix = "RELOADING=1\nMONOTONIC_USEC=";
    ASSERT_EQ(message->rfind(prefix, 0), 0U) << *message;
    auto digits = message->substr(prefix.size());
    ASSERT_FALSE(digits.empty());
    ASSERT_EQ(digits.find_first_not_of("0123456789"), std::string::npos) << *message;
    auto usec = std::stoull(digits);
    EXPECT_GE(usec, before);
    EXPECT_LE(usec, after);
}

TEST(systemd_notify, stopping_and_status) {
    notify_socket socket;
    systemd::stopping();
    EXPECT_EQ(socket.receive(), "STOPPING=1");
    systemd::status("draining 12 connections");
    EXPECT_EQ(socket.receive(), "STATUS=draining 12 connections");
}

TEST(systemd_notify, a_status_stays_on_one_line) {
    notify_socket socket;
    systemd::status("two\nlines");
    EXPECT_EQ(socket.receive(), "STATUS=two lines");
}

TEST(systemd_notify, the_sequence_of_a_reload_and_a_shutdown_arrives_in_order) {
    notify_socket socket;
    systemd::ready("serving");
    systemd::reloading();
    systemd::ready("serving, config reloaded");
    systemd::stopping();
    EXPECT_EQ(socket.receive(), "READY=1\nSTATUS=serving");
    auto reload = socket.receive();
    ASSERT_TRUE(reload.has_value());
    EXPECT_EQ(reload->rfind("RELOADING=1\n", 0), 0U);
    EXPECT_EQ(socket.receive(), "READY=1\nSTATUS=serving, config reloaded");
    EXPECT_EQ(socket.receive(), "STOPPING=1");
}

TEST(systemd_notify, without_notify_socket_nothing_is_sent) {
    notify_socket socket;
    const char* path = std::getenv("NOTIFY_SOCKET");
    ASSERT_NE(path, nullptr);
    const std::string saved = path;
    ::unsetenv("NOTIFY_SOCKET");
    systemd::ready("serving");
    systemd::reloading();
    systemd::status("anything");
    systemd::stopping();
    EXPECT_EQ(socket.receive(100), std::nullopt) << "a call without NOTIFY_SOCKET sent a datagram";
    // The socket still works: the first datagram it gets is the one sent after the variable is back.
    ::setenv("NOTIFY_SOCKET", saved.c_str(), 1);
    systemd::status("after");
    EXPECT_EQ(socket.receive(), "STATUS=after");
}

}  // namespace
}  // namespace parley::server::tests
