// GET /metrics: the Prometheus text format, and counters that move by exactly what the clients
// did between two scrapes.
#include "http_response.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

namespace parley::integration {
namespace {

// Samples by "name" or "name{labels}" as printed (labels in the daemon's order).
using samples = std::map<std::string, double>;

// Parses the text exposition format: comment lines start with '#', a sample line is
// `NAME[{LABELS}] VALUE`. Throws on a line of any other shape.
samples parse_samples(const std::string& body) {
    samples out;
    std::istringstream in(body);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') {
            continue;
        }
        const std::size_t close = line.find('}');
        const std::size_t space = line.find(' ', close == std::string::npos ? 0 : close);
        if (space == std::string::npos || space == 0 || space + 1 >= line.size()) {
            throw std::runtime_error("not a sample line: " + line);
        }
        const std::string value = line.substr(space + 1);
        char* end = nullptr;
        const double v = value == "+Inf" ? HUGE_VAL : std::strtod(value.c_str(), &end);
        if (value != "+Inf" && (end == value.c_str() || *end != '\0')) {
            throw std::runtime_error("not a number in: " + line);
        }
        if (!out.emplace(line.substr(0, space), v).second) {
            throw std::runtime_error("sample printed twice: " + line);
        }
    }
    return out;
}

class MetricsTest : public parley_test {
protected:
    http_response get(const std::string& path) {
        ws_client client(port());
        return parse_http_response(
            client.raw_http("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
    }

    samples scrape() {
        const http_response response = get("/metrics");
        if (response.status != 200) {
            throw std::runtime_error("GET /metrics: status " + std::to_string(response.status));
        }
        return parse_samples(response.body);
    }

    // The value of a sample that must be there.
    static double at(const samples& s, const std::string& name) {
        const auto it = s.find(name);
        if (it == s.end()) {
            throw std::runtime_error("no sample " + name);
        }
        return it->second;
    }
    static double delta(const samples& before, const samples& after, const std::string& name) {
        return at(after, name) - at(before, name);
    }
};

TEST_F(MetricsTest, ContentTypeAndShape) {
    const http_response response = get("/metrics");
    ASSERT_EQ(response.status, 200);
    const auto type = response.header("content-type");
    ASSERT_TRUE(type.has_value());
    EXPECT_EQ(type->rfind("text/plain; version=0.0.4", 0), 0u) << *type;
    const samples s = parse_samples(response.body);
    EXPECT_GT(at(s, "process_resident_memory_bytes"), 0.0);
    EXPECT_EQ(at(s, "parley_ready"), 1.0);
    EXPECT_EQ(at(s, "parley_connections"), 0.0);
    // Every family has its HELP and TYPE.
    EXPECT_NE(response.body.find("# TYPE parley_says_total counter"), std::string::npos);
    EXPECT_NE(response.body.find("# TYPE parley_broadcast_fanout_seconds histogram"), std::string::npos);
}

TEST_F(MetricsTest, BuildInfoHasAVersionLabel) {
    const samples s = scrape();
    bool found = false;
    for (const auto& [name, value] : s) {
        if (name.rfind("parley_build_info{version=\"", 0) == 0 && name.size() > 28) {
            found = true;
            EXPECT_EQ(value, 1.0);
        }
    }
    EXPECT_TRUE(found) << "no parley_build_info{version=...}";
}

TEST_F(MetricsTest, ScrapeCountsAsOneHttpRequest) {
    const samples first = scrape();
    const samples second = scrape();
    EXPECT_EQ(delta(first, second, "parley_http_requests_total"), 1.0);
}

TEST_F(MetricsTest, CountersMoveByWhatClientsDid) {
    const samples before = scrape();

    ws_client alice = login("alice");                 // 1 message received
    ws_client bob = login("bob");                     // 1
    join_room(alice, "r");                            // 1
    join_room(bob, "r");                              // 1
    ASSERT_EQ(wait_type(alice, "presence").value("user", ""), "bob");
    for (int i = 0; i < 3; ++i) {                     // 3
        alice.send_json({{"type", "say"}, {"room", "r"}, {"text", "t" + std::to_string(i)}, {"id", i}});
    }
    // Alice gets three acks and her three messages (in some interleaving), bob the messages.
    const std::vector<json> to_alice = read_messages(alice, 6);
    EXPECT_EQ(count_if(to_alice, is_type("ack")), 3u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(count_if(to_alice, is_chat("t" + std::to_string(i))), 1u);
        ASSERT_EQ(wait_type(bob, "message").value("text", ""), "t" + std::to_string(i));
    }
    expect_error_reply(bob, {{"type", "say"}, {"room", "elsewhere"}, {"text", "x"}, {"id", 1}},
                       "not_in_room");                // 1
    constexpr double client_messages = 8;
    // Every broadcast has reached both members before the scrape (frames are counted when they
    // are queued, before they are written).

    const samples after = scrape();
    EXPECT_EQ(delta(before, after, "parley_says_total"), 3.0);
    EXPECT_EQ(delta(before, after, "parley_errors_total{code=\"not_in_room\"}"), 1.0);
    EXPECT_EQ(delta(before, after, "parley_connections_total"), 2.0);
    EXPECT_EQ(at(after, "parley_connections"), 2.0);
    EXPECT_EQ(at(after, "parley_users"), 2.0);
    EXPECT_EQ(at(after, "parley_rooms"), 1.0);
    // Broadcast frames queued on members (room.cpp: a join is announced to the others, never to
    // the joiner; worker_context::deliver counts one per member reached):
    //   alice's join: announced to nobody else              0
    //   bob's join: presence to alice                       1
    //   3 says x 2 members (the sender gets its own say)    6
    //   bob's say to a room he is not in: no broadcast      0
    //                                                       = 7
    EXPECT_EQ(delta(before, after, "parley_fanout_deliveries_total"), 7.0);
    EXPECT_EQ(delta(before, after, "parley_messages_received_total"), client_messages);
    EXPECT_GT(delta(before, after, "parley_bytes_sent_total"), 0.0);
    EXPECT_GT(delta(before, after, "parley_bytes_received_total"), 0.0);
    EXPECT_GT(delta(before, after, "parley_frames_sent_total"), 0.0);
    // One histogram sample per broadcast and worker with members: 5 broadcasts (2 joins,
    // 3 says) reach at least one worker each.
    EXPECT_GE(delta(before, after, "parley_broadcast_fanout_seconds_count"), 5.0);
    EXPECT_LE(delta(before, after, "parley_broadcast_fanout_seconds_count"), 10.0);
    EXPECT_EQ(delta(before, after, "parley_http_requests_total"), 1.0);
}

TEST_F(MetricsTest, HistogramBucketsAreCumulative) {
    ws_client alice = login("alice");
    join_room(alice, "r");
    for (int i = 0; i < 5; ++i) {
        call(alice, {{"type", "say"}, {"room", "r"}, {"text", "x"}, {"id", i}});
    }
    const samples s = scrape();
    const std::string prefix = "parley_broadcast_fanout_seconds_bucket{le=\"";
    std::vector<std::pair<double, double>> buckets;  // (le, count)
    for (const auto& [name, value] : s) {
        if (name.rfind(prefix, 0) == 0) {
            const std::string le = name.substr(prefix.size(), name.size() - prefix.size() - 2);
            buckets.emplace_back(le == "+Inf" ? HUGE_VAL : std::strtod(le.c_str(), nullptr), value);
        }
    }
    ASSERT_GE(buckets.size(), 2u);
    std::sort(buckets.begin(), buckets.end());
    for (std::size_t i = 1; i < buckets.size(); ++i) {
        EXPECT_GE(buckets[i].second, buckets[i - 1].second) << "bucket le=" << buckets[i].first;
    }
    EXPECT_EQ(buckets.back().first, HUGE_VAL) << "no +Inf bucket";
    EXPECT_EQ(buckets.back().second, at(s, "parley_broadcast_fanout_seconds_count"));
    EXPECT_GE(at(s, "parley_broadcast_fanout_seconds_count"), 6.0);  // a join and five says
    EXPECT_GE(at(s, "parley_broadcast_fanout_seconds_sum"), 0.0);
}

TEST_F(MetricsTest, HandshakeFailureAndOriginRejectionAreCounted) {
    const samples before = scrape();
    {
        ws_client client(port());
        std::string request = client.upgrade_request();
        const std::string version = "Sec-WebSocket-Version: 13";
        request.replace(request.find(version), version.size(), "Sec-WebSocket-Version: 8");
        EXPECT_EQ(parse_http_response(client.raw_http(request)).status, 426);
    }
    {
        ws_client client(port(), {.headers = {"Origin: http://evil.example"}});
        EXPECT_EQ(parse_http_response(client.raw_http(client.upgrade_request())).status, 403);
    }
    const samples after = scrape();
    EXPECT_EQ(delta(before, after, "parley_handshake_failures_total{reason=\"upgrade_required\"}"), 1.0);
    EXPECT_EQ(delta(before, after, "parley_connections_rejected_total{reason=\"origin\"}"), 1.0);
    EXPECT_EQ(delta(before, after, "parley_handshake_failures_total{reason=\"bad_request\"}"), 0.0);
    EXPECT_EQ(delta(before, after, "parley_connections_total"), 0.0);
}

class MetricsDisabledTest : public MetricsTest {
protected:
    std::string daemon_config() const override { return "[metrics]\nenabled = false\n"; }
};

TEST_F(MetricsDisabledTest, MetricsPathIsNotFound) {
    EXPECT_EQ(get("/metrics").status, 404);
    EXPECT_EQ(get("/healthz").status, 200);
}

}  // namespace
}  // namespace parley::integration
