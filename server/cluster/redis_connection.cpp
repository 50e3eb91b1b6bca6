#include "server/cluster/redis_connection.hpp"

#include "rooms/cluster/resp_protocol.hpp"
#include "server/cluster/redis_session.hpp"
#include "server/logging.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <exception>
#include <utility>

namespace parley::cluster {

namespace {

using clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// While down: a warning on the first failed attempt, then at most one per this interval.
constexpr auto warning_interval = 30s;
// Bytes asked of the socket per read, at least.
constexpr std::size_t read_chunk = 16 * 1024;

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
        return lower(x) == lower(y);
    });
}

// These change what Redis sends back (per channel, or for every later reply), which would
// break the one-callback-per-reply order command() relies on.
bool changes_reply_mode(std::string_view name) {
    static constexpr std::array<std::string_view, 7> names = {
        "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe", "monitor"};
    return std::any_of(names.begin(), names.end(),
                       [name](std::string_view n) { return equals_ignoring_case(name, n); });
}

long long millis(clock::duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

// TCP keepalive (15 s idle, then 3 probes 5 s apart): a subscriber sends nothing once up, so
// only keepalive notices a peer that vanished without a reset. Best effort.
void enable_keepalive(boost::asio::ip::tcp::socket& socket) {
    boost::system::error_code ignored;
    socket.set_option(boost::asio::socket_base::keep_alive(true), ignored);
    socket.set_option(boost::asio::ip::tcp::no_delay(true), ignored);
    const int fd = socket.native_handle();
    const int idle = 15, interval = 5, count = 3;
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

}  // namespace

std::shared_ptr<redis_connection> redis_connection::create(boost::asio::any_io_executor executor, options opts,
                                                           std::string name) {
    return std::make_shared<redis_connection>(private_tag{}, std::move(executor), std::move(opts), std::move(name));
}

redis_connection::redis_connection(private_tag, boost::asio::any_io_executor executor, options opts, std::string name)
    : executor_(std::move(executor)),
      options_(std::move(opts)),
      name_(std::move(name)),
      resolver_(executor_),
      connect_timer_(executor_),
      retry_timer_(executor_),
      command_timer_(executor_),
      random_(std::random_device{}()) {
    // Zero or negative durations would make the backoff spin or the timeout fire at once.
    options_.backoff_initial = std::max(options_.backoff_initial, std::chrono::milliseconds(1));
    options_.backoff_max = std::max(options_.backoff_max, options_.backoff_initial);
    options_.connect_timeout = std::max(options_.connect_timeout, std::chrono::milliseconds(1));
    options_.command_timeout = std::max(options_.command_timeout, std::chrono::milliseconds(0));
    backoff_step_ = options_.backoff_initial;
    const bool ipv6 = options_.host.find(':') != std::string::npos;
    address_ = (ipv6 ? "[" + options_.host + "]" : options_.host) + ":" + std::to_string(options_.port);
}

redis_connection::~redis_connection() {
    state_ = state::stopped;
    close_session(false);
}

void redis_connection::start() {
    if (state_ != state::idle) {
        return;
    }
    down_since_ = clock::now();
    begin_attempt();
}

void redis_connection::stop() {
    if (state_ == state::stopped) {
        return;
    }
    const bool was_up = state_ == state::up;
    state_ = state::stopped;
    ++attempt_;  // handlers of the resolver and timers already queued see they are stale
    connect_timer_.cancel();
    retry_timer_.cancel();
    command_timer_.cancel();
    resolver_.cancel();
    close_session(true);
    if (was_up) {
        spdlog::info("{}", server::fields("redis connection closed").add("name", name_).add("addr", address_));
    }
    if (!ready_.empty() && !delivering_) {
        boost::asio::post(executor_, [self = shared_from_this()] { self->deliver(); });
    }
}

bool redis_connection::command(std::initializer_list<std::string_view> argv, redis_callback cb) {
    return command(std::span<const std::string_view>(argv.begin(), argv.size()), std::move(cb));
}

void redis_connection::refuse(redis_callback cb) {
    // Answered like a command lost with the connection, from a handler of its own: the caller
    // never sees its callback run inside command().
    ready_.push_back(event{event::kind::reply, std::move(cb), std::nullopt});
    if (!delivering_) {
        boost::asio::post(executor_, [self = shared_from_this()] { self->deliver(); });
    }
}

bool redis_connection::command(std::span<const std::string_view> argv, redis_callback cb) {
    if (state_ != state::up || subscriber_ || !session_ || argv.empty() || changes_reply_mode(argv.front())) {
        refuse(std::move(cb));
        return false;
    }
    resp::append_command(session_->out, argv);
    session_->expected.push_back(expected_reply{expected_reply::kind::command, std::move(cb), clock::now()});
    queue_write(*session_);
    if (options_.command_timeout.count() > 0 && !command_timer_armed_) {
        arm_command_timer(session_->expected.front().sent + options_.command_timeout);
    }
    return true;
}

void redis_connection::begin_attempt() {
    ++attempt_;
    ++attempts_total_;
    state_ = state::connecting;
    // Armed first: whatever happens to the attempt, this timer ends it.
    connect_timer_.expires_after(options_.connect_timeout);
    connect_timer_.async_wait([weak = weak_from_this(), attempt = attempt_](const boost::system::error_code& ec) {
        auto self = weak.lock();
        if (ec || !self || self->attempt_ != attempt || self->state_ != state::connecting) {
            return;
        }
        try {
            self->session_failed("no answer within " + std::to_string(self->options_.connect_timeout.count()) + " ms");
        } catch (...) {
        }
        self->deliver();
    });

    boost::system::error_code ec;
    const boost::asio::ip::address address = boost::asio::ip::make_address(options_.host, ec);
    if (!ec) {
        open_socket(boost::asio::ip::tcp::endpoint(address, options_.port));
        return;
    }
    // A name: getaddrinfo would block the loop, so Asio's resolver runs it off this thread.
    resolver_.async_resolve(
        options_.host, std::to_string(options_.port),
        [weak = weak_from_this(), attempt = attempt_](const boost::system::error_code& error,
                                                       const boost::asio::ip::tcp::resolver::results_type& results) {
            auto self = weak.lock();
            if (!self || self->attempt_ != attempt || self->state_ != state::connecting) {
                return;
            }
            try {
                if (error || results.empty()) {
                    self->attempt_failed("cannot resolve " + self->options_.host + ": " +
                                         (error ? error.message() : std::string("no address")));
                    return;
                }
                // IPv4 first when a name has both (a Redis bound to 127.0.0.1 behind "localhost").
                auto chosen = results.begin();
                for (auto it = results.begin(); it != results.end(); ++it) {
                    if (it->endpoint().address().is_v4()) {
                        chosen = it;
                        break;
                    }
                }
                self->open_socket(chosen->endpoint());
            } catch (const std::exception& e) {
                spdlog::error("{}", server::fields("redis connect attempt failed")
                                        .add("name", self->name_)
                                        .add("error", e.what()));
            }
        });
}

void redis_connection::open_socket(const boost::asio::ip::tcp::endpoint& endpoint) {
    auto s = std::make_shared<session>(executor_);
    session_ = s;
    s->socket.async_connect(endpoint, [weak = weak_from_this(), s](const boost::system::error_code& ec) {
        auto self = weak.lock();
        if (!self || self->session_ != s || self->state_ != state::connecting) {
            return;
        }
        try {
            if (ec) {
                self->session_failed(ec.message());
            } else {
                self->on_connected(s);
            }
        } catch (const std::exception& e) {
            self->session_failed(e.what());
        }
        self->deliver();
    });
}

void redis_connection::on_connected(const std::shared_ptr<session>& s) {
    s->tcp_connected = true;
    enable_keepalive(s->socket);
    if (!options_.password.empty()) {
        const std::array<std::string_view, 2> auth = {"AUTH", options_.password};
        resp::append_command(s->out, auth);
        s->expected.push_back({expected_reply::kind::auth, {}, clock::now()});
    }
    if (subscriber_ && !channels_.empty()) {
        send_subscribe(*s, channels_, true);
    } else {
        const std::array<std::string_view, 1> ping = {"PING"};
        resp::append_command(s->out, ping);
        s->expected.push_back({expected_reply::kind::ping, {}, clock::now()});
        s->pong_pending = true;
    }
    s->handshake_sent = true;
    write_now(s);
    start_read(s);
}

void redis_connection::queue_write(session& s) {
    // Written from a handler of its own: commands given in this pass of the loop go together.
    if (s.write_active || s.flush_posted || s.out.empty()) {
        return;
    }
    s.flush_posted = true;
    boost::asio::post(executor_, [weak = weak_from_this(), s = session_] {
        s->flush_posted = false;
        if (auto self = weak.lock(); self && self->session_ == s) {
            self->write_now(s);
            self->deliver();
        }
    });
}

void redis_connection::write_now(const std::shared_ptr<session>& s) {
    if (s->write_active || s->out.empty()) {
        return;
    }
    s->writing.swap(s->out);
    s->out.clear();
    s->write_active = true;
    boost::asio::async_write(s->socket, boost::asio::buffer(s->writing),
                             [weak = weak_from_this(), s](const boost::system::error_code& ec, std::size_t) {
                                 s->write_active = false;
                                 s->writing.clear();
                                 auto self = weak.lock();
                                 if (!self || self->session_ != s) {
                                     return;
                                 }
                                 try {
                                     if (ec) {
                                         self->session_failed("write failed: " + ec.message());
                                     } else {
                                         self->write_now(s);
                                     }
                                 } catch (const std::exception& e) {
                                     self->session_failed(e.what());
                                 }
                                 self->deliver();
                             });
}

void redis_connection::start_read(const std::shared_ptr<session>& s) {
    if (s->in.size() - s->filled < read_chunk) {
        if (s->start > 0) {
            // Keep only what is not consumed yet, at the front.
            std::copy(s->in.begin() + static_cast<std::ptrdiff_t>(s->start),
                      s->in.begin() + static_cast<std::ptrdiff_t>(s->filled), s->in.begin());
            s->filled -= s->start;
            s->start = 0;
        }
        if (s->in.size() - s->filled < read_chunk) {
            s->in.resize(std::max(s->in.size() * 2, s->filled + read_chunk));
        }
    }
    s->socket.async_read_some(
        boost::asio::buffer(s->in.data() + s->filled, s->in.size() - s->filled),
        [weak = weak_from_this(), s](const boost::system::error_code& ec, std::size_t n) {
            auto self = weak.lock();
            if (!self || self->session_ != s) {
                return;
            }
            try {
                if (ec) {
                    self->session_failed(ec == boost::asio::error::eof ? "connection closed" : ec.message());
                } else {
                    s->filled += n;
                    self->consume(s);
                    if (self->session_ == s) {
                        self->start_read(s);
                    }
                }
            } catch (const std::exception& e) {
                if (self->session_ == s) {
                    self->session_failed(e.what());
                }
            }
            self->deliver();
        });
}

void redis_connection::became_up() {
    connect_timer_.cancel();
    state_ = state::up;
    backoff_step_ = options_.backoff_initial;
    const auto now = clock::now();
    if (failures_ > 0) {
        spdlog::info("{}", server::fields("redis connected")
                               .add("name", name_)
                               .add("addr", address_)
                               .add("failed_attempts", failures_)
                               .add("down_ms", millis(now - down_since_)));
    } else {
        spdlog::info("{}", server::fields("redis connected").add("name", name_).add("addr", address_));
    }
    failures_ = 0;
    event e;
    e.type = event::kind::up;
    ready_.push_back(std::move(e));
}

void redis_connection::session_failed(std::string reason) {
    const state was = state_;
    close_session(true);
    if (was == state::up) {
        spdlog::info("{}", server::fields("redis connection lost")
                               .add("name", name_)
                               .add("addr", address_)
                               .add("reason", reason));
        down_since_ = clock::now();
        failures_ = 0;
        event e;
        e.type = event::kind::down;
        ready_.push_back(std::move(e));
        backoff_step_ = options_.backoff_initial;
        schedule_retry();
    } else if (was == state::connecting) {
        resolver_.cancel();
        attempt_failed(reason);
    }
}

void redis_connection::attempt_failed(const std::string& reason) {
    connect_timer_.cancel();
    ++failures_;
    const auto now = clock::now();
    if (failures_ == 1) {
        spdlog::warn("{}", server::fields("redis connect failed, retrying")
                               .add("name", name_)
                               .add("addr", address_)
                               .add("reason", reason));
        last_warning_ = now;
    } else if (now - last_warning_ >= warning_interval) {
        spdlog::warn("{}", server::fields("redis still unreachable, retrying")
                               .add("name", name_)
                               .add("addr", address_)
                               .add("reason", reason)
                               .add("failed_attempts", failures_)
                               .add("down_ms", millis(now - down_since_)));
        last_warning_ = now;
    } else {
        spdlog::debug("{}", server::fields("redis connect failed")
                                .add("name", name_)
                                .add("addr", address_)
                                .add("reason", reason)
                                .add("failed_attempts", failures_));
    }
    schedule_retry();
}

void redis_connection::schedule_retry() {
    state_ = state::waiting;
    const std::chrono::milliseconds step = backoff_step_;
    std::uniform_int_distribution<std::chrono::milliseconds::rep> pick(step.count() / 2, step.count());
    const std::chrono::milliseconds delay(pick(random_));
    backoff_step_ = std::min(step * 2, options_.backoff_max);
    retry_timer_.expires_after(delay);
    retry_timer_.async_wait([weak = weak_from_this(), attempt = attempt_](const boost::system::error_code& ec) {
        auto self = weak.lock();
        if (ec || !self || self->attempt_ != attempt || self->state_ != state::waiting) {
            return;
        }
        try {
            self->begin_attempt();
        } catch (const std::exception& e) {
            // begin_attempt arms the connect timer first, which then ends the attempt; if even
            // that failed, nothing would retry: try once more from here.
            spdlog::error("{}", server::fields("redis connect attempt failed")
                                    .add("name", self->name_)
                                    .add("error", e.what()));
            if (self->state_ == state::connecting && !self->session_) {
                try {
                    self->attempt_failed(e.what());
                } catch (...) {
                }
            }
        }
        self->deliver();
    });
}

void redis_connection::close_session(bool answer_pending) noexcept {
    if (!session_) {
        return;
    }
    // Detached first: handlers still queued for it see they are stale. They hold the session,
    // so the buffers of an operation the close cancels live until its handler has run.
    std::shared_ptr<session> s = std::move(session_);
    boost::system::error_code ignored;
    s->socket.close(ignored);
    if (!answer_pending) {
        return;
    }
    try {
        for (expected_reply& e : s->expected) {
            if (e.type == expected_reply::kind::command) {
                ready_.push_back(event{event::kind::reply, std::move(e.callback), std::nullopt});
            }
        }
    } catch (...) {
        // Out of memory: the rest of the answers are lost with the connection.
    }
    s->expected.clear();
}

void redis_connection::arm_command_timer(clock::time_point deadline) {
    try {
        command_timer_.expires_at(deadline);
        command_timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
            auto self = weak.lock();
            if (!self) {
                return;
            }
            self->command_timer_armed_ = false;
            if (ec) {
                return;
            }
            try {
                self->check_command_timeout();
            } catch (...) {
            }
            self->deliver();
        });
        command_timer_armed_ = true;
    } catch (...) {
        // Out of memory: no watch for now; the next command tries again.
    }
}

void redis_connection::check_command_timeout() {
    if (state_ != state::up || !session_ || session_->expected.empty()) {
        return;
    }
    // One timer for all commands, re-aimed at the oldest pending one: replies pop the queue
    // without touching the timer.
    const clock::time_point deadline = session_->expected.front().sent + options_.command_timeout;
    if (clock::now() >= deadline) {
        session_failed("no reply within " + std::to_string(options_.command_timeout.count()) + " ms");
        return;
    }
    arm_command_timer(deadline);
}

void redis_connection::deliver() noexcept {
    if (delivering_) {
        return;  // a callback's own call: the loop below picks up what it added
    }
    delivering_ = true;
    // A callback may drop the last reference to this connection.
    const std::shared_ptr<redis_connection> keep = weak_from_this().lock();
    while (!ready_.empty()) {
        event e = std::move(ready_.front());
        ready_.pop_front();
        try {
            switch (e.type) {
            case event::kind::reply:
                if (e.callback) {
                    e.callback(std::move(e.reply));
                }
                break;
            case event::kind::up:
                if (state_ != state::stopped && on_up_) {
                    const std::function<void()> f = on_up_;  // a copy: f may replace on_up_
                    f();
                }
                break;
            case event::kind::down:
                if (state_ != state::stopped && on_down_) {
                    const std::function<void()> f = on_down_;
                    f();
                }
                break;
            }
        } catch (const std::exception& ex) {
            spdlog::error("{}", server::fields("redis callback threw").add("name", name_).add("error", ex.what()));
        } catch (...) {
            spdlog::error("{}", server::fields("redis callback threw").add("name", name_));
        }
    }
    delivering_ = false;
}

}  // namespace parley::cluster
