#pragma once

// The parts of a redis_connection's state that its two source files share (redis_connection.cpp:
// connecting, writing, timers; redis_connection_replies.cpp: reading replies and subscribing).
// Private to them.

#include "rooms/cluster/resp_protocol.hpp"
#include "server/cluster/redis_connection.hpp"

#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstddef>
#include <deque>
#include <string>
#include <vector>

namespace parley::cluster {

using redis_clock = std::chrono::steady_clock;

// A read buffer grown past this by a large reply is given back once it is empty again.
inline constexpr std::size_t redis_kept_buffer = 256 * 1024;

// What the next reply on a connection answers, in the order the commands went out.
struct expected_reply {
    enum class kind { command, auth, ping } type = kind::command;
    redis_callback callback;  // command
    redis_clock::time_point sent;
};

struct redis_connection::session {
    explicit session(const boost::asio::any_io_executor& executor) : socket(executor) {}

    boost::asio::ip::tcp::socket socket;
    // Bytes read: in[start, filled) are not consumed yet.
    std::vector<char> in;
    std::size_t start = 0;
    std::size_t filled = 0;
    resp::reply_scanner scanner;
    std::string out;      // commands queued for the next write
    std::string writing;  // the write in progress
    bool write_active = false;
    bool flush_posted = false;
    std::deque<expected_reply> expected;
    bool tcp_connected = false;
    bool handshake_sent = false;
    bool pong_pending = false;
    std::size_t unconfirmed = 0;  // SUBSCRIBE confirmations still to come
    std::string handshake_error;  // AUTH, PING or SUBSCRIBE got an error (NOAUTH, LOADING...)
};

}  // namespace parley::cluster
