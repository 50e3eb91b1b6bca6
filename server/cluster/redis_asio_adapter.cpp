#include "server/cluster/redis_asio_adapter.hpp"

#include <boost/asio/error.hpp>

#include <utility>

namespace parley::cluster::detail {

std::shared_ptr<hiredis_asio_driver> hiredis_asio_driver::attach(const boost::asio::any_io_executor& executor,
                                                                 redisAsyncContext* ac, after_io_function after_io,
                                                                 std::string& error) {
    if (ac->ev.data != nullptr) {
        error = "the hiredis context already has an event adapter";
        return nullptr;
    }
    auto driver = std::make_shared<hiredis_asio_driver>(private_tag{}, executor, ac, std::move(after_io));
    boost::system::error_code ec;
    driver->descriptor_.assign(ac->c.fd, ec);
    if (ec) {
        error = "cannot watch the socket: " + ec.message();
        driver->ac_ = nullptr;  // the destructor must not touch the context the caller frees
        return nullptr;
    }
    ac->ev.data = driver.get();
    ac->ev.addRead = &add_read;
    ac->ev.delRead = &del_read;
    ac->ev.addWrite = &add_write;
    ac->ev.delWrite = &del_write;
    ac->ev.cleanup = &cleanup;
    return driver;
}

namespace {

// Leaves hiredis no hook into a driver that is going or gone.
void clear_hooks(redisAsyncContext& ac) {
    ac.ev.data = nullptr;
    ac.ev.addRead = nullptr;
    ac.ev.delRead = nullptr;
    ac.ev.addWrite = nullptr;
    ac.ev.delWrite = nullptr;
    ac.ev.cleanup = nullptr;
}

}  // namespace

hiredis_asio_driver::hiredis_asio_driver(private_tag, const boost::asio::any_io_executor& executor,
                                         redisAsyncContext* ac, after_io_function after_io)
    : ac_(ac), descriptor_(executor), after_io_(std::move(after_io)) {}

hiredis_asio_driver::~hiredis_asio_driver() {
    // The owner frees the context before it drops the driver, so this only matters after a bug
    // there: leave hiredis no hook pointing at freed memory, and never close its fd.
    if (ac_ != nullptr) {
        clear_hooks(*ac_);
    }
    if (descriptor_.is_open()) {
        descriptor_.release();
    }
}

void hiredis_asio_driver::add_read(void* privdata) noexcept {
    static_cast<hiredis_asio_driver*>(privdata)->want(read, true);
}

void hiredis_asio_driver::del_read(void* privdata) noexcept {
    static_cast<hiredis_asio_driver*>(privdata)->want(read, false);
}

void hiredis_asio_driver::add_write(void* privdata) noexcept {
    static_cast<hiredis_asio_driver*>(privdata)->want(write, true);
}

void hiredis_asio_driver::del_write(void* privdata) noexcept {
    static_cast<hiredis_asio_driver*>(privdata)->want(write, false);
}

void hiredis_asio_driver::cleanup(void* privdata) noexcept { static_cast<hiredis_asio_driver*>(privdata)->let_go(); }

void hiredis_asio_driver::want(direction d, bool on) noexcept {
    wanted_[d] = on;
    // A del leaves an outstanding wait alone (Asio cancels only both directions at once): when it
    // completes, on_ready sees the direction unwanted and drops it.
    if (on && !armed_[d] && ac_ != nullptr) {
        arm(d);
    }
}

void hiredis_asio_driver::arm(direction d) noexcept {
    try {
        descriptor_.async_wait(d == read ? boost::asio::posix::stream_descriptor::wait_read
                                         : boost::asio::posix::stream_descriptor::wait_write,
                               [self = shared_from_this(), d](const boost::system::error_code& ec) {
                                   self->on_ready(d, ec);
                               });
        armed_[d] = true;
    } catch (...) {
        // Only an allocation failure gets here. The socket then goes unwatched in this direction
        // until hiredis asks again; the owner's command timeout ends a connection that stalls.
    }
}

void hiredis_asio_driver::on_ready(direction d, const boost::system::error_code& ec) noexcept {
    armed_[d] = false;
    if (ac_ == nullptr || ec == boost::asio::error::operation_aborted || !wanted_[d]) {
        return;
    }
    // Any other error is the socket's: hiredis finds it in its own read or write.
    // hiredis re-requests what it still wants through the hooks during the call (reads always,
    // writes while its output buffer is not empty), re-arming the waits.
    if (d == read) {
        redisAsyncHandleRead(ac_);
    } else {
        // Also how a pending connect completes: hiredis checks SO_ERROR on the first writability.
        redisAsyncHandleWrite(ac_);
    }
    if (after_io_) {
        after_io_(*this);
    }
}

void hiredis_asio_driver::let_go() noexcept {
    if (ac_ == nullptr) {
        return;  // newer hiredis versions may call cleanup twice
    }
    try {
        if (ac_->c.err != 0) {
            error_ = ac_->c.errstr;
        }
    } catch (...) {
        // No memory for the text: the owner reports the loss without it.
    }
    // Later hook calls (none in hiredis 0.14, but cheap to rule out) find no hooks.
    clear_hooks(*ac_);
    ac_ = nullptr;
    wanted_ = {};
    // Deregisters the fd before hiredis closes it, and completes the outstanding waits with
    // operation_aborted; they hold the driver alive until then.
    if (descriptor_.is_open()) {
        descriptor_.release();
    }
}

}  // namespace parley::cluster::detail
