#include "server/connection_poller.hpp"

#include <boost/asio/post.hpp>

#include <cerrno>
#include <system_error>
#include <unistd.h>

namespace parley::server {

namespace asio = boost::asio;

namespace {
int create_epoll() {
    int fd = ::epoll_create1(EPOLL_CLOEXEC);
    if (fd < 0) {
        throw std::system_error(errno, std::generic_category(), "epoll_create1");
    }
    return fd;
}
}  // namespace

connection_poller::connection_poller(asio::io_context& io)
    : io_(io), epoll_fd_(create_epoll()), descriptor_(io, epoll_fd_) {}

connection_poller::~connection_poller() {
    boost::system::error_code ec;
    descriptor_.close(ec);  // closes epoll_fd_
}

bool connection_poller::watch(int fd, poll_target* target) {
    epoll_event event{};
    event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    event.data.ptr = target;
    return ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) == 0;
}

void connection_poller::start() {
    stopped_ = false;
    wait();
}

void connection_poller::stop() {
    stopped_ = true;
    boost::system::error_code ec;
    descriptor_.cancel(ec);
}

void connection_poller::wait() {
    descriptor_.async_wait(asio::posix::stream_descriptor::wait_read, [this](boost::system::error_code ec) {
        if (ec || stopped_) {
            return;
        }
        dispatch();
    });
}

void connection_poller::dispatch() {
    int n = ::epoll_wait(epoll_fd_, events_.data(), static_cast<int>(events_.size()), 0);
    if (n < 0 && errno != EINTR) {
        // Cannot happen with a valid set and buffer; waiting again would spin, so stop loudly.
        throw std::system_error(errno, std::generic_category(), "epoll_wait");
    }
    for (int i = 0; i < n; ++i) {
        static_cast<poll_target*>(events_[static_cast<std::size_t>(i)].data.ptr)->on_poll(events_[static_cast<std::size_t>(i)].events);
    }
    if (n == static_cast<int>(events_.size())) {
        // More may be ready: the set's readiness did not change since the last wait, so Asio
        // would see no new edge. Come back after the handlers already queued (fairness to HTTP
        // sessions and timers).
        asio::post(io_, [this] {
            if (!stopped_) {
                dispatch();
            }
        });
        return;
    }
    wait();
}

}  // namespace parley::server
