// The Redis client against a real redis-server: replies, pipelining, pub/sub, outages, stop().
// Each test runs the connection's io_context on the test thread, in slices, until a condition
// holds or a generous deadline passes; nothing waits a fixed time and then asserts.

#include "server/cluster/redis_connection.hpp"

#include "redis_process.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using parley::cluster::redis_connection;
using parley::cluster::redis_reply;
using parley::integration::redis_process;
using parley::integration::reserved_port;
using clock_type = std::chrono::steady_clock;

constexpr auto wait_limit = 20s;  // for anything that should take milliseconds

// One command's answer, kept where a late callback cannot reach freed stack memory.
struct answer {
    int calls = 0;
    std::optional<redis_reply> reply;
};

std::string describe(const std::optional<redis_reply>& reply) { return reply ? reply->describe() : "nullopt"; }

// A timer re-armed every 10 ms, recording the longest gap between its runs: a loop blocked by
// something else shows as a long gap. Its handlers hold it, so one that completes after the test
// body ended finds it stopped.
struct loop_ticker : std::enable_shared_from_this<loop_ticker> {
    explicit loop_ticker(boost::asio::io_context& io) : timer(io) {}

    void start() {
        last = clock_type::now();
        arm();
    }
    void stop() {
        stopped = true;
        timer.cancel();
    }
    void arm() {
        timer.expires_after(10ms);
        timer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
            if (ec || self->stopped) {
                return;
            }
            const auto now = clock_type::now();
            self->longest_gap = std::max(self->longest_gap, now - self->last);
            self->last = now;
            ++self->ticks;
            self->arm();
        });
    }

    boost::asio::steady_timer timer;
    bool stopped = false;
    int ticks = 0;
    clock_type::time_point last;
    clock_type::duration longest_gap{};
};

class RedisConnectionTest : public ::testing::Test {
protected:
    // A write to a connection Redis closed must not end the test (parleyd ignores SIGPIPE too).
    static void SetUpTestSuite() { std::signal(SIGPIPE, SIG_IGN); }

    void TearDown() override {
        for (auto& c : connections_) {
            c->stop();
        }
        // Let the posted nullopt answers run while their captures are alive.
        io_.restart();
        io_.poll();
    }

    // Runs the loop until done() or the limit; false on the limit.
    bool run_until(const std::function<bool()>& done, std::chrono::milliseconds limit = wait_limit) {
        const auto deadline = clock_type::now() + limit;
        while (!done()) {
            if (clock_type::now() >= deadline) {
                return false;
            }
            io_.restart();
            if (io_.run_one_for(20ms) == 0 && io_.stopped()) {
                std::this_thread::sleep_for(1ms);  // out of work: do not spin while the condition cannot change
            }
        }
        return true;
    }

    // Fast retries, so outage tests do not wait long; no command timeout unless a test sets one.
    static redis_connection::options options_for(std::uint16_t port) {
        redis_connection::options o;
        o.host = "127.0.0.1";
        o.port = port;
        o.backoff_initial = 20ms;
        o.backoff_max = 200ms;
        o.connect_timeout = 5000ms;
        o.command_timeout = 0ms;
        return o;
    }

    std::shared_ptr<redis_connection> make(redis_connection::options o, std::string name = "test") {
        auto c = redis_connection::create(io_.get_executor(), std::move(o), std::move(name));
        connections_.push_back(c);
        return c;
    }

    // Sends a command that must be refused: command() returns false, the callback does not run
    // inside the call, and then runs exactly once with nullopt (the failure contract).
    void expect_refused(redis_connection& c, std::initializer_list<std::string_view> argv, const char* why) {
        expect_refused(c, std::span<const std::string_view>(argv.begin(), argv.size()), why);
    }
    void expect_refused(redis_connection& c, std::span<const std::string_view> argv, const char* why) {
        auto result = std::make_shared<answer>();
        EXPECT_FALSE(c.command(argv, [result](std::optional<redis_reply> reply) {
            ++result->calls;
            result->reply = std::move(reply);
        })) << why;
        EXPECT_EQ(result->calls, 0) << "the callback ran inside command(): " << why;
        EXPECT_TRUE(run_until([&] { return result->calls > 0; })) << "a refused command was never answered: " << why;
        EXPECT_EQ(result->calls, 1) << why;
        EXPECT_FALSE(result->reply.has_value()) << "a refused command got a reply: " << why;
    }

    // Starts c and waits until it is up.
    void start_and_wait(const std::shared_ptr<redis_connection>& c) {
        c->start();
        ASSERT_TRUE(run_until([&] { return c->connected(); })) << c->name() << " did not connect";
    }

    std::shared_ptr<answer> send(redis_connection& c, std::initializer_list<std::string_view> argv) {
        auto result = std::make_shared<answer>();
        const bool accepted = c.command(argv, [result](std::optional<redis_reply> reply) {
            ++result->calls;
            result->reply = std::move(reply);
        });
        EXPECT_TRUE(accepted) << "command refused: " << *argv.begin();
        return result;
    }

    // Sends one command and waits for its answer.
    std::optional<redis_reply> call(redis_connection& c, std::initializer_list<std::string_view> argv) {
        auto result = send(c, argv);
        EXPECT_TRUE(run_until([&] { return result->calls > 0; })) << "no answer to " << *argv.begin();
        return result->reply;
    }

    boost::asio::io_context io_;
    std::vector<std::shared_ptr<redis_connection>> connections_;
};

TEST_F(RedisConnectionTest, SetThenGetRoundTrip) {
    redis_process redis;
    auto c = make(options_for(redis.port()));
    int ups = 0;
    c->on_up([&] { ++ups; });
    expect_refused(*c, {"PING"}, "accepted before start");
    start_and_wait(c);
    ASSERT_TRUE(run_until([&] { return ups == 1; }));

    auto set = call(*c, {"SET", "greeting", "hello"});
    ASSERT_TRUE(set) << describe(set);
    EXPECT_TRUE(set->is_status());
    EXPECT_EQ(set->text, "OK");
    auto get = call(*c, {"GET", "greeting"});
    ASSERT_TRUE(get);
    EXPECT_TRUE(get->is_string()) << get->describe();
    EXPECT_EQ(get->text, "hello");
    EXPECT_EQ(c->connect_attempts(), 1u);
}

TEST_F(RedisConnectionTest, HostNameIsResolved) {
    redis_process redis;
    auto o = options_for(redis.port());
    o.host = "localhost";
    auto c = make(o);
    start_and_wait(c);
    auto pong = call(*c, {"PING"});
    ASSERT_TRUE(pong);
    EXPECT_EQ(pong->describe(), "+PONG");
}

TEST_F(RedisConnectionTest, PipelinedRepliesComeInOrder) {
    redis_process redis;
    auto c = make(options_for(redis.port()));
    start_and_wait(c);

    constexpr int count = 1000;
    auto values = std::make_shared<std::vector<long long>>();
    auto failures = std::make_shared<int>(0);
    for (int i = 0; i < count; ++i) {
        ASSERT_TRUE(c->command({"INCR", "counter"}, [values, failures](std::optional<redis_reply> reply) {
            if (reply && reply->is_integer()) {
                values->push_back(reply->integer);
            } else {
                ++*failures;
            }
        }));
    }
    ASSERT_TRUE(run_until([&] { return values->size() + *failures == count; }));
    EXPECT_EQ(*failures, 0);
    for (int i = 0; i < count; ++i) {
        ASSERT_EQ((*values)[i], i + 1) << "reply " << i << " out of order";
    }
}

TEST_F(RedisConnectionTest, ArgumentsAndRepliesAreBinarySafe) {
    redis_process redis;
    auto c = make(options_for(redis.port()));
    start_and_wait(c);

    const std::string key("bin\0key\r\n", 9);
    const std::string value("a\0b\r\nc\xff\r\n*3\r\n", 14);
    auto set = call(*c, {"SET", key, value});
    ASSERT_TRUE(set && set->is_status()) << describe(set);
    auto get = call(*c, {"GET", key});
    ASSERT_TRUE(get && get->is_string()) << describe(get);
    EXPECT_EQ(get->text, value);
    auto length = call(*c, {"STRLEN", key});
    ASSERT_TRUE(length && length->is_integer()) << describe(length);
    EXPECT_EQ(length->integer, static_cast<long long>(value.size()));

    // An empty argument is an empty string, not a missing one.
    ASSERT_TRUE(call(*c, {"SET", "empty", ""}));
    auto empty = call(*c, {"GET", "empty"});
    ASSERT_TRUE(empty && empty->is_string()) << describe(empty);
    EXPECT_EQ(empty->text, "");
}

TEST_F(RedisConnectionTest, LargeValuesBothWays) {
    redis_process redis;
    auto c = make(options_for(redis.port()));
    start_and_wait(c);

    // Far beyond one socket buffer and hiredis's 16 KiB reads: partial writes re-arm the write
    // wait, and bytes left in the socket after a read must complete the next read wait.
    std::string big(4 * 1024 * 1024, '\0');
    for (std::size_t i = 0; i < big.size(); ++i) {
        big[i] = static_cast<char>(i * 7919 % 251);
    }
    auto set = call(*c, {"SET", "big", big});
    ASSERT_TRUE(set && set->is_status()) << describe(set);
    std::vector<std::shared_ptr<answer>> gets;
    for (int i = 0; i < 4; ++i) {
        gets.push_back(send(*c, {"GET", "big"}));
    }
    ASSERT_TRUE(run_until([&] { return gets.back()->calls == 1; }));
    for (const auto& get : gets) {
        ASSERT_TRUE(get->reply && get->reply->is_string());
        EXPECT_TRUE(get->reply->text == big) << "a 4 MiB value came back different";
    }

    std::vector<std::string> items;
    for (int i = 0; i < 20000; ++i) {
        items.push_back("item-" + std::to_string(i));
    }
    std::vector<std::string_view> argv = {"RPUSH", "items"};
    argv.insert(argv.end(), items.begin(), items.end());
    auto pushed = std::make_shared<answer>();
    ASSERT_TRUE(c->command(argv, [pushed](std::optional<redis_reply> reply) {
        ++pushed->calls;
        pushed->reply = std::move(reply);
    }));
    auto range = call(*c, {"LRANGE", "items", "0", "-1"});
    ASSERT_EQ(pushed->calls, 1);
    ASSERT_TRUE(pushed->reply && pushed->reply->is_integer()) << describe(pushed->reply);
    EXPECT_EQ(pushed->reply->integer, 20000);
    ASSERT_TRUE(range && range->is_array());
    ASSERT_EQ(range->elements.size(), items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
        ASSERT_EQ(range->elements[i].text, items[i]);
    }
}

TEST_F(RedisConnectionTest, EveryReplyKind) {
    redis_process redis;
    auto c = make(options_for(redis.port()));
    start_and_wait(c);

    auto nil = call(*c, {"GET", "missing"});
    ASSERT_TRUE(nil);
    EXPECT_TRUE(nil->is_nil()) << nil->describe();

    auto integer = call(*c, {"RPUSH", "list", "a", "b", "c"});
    ASSERT_TRUE(integer && integer->is_integer()) << describe(integer);
    EXPECT_EQ(integer->integer, 3);

    auto array = call(*c, {"LRANGE", "list", "0", "-1"});
    ASSERT_TRUE(array && array->is_array()) << describe(array);
    EXPECT_EQ(array->describe(), R"(["a", "b", "c"])");

    auto empty = call(*c, {"LRANGE", "missing", "0", "-1"});
    ASSERT_TRUE(empty && empty->is_array()) << describe(empty);
    EXPECT_TRUE(empty->elements.empty());

    // Nested, with an integer and a nil inside (Lua false is a nil bulk reply).
    auto nested = call(*c, {"EVAL", "return {1, {'x', 'y'}, false}", "0"});
    ASSERT_TRUE(nested) << describe(nested);
    EXPECT_EQ(nested->describe(), R"([1, ["x", "y"], nil])");

    auto status = call(*c, {"PING"});
    ASSERT_TRUE(status);
    EXPECT_TRUE(status->is_status());
    EXPECT_EQ(status->text, "PONG");

    ASSERT_TRUE(call(*c, {"SET", "word", "text"}));
    auto error = call(*c, {"INCR", "word"});
    ASSERT_TRUE(error);
    EXPECT_TRUE(error->is_error()) << error->describe();
    EXPECT_EQ(error->text.rfind("ERR", 0), 0u) << error->text;

    auto unknown = call(*c, {"NOSUCHCOMMAND"});
    ASSERT_TRUE(unknown);
    EXPECT_TRUE(unknown->is_error()) << unknown->describe();

    // An error leaves the connection usable.
    auto after = call(*c, {"GET", "word"});
    ASSERT_TRUE(after);
    EXPECT_EQ(after->text, "text");

    // Refused, and answered nullopt: what would change the connection's reply mode, and nothing.
    expect_refused(*c, {"SUBSCRIBE", "x"}, "SUBSCRIBE");
    expect_refused(*c, {"psubscribe", "x*"}, "psubscribe");
    expect_refused(*c, {"MONITOR"}, "MONITOR");
    expect_refused(*c, std::span<const std::string_view>(), "an empty command");
    EXPECT_TRUE(c->connected());
}

TEST_F(RedisConnectionTest, SubscriberReceivesMessagesOnItsChannelsInOrder) {
    redis_process redis;
    auto sub = make(options_for(redis.port()), "subscriber");
    auto pub = make(options_for(redis.port()), "publisher");
    using message = std::pair<std::string, std::string>;
    auto received = std::make_shared<std::vector<message>>();
    int ups = 0;
    sub->on_up([&] { ++ups; });
    sub->subscribe({"room:a", "room:b", "room:a"}, [received](std::string_view channel, std::string_view payload) {
        received->emplace_back(channel, payload);
    });
    sub->start();
    start_and_wait(pub);
    ASSERT_TRUE(run_until([&] { return ups == 1; }));
    EXPECT_TRUE(sub->connected());
    expect_refused(*sub, {"PING"}, "a subscriber ran a command");

    std::vector<message> expected;
    for (int i = 0; i < 100; ++i) {
        const std::string channel = i % 2 == 0 ? "room:a" : "room:b";
        const std::string payload = "message " + std::to_string(i) + std::string("\0\r\n", 3);
        auto receivers = send(*pub, {"PUBLISH", channel, payload});
        expected.emplace_back(channel, payload);
        if (i % 10 == 0) {
            send(*pub, {"PUBLISH", "room:c", "not subscribed"});
        }
        if (i == 0) {
            ASSERT_TRUE(run_until([&] { return receivers->calls == 1; }));
            ASSERT_TRUE(receivers->reply && receivers->reply->is_integer()) << describe(receivers->reply);
            EXPECT_EQ(receivers->reply->integer, 1) << "one subscriber, subscribed once";
        }
    }
    ASSERT_TRUE(run_until([&] { return received->size() >= expected.size(); }));
    // Whatever else arrived (room:c) would have arrived before the last expected message.
    EXPECT_EQ(*received, expected);
}

TEST_F(RedisConnectionTest, SubscriberKeepsUpWithABurst) {
    redis_process redis;
    auto sub = make(options_for(redis.port()), "subscriber");
    auto pub = make(options_for(redis.port()), "publisher");
    auto received = std::make_shared<std::vector<std::string>>();
    sub->subscribe({"burst"}, [received](std::string_view, std::string_view payload) {
        received->emplace_back(payload);
    });
    start_and_wait(sub);
    start_and_wait(pub);

    // Pipelined, so Redis writes the messages to the subscriber back to back, many per read.
    constexpr int count = 20000;
    const std::string padding(100, 'p');
    for (int i = 0; i < count; ++i) {
        ASSERT_TRUE(pub->command({"PUBLISH", "burst", std::to_string(i) + padding}, [](auto) {}));
    }
    ASSERT_TRUE(run_until([&] { return received->size() >= count; }));
    ASSERT_EQ(received->size(), static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        ASSERT_EQ((*received)[i], std::to_string(i) + padding);
    }
}

TEST_F(RedisConnectionTest, ChannelsAddedWhileUpAreSubscribed) {
    redis_process redis;
    auto sub = make(options_for(redis.port()), "subscriber");
    auto pub = make(options_for(redis.port()), "publisher");
    auto received = std::make_shared<std::vector<std::string>>();
    const auto record = [received](std::string_view channel, std::string_view payload) {
        received->push_back(std::string(channel) + "=" + std::string(payload));
    };
    sub->subscribe({"first"}, record);
    start_and_wait(sub);
    start_and_wait(pub);

    sub->subscribe({"second", "first"}, record);
    // Nothing reports Redis's confirmation: publish until Redis counts a receiver.
    std::shared_ptr<answer> receivers;
    ASSERT_TRUE(run_until([&] {
        if (receivers && receivers->calls == 1 && receivers->reply && receivers->reply->integer == 1) {
            return true;
        }
        if (!receivers || receivers->calls == 1) {
            receivers = send(*pub, {"PUBLISH", "second", "probe"});
        }
        return false;
    }));
    auto first = call(*pub, {"PUBLISH", "first", "still here"});
    ASSERT_TRUE(first && first->integer == 1) << describe(first) << ": subscribed to 'first' once";
    ASSERT_TRUE(run_until([&] { return received->size() >= 2 && received->back() == "first=still here"; }));
    EXPECT_EQ(received->front(), "second=probe");
}

// Publishes on channel until Redis counts `receivers` subscribers of it (a subscription is
// confirmed to the subscriber only, so the publisher cannot know sooner).
#define PUBLISH_UNTIL(pub, command, channel, receivers)                                                        \
    do {                                                                                                       \
        std::shared_ptr<answer> sent;                                                                          \
        ASSERT_TRUE(run_until([&] {                                                                            \
            if (sent && sent->calls == 1 && sent->reply && sent->reply->integer == (receivers)) {              \
                return true;                                                                                   \
            }                                                                                                  \
            if (!sent || sent->calls == 1) {                                                                   \
                sent = send(*(pub), {command, channel, "probe"});                                              \
            }                                                                                                  \
            return false;                                                                                      \
        })) << channel << " never reached " << (receivers) << " receivers";                                    \
    } while (false)

TEST_F(RedisConnectionTest, UnsubscribedChannelsStayLeftAfterAReconnect) {
    redis_process redis;
    auto sub = make(options_for(redis.port()), "subscriber");
    auto pub = make(options_for(redis.port()), "publisher");
    auto received = std::make_shared<std::vector<std::string>>();
    sub->subscribe({"kept", "left"}, [received](std::string_view channel, std::string_view payload) {
        received->push_back(std::string(channel) + "=" + std::string(payload));
    });
    start_and_wait(sub);
    start_and_wait(pub);
    PUBLISH_UNTIL(pub, "PUBLISH", "left", 1);

    sub->unsubscribe({"left", "never subscribed"});
    PUBLISH_UNTIL(pub, "PUBLISH", "left", 0);
    auto kept = call(*pub, {"PUBLISH", "kept", "one"});
    ASSERT_TRUE(kept && kept->integer == 1) << describe(kept);

    // A new connection subscribes to what is left only.
    redis.stop();
    ASSERT_TRUE(run_until([&] { return !sub->connected() && !pub->connected(); }));
    redis.start();
    ASSERT_TRUE(run_until([&] { return sub->connected() && pub->connected(); }));
    auto left = call(*pub, {"PUBLISH", "left", "gone"});
    ASSERT_TRUE(left && left->integer == 0) << describe(left);
    kept = call(*pub, {"PUBLISH", "kept", "two"});
    ASSERT_TRUE(kept && kept->integer == 1) << describe(kept);
    ASSERT_TRUE(run_until([&] { return !received->empty() && received->back() == "kept=two"; }));
    for (const std::string& r : *received) {
        EXPECT_NE(r, "left=gone");
    }
}

TEST_F(RedisConnectionTest, ShardedSubscriberGetsSpublishedMessages) {
    redis_process redis;
    auto options = options_for(redis.port());
    // Channels with a hash tag are sharded here; the others plain, on the same connection.
    options.sharded = [](std::string_view channel) { return channel.starts_with("{"); };
    auto sub = make(options, "sharded");
    auto pub = make(options_for(redis.port()), "publisher");
    auto received = std::make_shared<std::vector<std::string>>();
    sub->subscribe({"{p1}:room", "{p2}:room", "events"}, [received](std::string_view channel, std::string_view payload) {
        received->push_back(std::string(channel) + "=" + std::string(payload));
    });
    start_and_wait(sub);
    start_and_wait(pub);
    PUBLISH_UNTIL(pub, "SPUBLISH", "{p1}:room", 1);
    PUBLISH_UNTIL(pub, "SPUBLISH", "{p2}:room", 1);
    PUBLISH_UNTIL(pub, "PUBLISH", "events", 1);
    auto sharded_events = call(*pub, {"SPUBLISH", "events", "nobody"});
    ASSERT_TRUE(sharded_events && sharded_events->integer == 0) << describe(sharded_events);
    // A plain PUBLISH on the same name does not reach a sharded subscriber.
    auto plain = call(*pub, {"PUBLISH", "{p1}:room", "plain"});
    ASSERT_TRUE(plain && plain->integer == 0) << describe(plain);
    auto sharded = call(*pub, {"SPUBLISH", "{p1}:room", "said"});
    ASSERT_TRUE(sharded && sharded->integer == 1) << describe(sharded);
    ASSERT_TRUE(run_until([&] { return !received->empty() && received->back() == "{p1}:room=said"; }));
    sub->unsubscribe({"{p1}:room"});
    PUBLISH_UNTIL(pub, "SPUBLISH", "{p1}:room", 0);
}

TEST_F(RedisConnectionTest, SubscriberWithoutChannelsComesUpAndSubscribesLater) {
    redis_process redis;
    auto sub = make(options_for(redis.port()), "subscriber");
    auto pub = make(options_for(redis.port()), "publisher");
    auto received = std::make_shared<std::vector<std::string>>();
    sub->subscribe({}, [received](std::string_view, std::string_view payload) {
        received->emplace_back(payload);
    });
    start_and_wait(sub);
    start_and_wait(pub);
    expect_refused(*sub, {"GET", "k"}, "a subscriber takes no commands");
    sub->subscribe({"later"});
    PUBLISH_UNTIL(pub, "PUBLISH", "later", 1);
    ASSERT_TRUE(run_until([&] { return !received->empty(); }));
    EXPECT_EQ(received->front(), "probe");
}

TEST_F(RedisConnectionTest, OutageThenRecovery) {
    redis_process redis;
    auto c = make(options_for(redis.port()), "commands");
    auto sub = make(options_for(redis.port()), "subscriber");
    auto events = std::make_shared<std::vector<std::string>>();
    int ups = 0;
    int downs = 0;
    int sub_ups = 0;
    int sub_downs = 0;
    c->on_up([&] { ++ups; });
    c->on_down([&, events] {
        ++downs;
        events->push_back("down");
    });
    sub->on_up([&] { ++sub_ups; });
    sub->on_down([&] { ++sub_downs; });
    auto received = std::make_shared<std::vector<std::string>>();
    sub->subscribe({"news"}, [received](std::string_view, std::string_view payload) {
        received->emplace_back(payload);
    });
    sub->start();
    start_and_wait(c);
    ASSERT_TRUE(run_until([&] { return ups == 1 && sub_ups == 1; }));

    // Commands that will never get their answer: one that blocks in Redis, one behind it.
    for (const char* label : {"blpop", "get"}) {
        const std::string name = label;
        const auto on_answer = [events, name](std::optional<redis_reply> reply) {
            events->push_back(name + (reply ? ":" + reply->describe() : ":nullopt"));
        };
        ASSERT_TRUE(name == "blpop" ? c->command({"BLPOP", "nothing", "0"}, on_answer)
                                    : c->command({"GET", "x"}, on_answer));
    }
    redis.stop();

    ASSERT_TRUE(run_until([&] { return downs == 1 && sub_downs == 1; }));
    EXPECT_EQ(*events, (std::vector<std::string>{"blpop:nullopt", "get:nullopt", "down"}))
        << "pending commands answered nullopt, in order, before on_down";
    EXPECT_FALSE(c->connected());
    EXPECT_FALSE(sub->connected());
    expect_refused(*c, {"GET", "x"}, "accepted while down");
    const auto attempts_when_down = c->connect_attempts();

    redis.start();
    ASSERT_TRUE(run_until([&] { return ups == 2 && sub_ups == 2; })) << "did not reconnect by itself";
    EXPECT_GT(c->connect_attempts(), attempts_when_down);
    EXPECT_EQ(downs, 1);
    EXPECT_EQ(sub_downs, 1);

    auto set = call(*c, {"SET", "after", "outage"});
    ASSERT_TRUE(set && set->is_status()) << describe(set);
    // The subscriber subscribed again before its on_up: a message published now arrives.
    auto receivers = call(*c, {"PUBLISH", "news", "back"});
    ASSERT_TRUE(receivers && receivers->is_integer()) << describe(receivers);
    EXPECT_EQ(receivers->integer, 1);
    ASSERT_TRUE(run_until([&] { return !received->empty(); }));
    EXPECT_EQ(*received, std::vector<std::string>{"back"});
}

TEST_F(RedisConnectionTest, StopAnswersPendingCommandsWithNulloptThenNothingRuns) {
    redis_process redis;
    auto c = make(options_for(redis.port()));
    int ups = 0;
    int downs = 0;
    c->on_up([&] { ++ups; });
    c->on_down([&] { ++downs; });
    start_and_wait(c);

    std::vector<std::shared_ptr<answer>> pending;
    pending.push_back(send(*c, {"BLPOP", "nothing", "0"}));
    for (int i = 0; i < 3; ++i) {
        pending.push_back(send(*c, {"GET", "x"}));
    }
    // Let the commands reach Redis, so that stop() closes a connection with work in flight.
    io_.restart();
    io_.poll();

    c->stop();
    for (const auto& p : pending) {
        EXPECT_EQ(p->calls, 0) << "called inside stop()";
    }
    c->stop();  // idempotent
    EXPECT_FALSE(c->connected());
    expect_refused(*c, {"GET", "x"}, "accepted after stop()");

    // With no work guard the loop returns as soon as nothing is left to run: no timer, no wait.
    io_.restart();
    const auto began = clock_type::now();
    io_.run_for(wait_limit);
    EXPECT_LT(clock_type::now() - began, wait_limit) << "something still pending after stop()";
    for (const auto& p : pending) {
        EXPECT_EQ(p->calls, 1);
        EXPECT_FALSE(p->reply) << describe(p->reply);
    }
    EXPECT_EQ(ups, 1);
    EXPECT_EQ(downs, 0) << "on_down after stop()";
}

TEST_F(RedisConnectionTest, CallbackMayStopAndDropTheConnection) {
    redis_process redis;
    auto c = redis_connection::create(io_.get_executor(), options_for(redis.port()), "dropped");
    c->start();
    ASSERT_TRUE(run_until([&] { return c->connected(); }));

    auto later = std::make_shared<std::vector<std::string>>();
    std::weak_ptr<redis_connection> weak = c;
    ASSERT_TRUE(c->command({"PING"}, [&c, later](std::optional<redis_reply> reply) {
        later->push_back(reply ? "first" : "first:nullopt");
        c->stop();
        c.reset();  // the last reference, from inside a callback
    }));
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(c->command({"BLPOP", "nothing", "0"}, [later](std::optional<redis_reply> reply) {
            later->push_back(reply ? "blpop" : "nullopt");
        }));
    }
    ASSERT_TRUE(run_until([&] { return later->size() == 4; }));
    EXPECT_EQ(*later, (std::vector<std::string>{"first", "nullopt", "nullopt", "nullopt"}));
    io_.restart();
    io_.poll();
    EXPECT_TRUE(weak.expired());
}

TEST_F(RedisConnectionTest, RetriesWithoutBlockingWhileNothingListens) {
    reserved_port port;  // bound, not listening: every connect is refused
    auto c = make(options_for(port.port()));
    int ups = 0;
    int downs = 0;
    c->on_up([&] { ++ups; });
    c->on_down([&] { ++downs; });

    // A timer on the same loop must keep firing while the connection retries.
    auto ticker = std::make_shared<loop_ticker>(io_);
    ticker->start();

    c->start();
    ASSERT_TRUE(run_until([&] { return c->connect_attempts() >= 5; }));
    EXPECT_FALSE(c->connected());
    EXPECT_GE(ticker->ticks, 3);
    // Generous for a loaded machine; a blocked loop would show the connect's own duration.
    EXPECT_LT(ticker->longest_gap, 2s) << "the loop was blocked";
    ticker->stop();

    // Redis appears on that port: the connection finds it by itself.
    port.release();
    redis_process redis(port.port());
    ASSERT_TRUE(run_until([&] { return ups == 1; }));
    auto pong = call(*c, {"PING"});
    ASSERT_TRUE(pong);
    EXPECT_EQ(pong->text, "PONG");
    EXPECT_EQ(downs, 0) << "on_down without an up before it";
}

TEST_F(RedisConnectionTest, HungRedisIsTreatedAsLost) {
    redis_process redis;
    auto o = options_for(redis.port());
    o.command_timeout = 1000ms;
    o.connect_timeout = 1000ms;
    auto c = make(o);
    int ups = 0;
    int downs = 0;
    c->on_up([&] { ++ups; });
    c->on_down([&] { ++downs; });
    start_and_wait(c);

    redis.pause();
    auto get = send(*c, {"GET", "x"});
    ASSERT_TRUE(run_until([&] { return downs == 1; })) << "a command without a reply did not end the connection";
    EXPECT_EQ(get->calls, 1);
    EXPECT_FALSE(get->reply);
    EXPECT_FALSE(c->connected());

    // TCP connects still succeed (the kernel answers for the stopped process), but no PONG comes:
    // those attempts fail, and the connection never reports up meanwhile.
    const auto attempts = c->connect_attempts();
    ASSERT_TRUE(run_until([&] { return c->connect_attempts() >= attempts + 2; }));
    EXPECT_EQ(ups, 1);
    EXPECT_FALSE(c->connected());

    redis.resume();
    ASSERT_TRUE(run_until([&] { return ups >= 2; }));
    // A stall of the test machine longer than the timeouts could cost another reconnect: retry
    // until a PING is answered, then check that on_up and on_down alternated.
    std::shared_ptr<answer> pong;
    ASSERT_TRUE(run_until([&] {
        if (pong && pong->reply) {
            return true;
        }
        if ((!pong || pong->calls == 1) && c->connected()) {
            pong = send(*c, {"PING"});
        }
        return false;
    }));
    EXPECT_EQ(pong->reply->text, "PONG");
    EXPECT_TRUE(c->connected());
    EXPECT_EQ(ups, downs + 1);
}

}  // namespace
