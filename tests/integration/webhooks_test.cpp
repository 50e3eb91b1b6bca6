// Webhooks: the daemon POSTs chat events in signed batches to receivers run inside the test;
// a receiver answering 500 gets the batch again, a dead one costs a bounded queue, a reload
// replaces the receivers, and https receivers are verified against the CA file given.
#include "loopback_listener.hpp"
#include "test_support.hpp"
#include "webhook_receiver.hpp"

#include <csignal>
#include <fstream>
#include <map>
#include <set>

namespace parley::integration {
namespace {

const std::string secret = "receiver-secret-0123456789";

std::string webhook_table(const std::string& url, const std::string& events, const std::string& extra = {}) {
    return "[[webhooks]]\nurl = \"" + url + "\"\nevents = " + events + "\nsecret = \"" + secret + "\"\n" + extra;
}

// Every event the receiver was given in batches it accepted, in arrival order.
std::vector<json> accepted_events(const std::vector<webhook_receiver::request>& requests) {
    std::vector<json> events;
    for (const auto& r : requests) {
        if (r.answered / 100 != 2) {
            continue;
        }
        const json body = json::parse(r.body);  // kept: a range over a temporary's member would dangle
        for (const json& e : body.at("events")) {
            events.push_back(e);
        }
    }
    return events;
}

std::size_t count_of(const std::vector<json>& events, const std::string& type) {
    return static_cast<std::size_t>(
        std::count_if(events.begin(), events.end(), [&](const json& e) { return e.value("type", "") == type; }));
}

// A port nobody listens on: listened on, then closed.
std::uint16_t closed_port() {
    std::uint16_t port = 0;
    ::close(listen_on_loopback(port, "closed_port"));
    return port;
}

class WebhooksTest : public parley_test {
protected:
    std::string daemon_config() const override { return webhook_table(receiver_.url(), "[\"*\"]"); }

    // A sample of /metrics (0 when absent).
    double metric(const std::string& name) {
        ws_client client(port());
        const std::string raw =
            client.raw_http("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        const std::string key = "\n" + name + " ";
        const auto at = raw.find(key);
        return at == std::string::npos ? 0 : std::stod(raw.substr(at + key.size()));
    }

    void say(ws_client& client, const std::string& room, const std::string& text, const std::string& id) {
        client.send_json({{"type", "say"}, {"room", room}, {"text", text}, {"id", id}});
    }

    webhook_receiver receiver_;
};

TEST_F(WebhooksTest, SignedBatchesCarryEveryKindInEachRoomsOrder) {
    {
        ws_client alice = login("alice");
        ws_client bob = login("bob");
        join_room(alice, "red");
        join_room(alice, "blue");
        join_room(bob, "red");
        for (int i = 0; i < 60; ++i) {
            call(alice, {{"type", "say"}, {"room", i % 2 == 0 ? "red" : "blue"}, {"text", "m" + std::to_string(i)},
                         {"id", "s" + std::to_string(i)}});
        }
        call(bob, {{"type", "dm"}, {"to", "alice"}, {"text", "psst"}, {"id", "d"}});
        call(bob, {{"type", "leave"}, {"room", "red"}, {"id", "l"}});
    }  // both disconnect
    ASSERT_TRUE(receiver_.wait([](const auto& requests) {
        return count_of(accepted_events(requests), "user_disconnected") == 2;
    })) << receiver_.requests().size() << " requests, the last: "
        << (receiver_.requests().empty() ? "" : receiver_.requests().back().body.substr(0, 3000));

    const auto requests = receiver_.requests();
    std::set<std::string> ids;
    for (const auto& r : requests) {
        EXPECT_EQ(r.method, "POST");
        EXPECT_EQ(r.target, "/hooks/chat");
        EXPECT_EQ(r.content_type, "application/json");
        EXPECT_TRUE(webhook_receiver::signature_valid(secret, r.signature, r.body)) << r.signature;
        EXPECT_FALSE(webhook_receiver::signature_valid("another-secret-0123456789", r.signature, r.body));
        EXPECT_FALSE(webhook_receiver::signature_valid(secret, r.signature, r.body + " "));
        const json body = json::parse(r.body);
        EXPECT_LE(body.at("events").size(), 100u);
        EXPECT_FALSE(body.value("node", "").empty());
    }
    const std::vector<json> events = accepted_events(requests);
    std::map<std::string, std::vector<std::string>> said_in;
    std::map<std::string, std::int64_t> last_seq;
    for (const json& e : events) {
        EXPECT_TRUE(ids.insert(e.at("id").get<std::string>()).second) << "id repeated: " << e.dump();
        EXPECT_GT(e.at("ts").get<std::int64_t>(), 0);
        if (e.at("type") == "message") {
            const std::string room = e.at("room");
            EXPECT_EQ(e.at("user"), "alice");
            EXPECT_EQ(e.at("data").at("type"), "message");
            EXPECT_GT(e.at("data").at("seq").get<std::int64_t>(), last_seq[room]);
            last_seq[room] = e.at("data").at("seq");
            said_in[room].push_back(e.at("data").at("text"));
        }
    }
    std::vector<std::string> red;
    std::vector<std::string> blue;
    for (int i = 0; i < 60; ++i) {
        (i % 2 == 0 ? red : blue).push_back("m" + std::to_string(i));
    }
    EXPECT_EQ(said_in["red"], red);
    EXPECT_EQ(said_in["blue"], blue);
    EXPECT_EQ(count_of(events, "user_connected"), 2u);
    EXPECT_EQ(count_of(events, "room_occupied"), 2u);
    EXPECT_EQ(count_of(events, "member_joined"), 3u);
    EXPECT_EQ(count_of(events, "member_left"), 3u);
    EXPECT_EQ(count_of(events, "room_vacated"), 2u);
    EXPECT_EQ(count_of(events, "dm"), 1u);

    // Within one room: occupied, then joins, messages and leaves, vacated last.
    std::vector<std::string> red_kinds;
    for (const json& e : events) {
        if (e.value("room", "") == "red" && e.at("type") != "message") {
            red_kinds.push_back(e.at("type").get<std::string>() + ":" + e.value("user", ""));
        }
    }
    EXPECT_EQ(red_kinds, (std::vector<std::string>{"room_occupied:", "member_joined:alice", "member_joined:bob",
                                                   "member_left:bob", "member_left:alice", "room_vacated:"}));
    for (const json& e : events) {
        if (e.at("type") == "dm") {
            EXPECT_EQ(e.at("user"), "bob");
            EXPECT_EQ(e.at("data").at("to"), "alice");
            EXPECT_EQ(e.at("data").at("text"), "psst");
        }
    }
    EXPECT_EQ(metric("parley_webhook_events_delivered_total"), static_cast<double>(events.size()));
    EXPECT_EQ(metric("parley_webhook_events_dropped_total"), 0);
}

class WebhookRetryTest : public WebhooksTest {
protected:
    std::string daemon_config() const override { return webhook_table(receiver_.url(), "[\"message\"]"); }
};

TEST_F(WebhookRetryTest, ABatchAnswered500IsSentAgainUntilTaken) {
    receiver_.answer(500);
    ws_client alice = login("alice");
    join_room(alice, "lobby");
    for (int i = 0; i < 3; ++i) {
        call(alice, {{"type", "say"}, {"room", "lobby"}, {"text", "t" + std::to_string(i)}, {"id", i}});
    }
    ASSERT_TRUE(receiver_.wait([](const auto& requests) { return requests.size() >= 2; }));
    receiver_.answer(200);
    ASSERT_TRUE(receiver_.wait([](const auto& requests) { return !accepted_events(requests).empty(); },
                               std::chrono::milliseconds(15000)))
        << [this] {
               std::string seen = "accepted " + std::to_string(accepted_events(receiver_.requests()).size()) + "\n";
               for (const auto& r : receiver_.requests()) {
                   seen += std::to_string(r.answered) + " " + r.body + "\n";
               }
               return seen;
           }();
    const auto requests = receiver_.requests();
    // The refused batch came again, the same events with the same ids.
    const json first = json::parse(requests.front().body).at("events");
    const json taken = json::parse(requests.back().body).at("events");
    EXPECT_EQ(requests.front().answered, 500);
    EXPECT_EQ(first, taken);
    ASSERT_EQ(taken.size(), 3u);
    EXPECT_EQ(taken[2].at("data").at("text"), "t2");
    for (const auto& r : requests) {
        EXPECT_TRUE(webhook_receiver::signature_valid(secret, r.signature, r.body));
    }
    EXPECT_GE(metric("parley_webhook_retries_total"), 1);
    EXPECT_EQ(metric("parley_webhook_events_delivered_total"), 3);
}

class WebhookTimeoutTest : public WebhooksTest {
protected:
    std::string daemon_config() const override {
        return webhook_table(receiver_.url(), "[\"message\"]", "timeout_ms = 300\n");
    }
};

TEST_F(WebhookTimeoutTest, ABatchWithoutAnAnswerInTimeIsSentAgain) {
    receiver_.stall(1, std::chrono::milliseconds(1500));
    ws_client alice = login("alice");
    join_room(alice, "lobby");
    call(alice, {{"type", "say"}, {"room", "lobby"}, {"text", "patience"}, {"id", "s"}});
    ASSERT_TRUE(receiver_.wait([](const auto& r) { return !accepted_events(r).empty(); }));
    const auto requests = receiver_.requests();
    ASSERT_GE(requests.size(), 2u);
    EXPECT_EQ(requests.front().answered, 0);  // held silent: the daemon gave up after 300 ms
    EXPECT_EQ(json::parse(requests.front().body).at("events"), json::parse(requests.back().body).at("events"));
    EXPECT_EQ(accepted_events(requests).front().at("data").at("text"), "patience");
    EXPECT_TRUE(daemon_->wait_for_line("no answer within the timeout", 0));
    EXPECT_GE(metric("parley_webhook_retries_total"), 1);
}

std::int64_t rss_kib(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0) {
            return std::stoll(line.substr(6));
        }
    }
    return -1;
}

class DeadReceiverTest : public WebhooksTest {
protected:
    std::vector<std::string> daemon_args() const override {
        return {"--rate-limit", "100000", "--rate-burst", "100000"};
    }
    std::string daemon_config() const override {
        return webhook_table("http://127.0.0.1:" + std::to_string(dead_port_) + "/gone", "[\"message\"]",
                             "queue_events = 500\n");
    }
    std::uint16_t dead_port_ = closed_port();
};

TEST_F(DeadReceiverTest, FillsTheQueueToItsBoundAndMemoryStaysFlat) {
    ws_client alice = login("alice");
    join_room(alice, "lobby");
    const std::string text(1500, 'x');
    auto say_many = [&](int count, int from) {
        for (int i = 0; i < count; ++i) {
            const bool last = i + 1 == count;
            json say = {{"type", "say"}, {"room", "lobby"}, {"text", text}, {"id", from + i}};
            if (last) {
                call(alice, say, std::chrono::milliseconds(30000));
            } else {
                alice.send_json(say);
            }
            if (i % 200 == 199 && !last) {
                wait_reply(alice, from + i);  // keep within the rate limit's burst
            }
        }
    };
    say_many(2000, 0);
    EXPECT_EQ(metric("parley_webhook_events_queued"), 500);
    // Every event is queued, in the batch being retried (at most 100) or dropped.
    EXPECT_GE(metric("parley_webhook_events_dropped_total"), 2000 - 500 - 100);
    const std::int64_t before = rss_kib(daemon_->pid());
    say_many(6000, 10000);
    const std::int64_t after = rss_kib(daemon_->pid());
    EXPECT_EQ(metric("parley_webhook_events_queued"), 500);
    EXPECT_GE(metric("parley_webhook_events_dropped_total"), 8000 - 500 - 100);
    EXPECT_GE(metric("parley_webhook_retries_total"), 1);
    std::printf("rss: %lld KiB after the queue filled, %lld KiB after 6000 more events\n",
                static_cast<long long>(before), static_cast<long long>(after));
    if (!daemon_->sanitized()) {  // a sanitizer keeps freed memory aside: resident size says nothing
        // Unbounded, 6000 more events of 1.5 KB would hold about 9 MB more.
        EXPECT_LT(after - before, 4 * 1024);
    }
    EXPECT_TRUE(daemon_->wait_for_line("webhook http://127.0.0.1:" + std::to_string(dead_port_), 0));
}

TEST_F(WebhooksTest, AReloadReplacesTheReceiversAndTheirKinds) {
    webhook_receiver second;
    ws_client alice = login("alice");
    join_room(alice, "lobby");
    call(alice, {{"type", "say"}, {"room", "lobby"}, {"text", "before"}, {"id", "b"}});
    ASSERT_TRUE(receiver_.wait([](const auto& r) { return count_of(accepted_events(r), "message") == 1; }));

    const std::size_t from = daemon_->line_count();
    daemon_->write_config(webhook_table(second.url(), "[\"member_joined\"]"));
    daemon_->send_signal(SIGHUP);
    ASSERT_TRUE(daemon_->wait_for_line("reload:", from));
    const std::size_t first_had = receiver_.requests().size();
    call(alice, {{"type", "say"}, {"room", "lobby"}, {"text", "after"}, {"id", "a"}});
    ws_client bob = login("bob");
    join_room(bob, "lobby");
    ASSERT_TRUE(second.wait([](const auto& r) { return count_of(accepted_events(r), "member_joined") == 1; }));
    const std::vector<json> got = accepted_events(second.requests());
    EXPECT_EQ(got.size(), 1u);
    EXPECT_EQ(got.front().at("user"), "bob");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(receiver_.requests().size(), first_had);  // the first receiver is no longer sent to
}

class HttpsWebhookTest : public parley_test {
protected:
    std::string daemon_config() const override {
        return webhook_table(receiver_.url(), "[\"message\"]", "ca_file = \"" + receiver_.cert_path() + "\"\n");
    }
    temp_dir dir_;
    webhook_receiver receiver_{dir_.path()};
};

TEST_F(HttpsWebhookTest, EventsGoOverTlsToAReceiverTheCaFileVouchesFor) {
    ws_client alice = login("alice");
    join_room(alice, "lobby");
    call(alice, {{"type", "say"}, {"room", "lobby"}, {"text", "over tls"}, {"id", "s"}});
    ASSERT_TRUE(receiver_.wait([](const auto& r) { return !accepted_events(r).empty(); }));
    const auto requests = receiver_.requests();
    EXPECT_TRUE(webhook_receiver::signature_valid(secret, requests.front().signature, requests.front().body));
    EXPECT_EQ(accepted_events(requests).front().at("data").at("text"), "over tls");
}

}  // namespace
}  // namespace parley::integration
