#include "server/cluster/redis_connection.hpp"

#include "server/cluster/redis_asio_adapter.hpp"
#include "server/cluster/redis_session.hpp"
#include "server/logging.hpp"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/container/small_vector.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <climits>
#include <exception>
#include <utility>

namespace parley::cluster {

namespace {

using detail::clock;
using detail::equals_ignoring_case;
using namespace std::chrono_literals;

// While down: a warning on the first failed attempt, then at most one per this interval.
constexpr auto warning_interval = 30s;

// hiredis files the callbacks of these apart from its reply queue (per channel, or for every
// later reply), which would break the one-callback-per-reply order command() relies on.
bool changes_reply_mode(std::string_view name) {
    static constexpr std::array<std::string_view, 7> names = {
        "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe", "monitor"};
    return std::any_of(names.begin(), names.end(),
                       [name](std::string_view n) { return equals_ignoring_case(name, n); });
}

long long millis(clock::duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

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
    if (session_) {
        session_->owner = nullptr;
    }
    close_session();
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
    close_session();
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
    ready_.push_back(event{event::kind::reply, std::move(cb), std::nullopt, {}, {}});
    if (!delivering_) {
        boost::asio::post(executor_, [self = shared_from_this()] { self->deliver(); });
    }
}

bool redis_connection::command(std::span<const std::string_view> argv, redis_callback cb) {
    if (state_ != state::up || subscriber_ || !session_ || argv.empty() || argv.size() > INT_MAX ||
        changes_reply_mode(argv.front())) {
        refuse(std::move(cb));
        return false;
    }
    redisAsyncContext* ac = session_->context();
    if (ac == nullptr) {
        refuse(std::move(cb));
        return false;
    }
    boost::container::small_vector<const char*, 8> args;
    boost::container::small_vector<std::size_t, 8> lengths;
    for (const std::string_view arg : argv) {
        args.push_back(arg.empty() ? "" : arg.data());
        lengths.push_back(arg.size());
    }
    session_->pending.push_back(detail::pending_command{std::move(cb), clock::now()});
    // hiredis copies the arguments into its output buffer; the socket write happens when the
    // descriptor is writable, so commands sent in one handler go out in one write.
    if (redisAsyncCommandArgv(ac, &detail::redis_session::on_reply, session_.get(), static_cast<int>(argv.size()),
                              args.data(), lengths.data()) != REDIS_OK) {
        detail::pending_command lost = std::move(session_->pending.back());
        session_->pending.pop_back();  // hiredis will never answer it
        refuse(std::move(lost.callback));
        return false;
    }
    if (options_.command_timeout.count() > 0 && !command_timer_armed_) {
        arm_command_timer(session_->pending.front().sent + options_.command_timeout);
    }
    return true;
}

void redis_connection::subscribe(std::vector<std::string> channels, message_handler on_message) {
    if (state_ == state::stopped) {
        return;
    }
    subscriber_ = true;
    on_message_ = std::make_shared<const message_handler>(std::move(on_message));
    std::vector<std::string> fresh;
    for (std::string& channel : channels) {
        if (std::find(channels_.begin(), channels_.end(), channel) == channels_.end() &&
            std::find(fresh.begin(), fresh.end(), channel) == fresh.end()) {
            fresh.push_back(std::move(channel));
        }
    }
    if (fresh.empty()) {
        return;
    }
    channels_.insert(channels_.end(), fresh.begin(), fresh.end());
    // Before the handshake the new channels are part of it; after it they go out now (when that
    // fails the context is going away, and the next connection subscribes to them).
    if (session_ && session_->handshake_sent && session_->context() != nullptr) {
        send_subscribe(*session_, fresh);
    }
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
        open_context(address.to_string());
        return;
    }
    // A name: getaddrinfo would block the loop, so Asio's resolver runs it off this thread, and
    // hiredis gets the numeric address.
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
                // hiredis itself prefers IPv4 when a name has both.
                auto chosen = results.begin();
                for (auto it = results.begin(); it != results.end(); ++it) {
                    if (it->endpoint().address().is_v4()) {
                        chosen = it;
                        break;
                    }
                }
                self->open_context(chosen->endpoint().address().to_string());
            } catch (const std::exception& e) {
                spdlog::error("{}", server::fields("redis connect attempt failed")
                                        .add("name", self->name_)
                                        .add("error", e.what()));
            }
        });
}

void redis_connection::open_context(const std::string& address) {
    auto session = std::make_unique<detail::redis_session>();
    session->owner = this;
    // Non-blocking: hiredis starts the connect and returns; a numeric address resolves without
    // any lookup. A refusal on loopback can be reported at once, in ac->err.
    redisAsyncContext* ac = redisAsyncConnect(address.c_str(), options_.port);
    if (ac == nullptr) {
        attempt_failed("cannot allocate a hiredis context");
        return;
    }
    if (ac->err != 0) {
        std::string reason = ac->errstr != nullptr ? ac->errstr : "connect failed";
        redisAsyncFree(ac);
        attempt_failed(reason);
        return;
    }
    std::string error;
    try {
        session->io = detail::hiredis_asio_driver::attach(
            executor_, ac,
            [weak = weak_from_this()](detail::hiredis_asio_driver& driver) noexcept {
                if (auto self = weak.lock()) {
                    self->after_io(driver);
                }
            },
            error);
    } catch (...) {
        redisAsyncFree(ac);
        throw;
    }
    if (!session->io) {
        redisAsyncFree(ac);
        attempt_failed(error);
        return;
    }
    ac->data = session.get();
    session_ = std::move(session);
    // Waits for writability, which is how hiredis learns the connect finished (on_connect).
    redisAsyncSetConnectCallback(ac, &detail::redis_session::on_connect);
}

void redis_connection::after_io(detail::hiredis_asio_driver& driver) noexcept {
    try {
        if (session_ && session_->io.get() == &driver) {
            advance_session();
        }
    } catch (const std::exception& e) {
        spdlog::error("{}", server::fields("redis connection error").add("name", name_).add("error", e.what()));
    } catch (...) {
    }
    deliver();
}

void redis_connection::advance_session() {
    detail::redis_session& session = *session_;
    if (session.context() == nullptr) {
        // hiredis let the context go inside its call: EOF, a read or write error, a refused
        // connect. The answers of its pending commands (nullopt) are already queued.
        session_failed(session.io->error().empty() ? std::string("connection closed") : session.io->error());
        return;
    }
    if (session.tcp_connected && !session.handshake_sent) {
        send_handshake(session);
        if (!session.handshake_sent) {
            session_failed("cannot queue the first command");
            return;
        }
    }
    if (!session.handshake_error.empty()) {
        session_failed("Redis answered " + session.handshake_error);
        return;
    }
    if (state_ == state::connecting && session.handshake_sent && !session.pong_pending && session.unconfirmed == 0) {
        became_up();
    }
}

void redis_connection::send_handshake(detail::redis_session& session) {
    redisAsyncContext* ac = session.context();
    // TCP keepalive (hiredis: 15 s idle, then 3 probes 5 s apart): a subscriber sends nothing
    // once up, so only keepalive notices a peer that vanished without a reset. Best effort.
    redisEnableKeepAlive(&ac->c);
    if (!options_.password.empty() &&
        redisAsyncCommand(ac, &detail::redis_session::on_auth, &session, "AUTH %b", options_.password.data(),
                          options_.password.size()) != REDIS_OK) {
        return;  // handshake not sent: the attempt fails
    }
    if (subscriber_ && !channels_.empty()) {
        session.handshake_sent = send_subscribe(session, channels_);
        return;
    }
    if (redisAsyncCommand(ac, &detail::redis_session::on_pong, &session, "PING") == REDIS_OK) {
        session.pong_pending = true;
        session.handshake_sent = true;
    }
}

bool redis_connection::send_subscribe(detail::redis_session& session, const std::vector<std::string>& channels) {
    std::vector<const char*> args;
    std::vector<std::size_t> lengths;
    args.reserve(channels.size() + 1);
    lengths.reserve(channels.size() + 1);
    args.push_back("SUBSCRIBE");
    lengths.push_back(9);
    for (const std::string& channel : channels) {
        args.push_back(channel.c_str());
        lengths.push_back(channel.size());
    }
    if (redisAsyncCommandArgv(session.context(), &detail::redis_session::on_subscription, &session,
                              static_cast<int>(args.size()), args.data(), lengths.data()) != REDIS_OK) {
        return false;
    }
    session.unconfirmed += channels.size();
    return true;
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
    close_session();
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

void redis_connection::close_session() noexcept {
    if (!session_) {
        return;
    }
    // Detached first: hiredis calls back while freeing (nullopt answers), and nothing may find a
    // half-closed session as the current one.
    std::unique_ptr<detail::redis_session> session = std::move(session_);
    if (redisAsyncContext* ac = session->context()) {
        // Never called with hiredis on the stack (user callbacks run from deliver()), so this
        // frees at once: pending callbacks get NULL, the cleanup hook releases the descriptor,
        // hiredis closes the fd.
        redisAsyncFree(ac);
    }
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
    if (state_ != state::up || !session_ || session_->pending.empty()) {
        return;
    }
    // One timer for all commands, re-aimed at the oldest pending one: replies pop the queue
    // without touching the timer.
    const clock::time_point deadline = session_->pending.front().sent + options_.command_timeout;
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
            case event::kind::message:
                if (state_ != state::stopped && on_message_) {
                    const std::shared_ptr<const message_handler> handler = on_message_;
                    if (*handler) {
                        (*handler)(e.channel, e.payload);
                    }
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
