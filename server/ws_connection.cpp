#include "server/ws_connection.hpp"

#include "protocol/frame_encoder.hpp"
#include "protocol/message_deflate.hpp"
#include "rooms/chat_hub.hpp"
#include "server/logging.hpp"
#include "server/slab.hpp"
#include "server/tls_channel.hpp"
#include "server/worker.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

namespace parley::server {

namespace asio = boost::asio;
using protocol::close_code;
using protocol::shared_frame;

namespace {
// How long a closing connection may take to read our close frame and hang up.
constexpr std::chrono::milliseconds close_linger{3000};
// A gathered write carries at most this many frames (IOV_MAX is 1024 on Linux).
constexpr std::size_t max_iov = 256;
// Frames up to this size are copied into the worker's staging buffer for a write (see flush).
constexpr std::size_t staged_frame_limit = 2048;
// Ciphertext handed to a TLS channel at once (a TLS record is at most 16 KiB plus 256 bytes).
constexpr std::size_t tls_feed_slice = 16 * 1024 + 256;
// Reads per readiness event before yielding to other connections of the worker.
constexpr int reads_per_turn = 4;

// Out of line so the compiler cannot expand the copy inline as a `rep movs` string instruction,
// whose start-up cost dominates for frames of a hundred bytes; the library's memcpy does not pay it.
[[gnu::noipa]] void copy_frame_bytes(char* to, const char* from, std::size_t size) {
    std::memcpy(to, from, size);
}
}  // namespace

void intrusive_ptr_add_ref(ws_connection* c) noexcept { ++c->refs_; }

void intrusive_ptr_release(ws_connection* c) noexcept {
    if (--c->refs_ == 0) {
        delete c;
    }
}

// An idle connection's size is a measured budget (docs/performance.md): TLS and closing state
// live behind one pointer so that a plain connection stays within it.
static_assert(sizeof(ws_connection) <= 288, "ws_connection grew: every idle connection pays for it");

// The class is final: every allocation is exactly one ws_connection.
void* ws_connection::operator new(std::size_t) {
    return slab<sizeof(ws_connection), alignof(ws_connection)>::allocate();
}

void ws_connection::operator delete(void* p) noexcept {
    slab<sizeof(ws_connection), alignof(ws_connection)>::deallocate(p);
}

ws_connection::ws_connection(int fd, worker& owner, connection_slot slot, std::unique_ptr<tls_channel> tls,
                             std::uint8_t deflate_window_bits)
    : worker_(owner),
      parser_(owner.chat().settings().max_message_bytes),
      chat_(owner.chat(), *this),
      slot_(std::move(slot)),
      opened_ms_(owner.precise_ms()),
      last_rx_ms_(owner.now_ms()),
      fd_(fd),
      deflate_window_bits_(deflate_window_bits) {
    if (deflate_window_bits_ != 0) {
        parser_.allow_compressed();
    }
    if (tls) {
        side_ = std::make_unique<side_state>();
        side_->tls = std::move(tls);
    }
    auto& counters = worker_.chat().counters();
    counters.connections_open.add();
    counters.connections_total.add();
}

ws_connection::~ws_connection() {
    if (phase_ != phase::closed) {
        // The worker is being torn down with this connection still open.
        ::close(fd_);
        worker_.chat().counters().connections_open.sub();
        queue_bytes_changed(queue_.bytes());
    }
}

void ws_connection::start(std::string leftover) {
    if (spdlog::should_log(spdlog::level::debug)) {
        spdlog::debug("{}", fields("connection open")
                                .add("peer", slot_.peer().text())
                                .add("conn", fmt::format("c{}.{}", worker_.index(), chat_.handle().session)));
    }
    worker_.attach(connection_ptr(this));
    // Bytes already waiting in the kernel are reported by the first event: adding a descriptor
    // to an epoll set checks its readiness at once.
    if (!worker_.poller().watch(fd_, this)) {
        spdlog::warn("[c{}.{}] cannot watch the socket: {}", worker_.index(), chat_.handle().session, std::strerror(errno));
        terminate("poll error");
        return;
    }
    if (!leftover.empty()) {
        consume(leftover.data(), leftover.size());
    }
    if (tls() != nullptr && phase_ != phase::closed) {
        // Records that came with the upgrade request may wait in the channel, undecrypted or
        // partly read; the epoll set reports only bytes still in the kernel.
        read_tls();
    }
}

void ws_connection::on_poll(std::uint32_t events) {
    if (phase_ == phase::closed) {
        return;  // closed earlier in this batch of events
    }
    if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0 && write_waiting_) {
        // The socket buffer has room again: send what waited, before reading more requests.
        write_waiting_ = false;
        flush();
    }
    if ((events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) {
        // Reported once (edge-triggered) even when the FIN came together with the last data.
        peer_hung_up_ = true;
    }
    if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0 && phase_ != phase::closed) {
        on_readable();
    }
}

void ws_connection::on_readable() {
    auto& buffer = worker_.receive_buffer();
    bool exhausted = true;  // the turn ended before the kernel said EAGAIN
    for (int turn = 0; turn < reads_per_turn && phase_ != phase::closed; ++turn) {
        ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
        if (n > 0) {
            worker_.chat().counters().bytes_received.add(static_cast<std::uint64_t>(n));
            last_rx_ms_ = worker_.now_ms();
            ping_outstanding_ = false;
            if (tls_channel* channel = tls()) {
                // A record at a time or so: the channel's input buffer grows to what is fed
                // before it is decrypted, and it is kept until the connection is idle.
                for (std::size_t at = 0; at < static_cast<std::size_t>(n); at += tls_feed_slice) {
                    std::size_t slice = std::min(tls_feed_slice, static_cast<std::size_t>(n) - at);
                    if (!channel->feed(buffer.data() + at, slice)) {
                        terminate("out of memory");
                        return;
                    }
                    if (!read_tls()) {
                        return;
                    }
                }
            } else {
                consume(buffer.data(), static_cast<std::size_t>(n));
            }
            if (static_cast<std::size_t>(n) < buffer.size() && !peer_hung_up_) {
                exhausted = false;  // a short read: the kernel had no more (EAGAIN would follow)
                break;
            }
            // After a hang-up a short read may be followed by the end of the stream rather than
            // EAGAIN, and no further event would announce it: when the client's last bytes and
            // its FIN arrived together, stopping here left the connection (and its user name)
            // open until a timeout. So read on until recv() says 0 or EAGAIN.
            continue;
        }
        if (n == 0) {
            terminate(phase_ == phase::open ? "peer closed without close frame" : "closed");
            return;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            exhausted = false;
            break;
        }
        terminate("read error");
        return;
    }
    if (phase_ != phase::closed && exhausted) {
        // Edge-triggered: no new event comes for bytes already waiting, so come back for them
        // once the other connections of this worker had their turn.
        asio::post(worker_.io(), [self = connection_ptr(this)] {
            if (self->phase_ != phase::closed) {
                self->on_readable();
            }
        });
    }
}

void ws_connection::consume(char* data, std::size_t size) {
    if (phase_ == phase::closed) {
        return;
    }
    // Read per call, so a reload that changes the limit applies from the next message on.
    parser_.set_max_message(worker_.chat().settings().max_message_bytes);
    protocol::parse_result result = parser_.feed(data, size, *this);
    if (result.ok || phase_ != phase::open) {
        // While closing, frames are parsed only to see the client's close frame; a client that
        // sends garbage after our close frame gets nothing more.
        return;
    }
    spdlog::debug("{}", fields("protocol error")
                            .add("code", static_cast<int>(result.code))
                            .add("reason", result.reason)
                            .add("conn", fmt::format("c{}.{}", worker_.index(), chat_.handle().session)));
    // The close waits for the tasks already queued on this worker: a say just before the
    // violation may have its copy for this very connection among them (a room's delivery that
    // queued behind an earlier broadcast still waiting here), and what was accepted goes out
    // before the close frame. The parser has stopped, so nothing after the violation is read
    // meanwhile (a later feed() gives the same error and posts a close that finds us closing).
    asio::post(worker_.io(), [self = connection_ptr(this), code = result.code, reason = result.reason] {
        self->start_close(code, reason);
    });
}

bool ws_connection::read_tls() {
    tls_channel& channel = *tls();
    std::vector<char>& plain = worker_.tls_plaintext();
    for (;;) {
        std::size_t size = 0;
        switch (channel.read(plain.data(), plain.size(), size)) {
        case tls_channel::status::data:
            consume(plain.data(), size);
            if (phase_ == phase::closed) {
                return false;
            }
            continue;
        case tls_channel::status::need_input:
            if (channel.has_output()) {
                request_flush();  // TLS's own messages (a key update's answer)
            }
            return true;
        case tls_channel::status::closed:
            terminate(phase_ == phase::open ? "peer closed without close frame" : "closed");
            return false;
        case tls_channel::status::failed:
            spdlog::debug("[c{}.{}] TLS error: {}", worker_.index(), chat_.handle().session, channel.reason());
            terminate("TLS error");
            return false;
        }
    }
}

void ws_connection::on_text(std::string_view message) {
    if (phase_ == phase::open) {
        chat_.on_text(message);
    }
}

void ws_connection::on_ping(std::string_view payload) {
    if (phase_ == phase::open) {
        queue_control(shared_frame::copy_of(protocol::encode_frame(protocol::opcode::pong, payload)));
    }
}

void ws_connection::on_pong(std::string_view) {}

void ws_connection::on_close(std::uint16_t code, std::string_view) {
    if (phase_ != phase::open) {
        // The answer to our own close frame: the handshake is complete once ours is out too,
        // and then the server closes TCP first (RFC 6455 7.1.1).
        peer_closed_ = true;
        if (phase_ == phase::draining) {
            terminate("closed");
        }
        return;
    }
    // Echo the client's status (RFC 6455 5.5.1); an empty close is answered with an empty close.
    std::string frame = code == 1005 ? protocol::encode_frame(protocol::opcode::close, {})
                                     : protocol::encode_close(static_cast<close_code>(code));
    phase_ = phase::closing;
    peer_closed_ = true;
    close_queued_ = true;
    queue_control(shared_frame::copy_of(frame));
    arm_close_timer(close_linger);
    closing()->code = code;
    closing()->reason = "closed by client";
    asio::post(worker_.io(), [self = connection_ptr(this)] { self->chat_.end(true); });
}

void ws_connection::send(const shared_frame& frame) {
    if (phase_ != phase::open) {
        return;
    }
    std::size_t limit = worker_.chat().settings().write_queue_limit_bytes;
    if (queue_.bytes() + frame.size() > limit) {
        spdlog::info("{}", fields("slow consumer closed")
                               .add("peer", slot_.peer().text())
                               .add("user", chat_.user())
                               .add("queued_bytes", queue_.bytes())
                               .add("limit", limit)
                               .add("conn", fmt::format("c{}.{}", worker_.index(), chat_.handle().session)));
        worker_.chat().counters().slow_consumer_closes.add();
        std::size_t before = queue_.bytes();
        queue_.drop_unstarted();
        queue_bytes_changed(before);
        start_close(close_code::policy_violation, "slow consumer");
        return;
    }
    if (deflate_window_bits_ != 0) {
        push_frame(protocol::frame_for_deflate(frame, worker_.chat().settings().compression_min_bytes,
                                               deflate_window_bits_));
        return;
    }
    push_frame(frame);
}

void ws_connection::queue_control(const shared_frame& frame) { push_frame(frame); }

void ws_connection::push_frame(const shared_frame& frame) {
    queue_.push(frame, worker_.frame_pool());
    worker_.chat().counters().write_queue_bytes.add(frame.size());
    request_flush();
}

void ws_connection::request_flush() {
    if (!flush_scheduled_ && !write_waiting_) {
        flush_scheduled_ = true;
        worker_.schedule_flush(connection_ptr(this));
    }
}

// Keeps the worker's queued-bytes gauge in step after the queue shrank from `before` bytes.
void ws_connection::queue_bytes_changed(std::size_t before) {
    worker_.chat().counters().write_queue_bytes.sub(before - queue_.bytes());
}

void ws_connection::check_timeouts(std::uint64_t now_ms) {
    if (phase_ != phase::open) {
        return;
    }
    queue_.release_if_idle();
    if (tls_channel* channel = tls()) {
        channel->release_idle_buffers();
    }
    const auto& s = worker_.chat().settings();
    auto& counters = worker_.chat().counters();
    if (s.login_timeout_ms != 0 && !chat_.logged_in() && now_ms >= opened_ms_ + s.login_timeout_ms) {
        counters.idle_closes.add();
        start_close(close_code::policy_violation, "login timeout");
        return;
    }
    std::uint64_t silent = now_ms - last_rx_ms_;
    if (s.idle_timeout_ms != 0 && silent >= s.idle_timeout_ms) {
        counters.idle_closes.add();
        start_close(close_code::going_away, "idle timeout");
        return;
    }
    if (s.ping_interval_ms != 0 && silent >= s.ping_interval_ms && !ping_outstanding_) {
        // Browsers answer pings by themselves: a live but quiet client stays connected, a dead
        // one (no pong, no bytes) reaches the idle timeout.
        ping_outstanding_ = true;
        queue_control(worker_.ping_frame());
    }
}

void ws_connection::close(close_code code, std::string_view reason) { start_close(code, reason); }

void ws_connection::start_close(close_code code, std::string_view reason) {
    if (phase_ != phase::open) {
        return;
    }
    phase_ = phase::closing;
    close_queued_ = true;
    queue_control(shared_frame::copy_of(protocol::encode_close(code, reason)));
    arm_close_timer(close_linger);
    closing()->code = static_cast<std::uint16_t>(code);
    closing()->reason = reason;
    // Leave rooms from a task of our own: this may run inside a room's delivery loop or inside
    // the chat logic's own handler.
    asio::post(worker_.io(), [self = connection_ptr(this)] { self->chat_.end(true); });
}

std::size_t ws_connection::gather(iovec* iov, std::size_t& total) {
    std::size_t count = 0;  // iovec entries used
    total = 0;
    // Small frames are copied into the worker's staging buffer and leave as one piece: the
    // kernel copies each iovec entry with a user-copy of its own, and for frames of a few
    // hundred bytes that per-entry cost exceeds a memcpy (measured: the kernel's copy per
    // delivered message fell from 39 to 9 ns in 100 rooms of 10). Larger frames are
    // referenced where they are.
    std::vector<char>& staging = worker_.send_staging();
    std::size_t staged = 0;
    bool last_is_staged = false;
    for (std::size_t i = 0; i < queue_.size() && count < max_iov; ++i) {
        const shared_frame& f = queue_.at(i);
        std::size_t skip = i == 0 ? queue_.front_offset() : 0;
        const char* bytes = f.data() + skip;
        std::size_t size = f.size() - skip;
        if (size <= staged_frame_limit && staged + size <= staging.size()) {
            copy_frame_bytes(staging.data() + staged, bytes, size);
            if (last_is_staged) {
                iov[count - 1].iov_len += size;
            } else {
                iov[count].iov_base = staging.data() + staged;
                iov[count].iov_len = size;
                ++count;
                last_is_staged = true;
            }
            staged += size;
        } else {
            iov[count].iov_base = const_cast<char*>(bytes);
            iov[count].iov_len = size;
            ++count;
            last_is_staged = false;
        }
        total += size;
    }
    return count;
}

void ws_connection::flush() {
    flush_scheduled_ = false;
    if (phase_ == phase::closed || write_waiting_) {
        return;
    }
    if (tls() != nullptr) {
        flush_tls();
        return;
    }
    while (!queue_.empty()) {
        iovec iov[max_iov];
        std::size_t total = 0;
        std::size_t count = gather(iov, total);
        ssize_t n;
        if (count == 1) {
            n = ::send(fd_, iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL);
        } else {
            msghdr msg{};
            msg.msg_iov = iov;
            msg.msg_iovlen = count;
            n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
        }
        if (n >= 0) {
            auto& counters = worker_.chat().counters();
            counters.bytes_sent.add(static_cast<std::uint64_t>(n));
            counters.write_queue_bytes.sub(static_cast<std::uint64_t>(n));
            counters.frames_sent.add(queue_.consume(static_cast<std::size_t>(n)));
            if (static_cast<std::size_t>(n) < total) {
                wait_writable();  // the socket buffer is full
                return;
            }
            continue;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            wait_writable();
            return;
        }
        terminate("write error");
        return;
    }
    if (close_queued_ && phase_ == phase::closing) {
        after_close_sent();
    }
}

void ws_connection::flush_tls() {
    tls_channel& channel = *tls();
    // Ciphertext the socket did not take last time goes first: records stay in order.
    if (!send_tls_output()) {
        return;
    }
    auto& counters = worker_.chat().counters();
    while (!queue_.empty()) {
        iovec iov[max_iov];
        std::size_t total = 0;
        std::size_t count = gather(iov, total);
        // The staged small frames are one piece, so they share records; each larger frame is
        // encrypted where it is. The channel takes everything (its output is memory).
        for (std::size_t i = 0; i < count; ++i) {
            if (!channel.write(static_cast<const char*>(iov[i].iov_base), iov[i].iov_len)) {
                spdlog::debug("[c{}.{}] TLS error: {}", worker_.index(), chat_.handle().session, channel.reason());
                terminate("TLS error");
                return;
            }
        }
        // Once encrypted the frames belong to the TLS stream; what the socket does not take
        // now waits as ciphertext, and nothing more is encrypted until it has gone.
        counters.write_queue_bytes.sub(total);
        counters.frames_sent.add(queue_.consume(total));
        if (!send_tls_output()) {
            return;
        }
    }
    if (close_queued_ && phase_ == phase::closing) {
        after_close_sent();
    }
}

bool ws_connection::send_tls_output() {
    tls_channel& channel = *tls();
    while (channel.has_output()) {
        std::string_view out = channel.output();
        ssize_t n = ::send(fd_, out.data(), out.size(), MSG_NOSIGNAL);
        if (n >= 0) {
            worker_.chat().counters().bytes_sent.add(static_cast<std::uint64_t>(n));
            channel.consume_output(static_cast<std::size_t>(n));
            continue;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            wait_writable();
            return false;
        }
        terminate("write error");
        return false;
    }
    return true;
}

void ws_connection::wait_writable() {
    // The kernel reports EPOLLOUT once the socket buffer drains (on_poll resumes the flush).
    write_waiting_ = true;
}

void ws_connection::after_close_sent() {
    if (tls_channel* channel = tls()) {
        // A close_notify behind our close frame, so the client sees TLS end on purpose rather
        // than truncated. Best effort: one non-blocking send of a 24-byte alert.
        channel->close_notify();
        std::string_view out = channel->output();
        ssize_t n = ::send(fd_, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        channel->consume_output(n > 0 ? static_cast<std::size_t>(n) : 0);
    }
    if (peer_closed_) {
        // Both close frames are exchanged: the server closes the TCP connection (RFC 6455 7.1.1).
        terminate("closed");
        return;
    }
    // Our close is out; half-close and wait for the client's close or EOF, reading and
    // discarding meanwhile, so our frame is not lost to a reset.
    phase_ = phase::draining;
    ::shutdown(fd_, SHUT_WR);
}

void ws_connection::arm_close_timer(std::chrono::milliseconds after) {
    if (!side_) {
        side_ = std::make_unique<side_state>();
    }
    if (!side_->closing) {
        side_->closing.emplace(worker_.io());
    }
    side_->closing->timer.expires_after(after);
    side_->closing->timer.async_wait([self = connection_ptr(this)](boost::system::error_code ec) {
        if (!ec) {
            self->terminate("close timeout");
        }
    });
}

void ws_connection::terminate(const char* why) {
    if (phase_ == phase::closed) {
        return;
    }
    phase_ = phase::closed;
    const std::uint64_t duration_ms = worker_.precise_ms() - opened_ms_;
    // One line per connection, written when it ends (like an access log): who, how long, why.
    const std::string id = fmt::format("c{}.{}", worker_.index(), chat_.handle().session);
    const std::string peer = slot_.peer().text();
    log_connection_closed({.connection = id,
                           .peer = peer,
                           .user = chat_.user(),
                           .duration_ms = duration_ms,
                           .close_code = closing() ? closing()->code : std::uint16_t{0},
                           .reason = closing() ? std::string_view(closing()->reason) : std::string_view(why)});
    if (closing() != nullptr) {
        closing()->timer.cancel();
    }
    ::close(fd_);  // also leaves the worker's epoll set
    fd_ = -1;
    std::size_t before = queue_.bytes();
    queue_.clear();
    queue_bytes_changed(before);
    worker_.chat().counters().connections_open.sub();
    chat_.end(true);
    worker_.detach(this);
    slot_.release();
}

}  // namespace parley::server
