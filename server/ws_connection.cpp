#include "server/ws_connection.hpp"

#include "protocol/frame_encoder.hpp"
#include "rooms/chat_hub.hpp"
#include "server/worker.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <sys/socket.h>
#include <sys/uio.h>

namespace parley::server {

namespace asio = boost::asio;
using protocol::close_code;
using protocol::shared_frame;

namespace {
// How long a closing connection may take to read our close frame and hang up.
constexpr std::chrono::milliseconds close_linger{3000};
// A gathered write carries at most this many frames (IOV_MAX is 1024 on Linux).
constexpr std::size_t max_iov = 256;
// Reads per readiness event before yielding to other connections of the worker.
constexpr int reads_per_turn = 4;
}  // namespace

ws_connection::ws_connection(asio::ip::tcp::socket socket, worker& owner, rooms::chat_hub& hub)
    : socket_(std::move(socket)),
      worker_(owner),
      parser_(hub.settings().max_message_bytes),
      chat_(hub, owner.chat(), *this),
      queue_limit_(hub.settings().write_queue_limit_bytes) {
    boost::system::error_code ec;
    socket_.non_blocking(true, ec);
    socket_.set_option(asio::ip::tcp::no_delay(true), ec);
    worker_.attach(this);
}

ws_connection::~ws_connection() {
    if (phase_ != phase::closed) {
        worker_.detach(this);
    }
}

void ws_connection::start(std::string leftover) {
    if (spdlog::should_log(spdlog::level::debug)) {
        // The peer address is looked up only for the log: an open connection does not keep it.
        boost::system::error_code ec;
        auto peer = socket_.remote_endpoint(ec);
        spdlog::debug("[c{}.{}] open peer={}:{}", worker_.index(), chat_.handle().session, peer.address().to_string(),
                      peer.port());
    }
    if (!leftover.empty()) {
        consume(leftover.data(), leftover.size());
    }
    if (phase_ != phase::closed) {
        wait_readable();
    }
}

void ws_connection::wait_readable() {
    socket_.async_wait(asio::ip::tcp::socket::wait_read, [self = shared_from_this()](boost::system::error_code ec) {
        if (ec) {
            if (ec != asio::error::operation_aborted) {
                self->terminate("wait error");
            }
            return;
        }
        self->on_readable();
    });
}

void ws_connection::on_readable() {
    auto& buffer = worker_.receive_buffer();
    for (int turn = 0; turn < reads_per_turn && phase_ != phase::closed; ++turn) {
        ssize_t n = ::recv(socket_.native_handle(), buffer.data(), buffer.size(), 0);
        if (n > 0) {
            consume(buffer.data(), static_cast<std::size_t>(n));
            if (static_cast<std::size_t>(n) < buffer.size()) {
                break;  // drained what the kernel had
            }
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
            break;
        }
        terminate("read error");
        return;
    }
    if (phase_ != phase::closed) {
        wait_readable();
    }
}

void ws_connection::consume(char* data, std::size_t size) {
    if (phase_ == phase::closed) {
        return;
    }
    protocol::parse_result result = parser_.feed(data, size, *this);
    if (result.ok || phase_ != phase::open) {
        // While closing, frames are parsed only to see the client's close frame; a client that
        // sends garbage after our close frame gets nothing more.
        return;
    }
    spdlog::debug("[c{}.{}] protocol error code={} reason={}", worker_.index(), chat_.handle().session,
                  static_cast<int>(result.code), result.reason);
    start_close(result.code, result.reason);
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
    asio::post(worker_.io(), [self = shared_from_this()] { self->chat_.end(true); });
}

void ws_connection::send(const shared_frame& frame) {
    if (phase_ != phase::open) {
        return;
    }
    if (queue_.bytes() + frame.size() > queue_limit_) {
        spdlog::info("[c{}.{}] slow consumer closed: {} bytes queued, limit {}", worker_.index(),
                     chat_.handle().session, queue_.bytes(), queue_limit_);
        queue_.drop_unstarted();
        start_close(close_code::policy_violation, "slow consumer");
        return;
    }
    queue_.push(frame);
    if (!flush_scheduled_ && !write_waiting_) {
        flush_scheduled_ = true;
        worker_.schedule_flush(shared_from_this());
    }
}

void ws_connection::queue_control(const shared_frame& frame) {
    queue_.push(frame);
    if (!flush_scheduled_ && !write_waiting_) {
        flush_scheduled_ = true;
        worker_.schedule_flush(shared_from_this());
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
    // Leave rooms from a task of our own: this may run inside a room's delivery loop or inside
    // the chat logic's own handler.
    asio::post(worker_.io(), [self = shared_from_this()] { self->chat_.end(true); });
}

void ws_connection::flush() {
    flush_scheduled_ = false;
    if (phase_ == phase::closed || write_waiting_) {
        return;
    }
    while (!queue_.empty()) {
        iovec iov[max_iov];
        std::size_t count = std::min(queue_.size(), max_iov);
        std::size_t total = 0;
        for (std::size_t i = 0; i < count; ++i) {
            const shared_frame& f = queue_.at(i);
            std::size_t skip = i == 0 ? queue_.front_offset() : 0;
            iov[i].iov_base = const_cast<char*>(f.data() + skip);
            iov[i].iov_len = f.size() - skip;
            total += iov[i].iov_len;
        }
        msghdr msg{};
        msg.msg_iov = iov;
        msg.msg_iovlen = count;
        ssize_t n = ::sendmsg(socket_.native_handle(), &msg, MSG_NOSIGNAL);
        if (n >= 0) {
            queue_.consume(static_cast<std::size_t>(n));
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

void ws_connection::wait_writable() {
    write_waiting_ = true;
    socket_.async_wait(asio::ip::tcp::socket::wait_write, [self = shared_from_this()](boost::system::error_code ec) {
        self->write_waiting_ = false;
        if (ec) {
            if (ec != asio::error::operation_aborted) {
                self->terminate("wait error");
            }
            return;
        }
        self->flush();
    });
}

void ws_connection::after_close_sent() {
    if (peer_closed_) {
        // Both close frames are exchanged: the server closes the TCP connection (RFC 6455 7.1.1).
        terminate("closed");
        return;
    }
    // Our close is out; half-close and wait for the client's close or EOF, reading and
    // discarding meanwhile, so our frame is not lost to a reset.
    phase_ = phase::draining;
    boost::system::error_code ec;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
}

void ws_connection::arm_close_timer(std::chrono::milliseconds after) {
    if (!close_timer_) {
        close_timer_ = std::make_unique<asio::steady_timer>(worker_.io());
    }
    close_timer_->expires_after(after);
    close_timer_->async_wait([self = shared_from_this()](boost::system::error_code ec) {
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
    spdlog::debug("[c{}.{}] close reason=\"{}\" user={}", worker_.index(), chat_.handle().session, why,
                  chat_.user());
    if (close_timer_) {
        close_timer_->cancel();
    }
    boost::system::error_code ec;
    socket_.close(ec);
    queue_.clear();
    chat_.end(true);
    worker_.detach(this);
}

}  // namespace parley::server
