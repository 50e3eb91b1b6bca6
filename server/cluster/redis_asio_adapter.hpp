#pragma once

// Internal to redis_connection: the event-library adapter that lets hiredis's async API run on
// an Asio executor. Not for other callers (it exposes hiredis types).

#include <hiredis/async.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <array>
#include <functional>
#include <memory>
#include <string>

namespace parley::cluster::detail {

// Watches the socket of one redisAsyncContext and calls redisAsyncHandleRead/HandleWrite when it
// is ready, as hiredis's ev.addRead/delRead/addWrite/delWrite/cleanup hooks ask.
//
// Ownership: hiredis owns the context and its fd and may free both inside HandleRead/HandleWrite
// (on an error or EOF), inside redisAsyncFree, or when a connect fails. Just before it closes
// the fd it calls the cleanup hook: the driver then releases the fd from its stream_descriptor
// (which never closes it), cancelling the waits, and forgets the context. Every wait holds a
// shared_ptr to the driver, so a wait that completes after that, cancelled or already queued,
// finds context() == nullptr and does nothing.
//
// All of it runs on the executor's thread; the context must only be touched there.
class hiredis_asio_driver : public std::enable_shared_from_this<hiredis_asio_driver> {
    struct private_tag {};

public:
    // Called after each redisAsyncHandleRead/HandleWrite with the driver that made the call;
    // hiredis may have freed the context inside it (then context() is nullptr).
    using after_io_function = std::function<void(hiredis_asio_driver&)>;

    // Thread: the executor's. Installs the hooks on ac, fresh from redisAsyncConnect (ac->err == 0,
    // no adapter yet). Returns nullptr, with error set, when the fd cannot be watched; ac is then
    // left as it was, for the caller to free.
    static std::shared_ptr<hiredis_asio_driver> attach(const boost::asio::any_io_executor& executor,
                                                       redisAsyncContext* ac, after_io_function after_io,
                                                       std::string& error);

    hiredis_asio_driver(private_tag, const boost::asio::any_io_executor& executor, redisAsyncContext* ac,
                        after_io_function after_io);
    ~hiredis_asio_driver();
    hiredis_asio_driver(const hiredis_asio_driver&) = delete;
    hiredis_asio_driver& operator=(const hiredis_asio_driver&) = delete;

    // The context until hiredis lets it go (the cleanup hook), nullptr after.
    redisAsyncContext* context() const noexcept { return ac_; }
    // hiredis's error text at cleanup, or empty when it had none (a free we asked for).
    const std::string& error() const noexcept { return error_; }

private:
    enum direction : unsigned { read = 0, write = 1 };

    // The hooks; privdata is the driver. Called from C, so they never throw.
    static void add_read(void* privdata) noexcept;
    static void del_read(void* privdata) noexcept;
    static void add_write(void* privdata) noexcept;
    static void del_write(void* privdata) noexcept;
    static void cleanup(void* privdata) noexcept;

    void want(direction d, bool on) noexcept;
    void arm(direction d) noexcept;
    void on_ready(direction d, const boost::system::error_code& ec) noexcept;
    void let_go() noexcept;

    redisAsyncContext* ac_;
    boost::asio::posix::stream_descriptor descriptor_;
    after_io_function after_io_;
    std::string error_;
    // What hiredis wants watched, and which waits are outstanding. At most one wait per
    // direction: Asio registers the fd edge-triggered and re-checks readiness (EPOLL_CTL_MOD) only
    // when a wait starts with none queued, which is what makes data already waiting in the socket
    // (hiredis reads at most 16 KiB per call) complete the next wait at once.
    std::array<bool, 2> wanted_{};
    std::array<bool, 2> armed_{};
};

}  // namespace parley::cluster::detail
