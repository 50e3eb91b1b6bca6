#pragma once

// The hiredis side of one redis_connection: the context of one attempt (then of the
// connection it became), the callbacks hiredis calls, and the conversion of its replies.
// Private to redis_connection.cpp and this file's .cpp.

#include "server/cluster/redis_asio_adapter.hpp"
#include "server/cluster/redis_connection.hpp"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

namespace parley::cluster::detail {

using clock = std::chrono::steady_clock;

// A reply's text (string, status, error), or empty.
std::string_view text_of(const redisReply* reply);
// An owned copy of hiredis's reply tree.
redis_reply convert(const redisReply& from);
bool equals_ignoring_case(std::string_view a, std::string_view b);

struct pending_command {
    redis_callback callback;
    clock::time_point sent;
};

// One hiredis context (one attempt, then the connection it became) and what belongs to it. It is
// the privdata of every hiredis callback on that context.
struct redis_session {
    redis_connection* owner = nullptr;  // nullptr once the connection is being destroyed: answers go nowhere
    std::shared_ptr<hiredis_asio_driver> io;
    // Callbacks of the commands hiredis accepted, in the order it answers them.
    std::deque<pending_command> pending;
    bool tcp_connected = false;  // hiredis reported the connect; the handshake is due
    bool handshake_sent = false;
    bool pong_pending = false;
    std::size_t unconfirmed = 0;  // SUBSCRIBE confirmations still to come
    std::string handshake_error;  // the PING got an error (LOADING, NOAUTH...)

    redisAsyncContext* context() const { return io ? io->context() : nullptr; }

    // hiredis callbacks. They run inside hiredis, so they only record: user callbacks run later,
    // from deliver(), when hiredis is off the stack.
    static void on_connect(const redisAsyncContext* ac, int status) noexcept;
    static void on_reply(redisAsyncContext* ac, void* reply, void* privdata) noexcept;
    static void on_pong(redisAsyncContext* ac, void* reply, void* privdata) noexcept;
    static void on_auth(redisAsyncContext* ac, void* reply, void* privdata) noexcept;
    static void on_subscription(redisAsyncContext* ac, void* reply, void* privdata) noexcept;
};

}  // namespace parley::cluster::detail
