#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <sys/epoll.h>

#include <array>
#include <cstdint>

namespace parley::server {

// What the poller calls when a watched descriptor has events (EPOLLIN, EPOLLOUT, EPOLLRDHUP,
// EPOLLHUP, EPOLLERR bits). Edge-triggered: an event is reported once per change, so the target
// reads until EAGAIN (or remembers to come back) and writes until EAGAIN.
class poll_target {
public:
    virtual void on_poll(std::uint32_t events) = 0;

protected:
    ~poll_target() = default;
};

// A worker's own epoll set for its WebSocket connections, watched by the worker's io_context as
// ONE descriptor (an epoll descriptor is itself pollable).
//
// Why not Asio's reactor per socket: every Asio socket carries reactor state (a mutex and three
// operation queues, 168 bytes here), a heap-allocated operation per pending wait and the
// socket object itself, and every readiness event goes through a lock, an operation queue and
// the scheduler. Registering each connection once, edge-triggered for input and output, costs
// the kernel's entry and nothing in user space; one epoll_wait hands over the events of up to
// a few hundred connections, which are dispatched by a plain virtual call. HTTP sessions, timers
// and posted tasks stay on Asio.
//
// Targets must outlive the pass in which they stop being watched: a target closed while its
// events are being dispatched may still receive the rest of that batch (the worker keeps a
// closed connection until a posted task releases it).
// Thread: the owning worker's thread.
class connection_poller {
public:
    // Throws std::system_error when the epoll set cannot be created.
    explicit connection_poller(boost::asio::io_context& io);
    ~connection_poller();
    connection_poller(const connection_poller&) = delete;
    connection_poller& operator=(const connection_poller&) = delete;

    // Watches fd for input, output and hang-up, edge-triggered, until fd is closed (closing the
    // descriptor removes it). Returns false, with errno set, when the kernel refuses.
    bool watch(int fd, poll_target* target);

    // Starts waiting for events; stop() cancels the wait (before the io_context goes away).
    void start();
    void stop();

private:
    void wait();
    void dispatch();

    boost::asio::io_context& io_;
    int epoll_fd_;
    boost::asio::posix::stream_descriptor descriptor_;
    bool stopped_ = false;
    // Events per epoll_wait: large enough that a busy worker drains its set in one call or two,
    // small enough to stay in cache (12 bytes each).
    std::array<epoll_event, 256> events_{};
};

}  // namespace parley::server
