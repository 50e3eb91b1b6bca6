#pragma once

#include "rooms/cluster/redis_link.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace parley::cluster {

// One non-blocking connection to Redis, driven by a single-threaded io_context (a worker's
// loop), speaking RESP2 over an Asio socket (rooms/cluster/resp_protocol.hpp). It connects, and
// after every loss reconnects with jittered exponential backoff until stop().
//
// Threads: every method on the executor's thread (post to it from elsewhere), the destructor
// there too or once that loop has stopped for good; every callback runs on the executor.
// Callbacks are never called from inside a method of this class: replies, messages, on_up and
// on_down run from the loop's own handlers, and the nullopt answers of stop() from a handler it
// posts. A callback may call any method, stop() included, and may drop the last reference to
// the connection.
//
// The connection never blocks the loop: a host that is not a numeric address is resolved with
// Asio's asynchronous resolver, and connect, reads and writes are asynchronous. Commands given in
// one pass of the loop go out in one write (pipelined); a subscriber's messages reach the handler
// as views into the bytes read, with no copy or allocation per message.
//
// "Up" means Redis has answered on this connection: for a command connection a PING got its
// PONG; for a subscriber every channel's SUBSCRIBE is confirmed. A connection that reached TCP
// but gets no such answer within connect_timeout counts as a failed attempt.
class redis_connection : public std::enable_shared_from_this<redis_connection> {
    struct private_tag {};

public:
    struct options {
        std::string host = "127.0.0.1";  // numeric address, or a name resolved without blocking
        std::uint16_t port = 6379;
        // Sent with AUTH before anything else on every connection; empty: none.
        std::string password;
        // First retry delay after a loss or a failed attempt; each further failure doubles the
        // step up to backoff_max. Each wait is drawn uniformly from the upper half of its step
        // [step/2, step], so nodes that lost Redis together do not come back in lockstep.
        std::chrono::milliseconds backoff_initial{100};
        std::chrono::milliseconds backoff_max{5000};
        // Resolve, TCP connect and the first answer (PONG, or every SUBSCRIBE confirmation).
        std::chrono::milliseconds connect_timeout{2000};
        // An up connection whose oldest pending command has waited this long is treated as lost
        // (Redis hung, or the network dropped without a reset): its pending callbacks get
        // nullopt, on_down runs, and it reconnects. 0 turns the check off. Blocking commands
        // (BLPOP and the like) must finish well within it. A subscriber sends no commands once up,
        // so this does not watch it; TCP keepalive (about 30 s) notices a peer that vanished.
        std::chrono::milliseconds command_timeout{5000};
        // Which of a subscriber's channels are sharded channels (SSUBSCRIBE, Redis 7: Redis
        // Cluster delivers them on the server that owns their slot only, and a standalone server
        // keeps them apart from plain ones); the others are plain (SUBSCRIBE). Each sharded
        // channel goes in a command of its own, as Redis Cluster takes one slot per command.
        // Empty: every channel is plain.
        std::function<bool(std::string_view channel)> sharded;
    };
    using message_handler = std::function<void(std::string_view channel, std::string_view payload)>;

    // Thread: any (nothing starts until start()). executor: a single-threaded io_context's.
    // name appears in the log lines.
    static std::shared_ptr<redis_connection> create(boost::asio::any_io_executor executor, options opts,
                                                    std::string name);

    redis_connection(private_tag, boost::asio::any_io_executor executor, options opts, std::string name);
    // Thread: see above. Without a stop() before, the callbacks of commands still pending are
    // destroyed without being called (nothing may run for an owner that is gone).
    ~redis_connection();
    redis_connection(const redis_connection&) = delete;
    redis_connection& operator=(const redis_connection&) = delete;

    // Thread: the executor's. Begins connecting; from then on reconnects after every loss until
    // stop(). Does nothing when already started or stopped (a stopped connection stays stopped:
    // create a new one).
    void start();

    // Thread: the executor's. Closes the connection and cancels any retry. The callbacks of
    // commands still pending get nullopt, from a handler posted to the executor (not inside this
    // call); after that no on_up, on_down or message is called, and command() refuses (its
    // callback gets nullopt, as every refused command's). Idempotent.
    void stop();

    // Thread: the executor's. True while up (set just before on_up is queued, cleared at the loss
    // or stop), which is when command() accepts commands.
    bool connected() const { return state_ == state::up; }

    // Thread: the executor's. f runs each time the connection comes up (see "Up" above); on_down's
    // each time an up connection is lost, after the nullopt answers of its pending commands. Not
    // for failed attempts: on_down only follows an on_up, and the two alternate. Neither runs
    // after stop(). Setting one replaces the previous.
    void on_up(std::function<void()> f) { on_up_ = std::move(f); }
    // Thread: the executor's. f runs for each channel subscribed while the connection is up
    // (subscribe() on an up connection) when Redis confirms it, before any message of that
    // channel. Not for the subscriptions of a (re)connect: on_up covers those.
    void on_subscribed(std::function<void(std::string_view channel)> f) { on_subscribed_ = std::move(f); }
    void on_down(std::function<void()> f) { on_down_ = std::move(f); }
    // Thread: the executor's. f runs when Redis refuses something no command waits for: an error
    // answering a subscription (a Redis Cluster's MOVED for a sharded channel on another server,
    // NOAUTH), or a sharded channel this connection still wants dropped by Redis (its slot moved
    // to another server). The connection itself goes on as before (a refused handshake counts as
    // a failed attempt); the owner decides what the refusal means.
    void on_refusal(std::function<void(std::string_view what)> f) { on_refusal_ = std::move(f); }

    // Thread: the executor's. Sends one command; arguments are binary-safe (argv like {"SET", key,
    // value, "NX", "PX", "5000"}) and copied before this returns. Commands are pipelined and their
    // callbacks called in the order sent. cb runs exactly once (redis_link.hpp's contract), never
    // inside this call: with the reply, or with nullopt when the connection is lost before the
    // answer, and when the command is refused: not connected (or stopped), after subscribe(),
    // an empty argv, or a command that changes the connection's reply mode ((P|S)SUBSCRIBE,
    // (P|S)UNSUBSCRIBE, MONITOR: use subscribe()); then it returns false. The connection speaks
    // RESP2: do not send HELLO 3.
    bool command(std::span<const std::string_view> argv, redis_callback cb);
    bool command(std::initializer_list<std::string_view> argv, redis_callback cb);

    // Thread: the executor's. Makes this a subscriber connection (command() refuses from now on):
    // it SUBSCRIBEs to the channels, and on_message gets every message published on them
    // (channel, payload), on the executor, in Redis's order. Call before start() as a rule; the
    // channels may also grow later: new ones are subscribed at once when connected (messages
    // then arrive from Redis's confirmation on, which nothing reports) and are part of every
    // resubscription. A repeated channel is subscribed once. on_message replaces the previous
    // handler.
    //
    // After every (re)connect the connection subscribes to all its channels again by itself, and
    // on_up runs only after Redis has confirmed every one of them: once on_up has run, every
    // message published from then on arrives (until on_down). With several channels, messages
    // on a channel confirmed before the others may arrive just before on_up; messages published
    // while the connection was down are lost (Redis pub/sub keeps nothing).
    void subscribe(std::vector<std::string> channels, message_handler on_message);
    // Thread: the executor's. Adds channels to a subscriber, keeping its handler.
    void subscribe(std::vector<std::string> channels);
    // Thread: the executor's. Leaves channels (UNSUBSCRIBE at once when connected; left out of
    // every later resubscription). Messages already on their way may still arrive.
    void unsubscribe(const std::vector<std::string>& channels);

    // Thread: the executor's. Connect attempts begun since start(), for tests and metrics.
    std::uint64_t connect_attempts() const { return attempts_total_; }
    const std::string& name() const { return name_; }

private:
    struct session;  // one attempt's socket, buffers and expected replies (redis_connection.cpp)

    enum class state { idle, connecting, up, waiting, stopped };

    // Something for deliver() to call: answers and state changes, queued so that no callback
    // runs inside a method of this class.
    struct event {
        enum class kind { reply, up, down };
        kind type = kind::reply;
        redis_callback callback;           // reply
        std::optional<redis_reply> reply;  // reply
    };

    void begin_attempt();
    void open_socket(const boost::asio::ip::tcp::endpoint& endpoint);
    void on_connected(const std::shared_ptr<session>& s);
    void start_read(const std::shared_ptr<session>& s);
    void consume(const std::shared_ptr<session>& s);
    void handle_reply(session& s, std::string_view bytes);
    void queue_write(session& s);
    void write_now(const std::shared_ptr<session>& s);
    void send_subscribe(session& s, const std::vector<std::string>& channels, bool subscribe);
    void report_refusal(session& s, const std::string& what);
    void became_up();
    void session_failed(std::string reason);
    void attempt_failed(const std::string& reason);
    void schedule_retry();
    void close_session(bool answer_pending) noexcept;
    void arm_command_timer(std::chrono::steady_clock::time_point deadline);
    void check_command_timeout();
    void deliver() noexcept;
    void refuse(redis_callback cb);  // answers a command that was not sent with nullopt

    boost::asio::any_io_executor executor_;
    options options_;
    std::string name_;
    std::string address_;  // host:port, for the log

    state state_ = state::idle;
    std::uint64_t attempt_ = 0;  // which attempt handlers of the resolver and timers belong to
    std::uint64_t attempts_total_ = 0;
    // The socket and buffers of the current attempt or connection; handlers hold it too, so a
    // buffer outlives the operation on it, and a handler whose session is not this one is stale.
    std::shared_ptr<session> session_;

    boost::asio::ip::tcp::resolver resolver_;
    boost::asio::steady_timer connect_timer_;
    boost::asio::steady_timer retry_timer_;
    boost::asio::steady_timer command_timer_;
    bool command_timer_armed_ = false;
    std::chrono::milliseconds backoff_step_;
    std::minstd_rand random_;

    bool subscriber_ = false;
    std::vector<std::string> channels_;
    // Shared so that a handler replaced while it runs (subscribe() from a message) stays alive.
    std::shared_ptr<const message_handler> on_message_;
    std::function<void()> on_up_;
    std::function<void(std::string_view)> on_subscribed_;
    std::function<void()> on_down_;
    std::function<void(std::string_view)> on_refusal_;

    std::deque<event> ready_;
    bool delivering_ = false;

    // Log throttling while down: a warning on the first failed attempt, then one every 30 s.
    std::chrono::steady_clock::time_point down_since_{};
    std::chrono::steady_clock::time_point last_warning_{};
    std::uint64_t failures_ = 0;  // failed attempts since the last up (or start)
};

}  // namespace parley::cluster
