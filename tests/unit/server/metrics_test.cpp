// The /metrics text: sums over workers, histogram shape, every label value, and a check that the
// whole output is valid Prometheus text exposition format 0.0.4.

#include "server/metrics.hpp"

#include "protocol/error_code.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace parley::server::tests {
namespace {

using rooms::worker_counters;

// One parsed sample line.
struct sample {
    std::string name;
    std::map<std::string, std::string> labels;
    std::string value;
};

// A small checker for the text format: every line is `# HELP name text`, `# TYPE name type` or
// a sample `name{label="value",...} value`; each family has HELP then TYPE before its samples
// and appears once; sample names belong to the family declared last (histograms add _bucket,
// _sum and _count); label values are read with their escapes. Fails the test on any violation.
std::vector<sample> parse_exposition(const std::string& text) {
    std::vector<sample> samples;
    std::set<std::string> families;
    std::string family;
    std::string family_type;
    bool have_help = false;
    bool have_type = false;
    EXPECT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
    std::istringstream in(text);
    std::string line;
    auto valid_name = [](std::string_view n) {
        if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) {
            return false;
        }
        for (char c : n) {
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ':') {
                return false;
            }
        }
        return true;
    };
    while (std::getline(in, line)) {
        SCOPED_TRACE(line);
        EXPECT_FALSE(line.empty());
        if (line.rfind("# HELP ", 0) == 0) {
            std::string rest = line.substr(7);
            std::string name = rest.substr(0, rest.find(' '));
            EXPECT_TRUE(valid_name(name));
            EXPECT_TRUE(families.insert(name).second) << "family repeated: " << name;
            EXPECT_NE(rest.find(' '), std::string::npos) << "HELP without text";
            family = name;
            have_help = true;
            have_type = false;
            continue;
        }
        if (line.rfind("# TYPE ", 0) == 0) {
            std::string rest = line.substr(7);
            std::size_t space = rest.find(' ');
            EXPECT_TRUE(have_help);
            EXPECT_EQ(rest.substr(0, space), family) << "TYPE must follow its HELP";
            family_type = rest.substr(space + 1);
            EXPECT_TRUE(family_type == "counter" || family_type == "gauge" || family_type == "histogram");
            have_type = true;
            continue;
        }
        EXPECT_NE(line[0], '#') << "unexpected comment";
        EXPECT_TRUE(have_help && have_type) << "sample before HELP and TYPE";

        sample s;
        std::size_t i = 0;
        while (i < line.size() && line[i] != '{' && line[i] != ' ') {
            ++i;
        }
        s.name = line.substr(0, i);
        EXPECT_TRUE(valid_name(s.name));
        if (family_type == "histogram") {
            EXPECT_TRUE(s.name == family + "_bucket" || s.name == family + "_sum" || s.name == family + "_count")
                << s.name;
        } else {
            EXPECT_EQ(s.name, family);
        }
        if (family_type == "counter") {
            EXPECT_TRUE(s.name.ends_with("_total")) << s.name;
        }
        if (i < line.size() && line[i] == '{') {
            ++i;
            while (i < line.size() && line[i] != '}') {
                std::size_t eq = line.find('=', i);
                EXPECT_NE(eq, std::string::npos);
                if (eq == std::string::npos) {
                    return samples;
                }
                std::string key = line.substr(i, eq - i);
                EXPECT_TRUE(valid_name(key));
                EXPECT_EQ(line[eq + 1], '"');
                std::string value;
                std::size_t j = eq + 2;
                for (; j < line.size() && line[j] != '"'; ++j) {
                    if (line[j] == '\\') {
                        ++j;
                        EXPECT_TRUE(line[j] == '\\' || line[j] == '"' || line[j] == 'n') << "bad escape";
                        value += line[j] == 'n' ? '\n' : line[j];
                    } else {
                        value += line[j];
                    }
                }
                EXPECT_LT(j, line.size()) << "unterminated label value";
                EXPECT_TRUE(s.labels.emplace(key, value).second) << "label repeated";
                i = j + 1;
                if (i < line.size() && line[i] == ',') {
                    ++i;
                }
            }
            EXPECT_LT(i, line.size());
            ++i;
        }
        EXPECT_LT(i, line.size());
        EXPECT_EQ(line[i], ' ');
        s.value = line.substr(i + 1);
        EXPECT_FALSE(s.value.empty());
        if (s.value != "+Inf" && s.value != "-Inf" && s.value != "NaN") {
            double d = 0;
            auto [end, ec] = std::from_chars(s.value.data(), s.value.data() + s.value.size(), d);
            EXPECT_TRUE(ec == std::errc{} && end == s.value.data() + s.value.size()) << "bad value " << s.value;
        }
        samples.push_back(std::move(s));
    }
    return samples;
}

const sample* find(const std::vector<sample>& samples, std::string_view name,
                   const std::map<std::string, std::string>& labels = {}) {
    for (const sample& s : samples) {
        if (s.name == name && s.labels == labels) {
            return &s;
        }
    }
    return nullptr;
}

std::string value_of(const std::vector<sample>& samples, std::string_view name,
                     const std::map<std::string, std::string>& labels = {}) {
    const sample* s = find(samples, name, labels);
    EXPECT_NE(s, nullptr) << name;
    return s != nullptr ? s->value : std::string();
}

double number_of(const std::vector<sample>& samples, std::string_view name,
                 const std::map<std::string, std::string>& labels = {}) {
    return std::strtod(value_of(samples, name, labels).c_str(), nullptr);
}

struct two_workers {
    two_workers()
        : a(std::make_unique<worker_counters>()),
          b(std::make_unique<worker_counters>()),
          http_a(std::make_unique<http_counters>()),
          http_b(std::make_unique<http_counters>()) {
        in.workers = {a.get(), b.get()};
        in.http = {http_a.get(), http_b.get()};
        in.version = "1.2.3";
        in.process = &process;
        process.resident_memory_bytes = 1024;
        process.cpu_seconds = 0.25;
        process.open_fds = 7;
        process.max_fds = 1024;
        process.start_time_seconds = 1700000000.5;
    }
    std::vector<sample> scrape() { return parse_exposition(render_metrics(in)); }

    std::unique_ptr<worker_counters> a;
    std::unique_ptr<worker_counters> b;
    std::unique_ptr<http_counters> http_a;
    std::unique_ptr<http_counters> http_b;
    process_stats process;
    metrics_input in;
};

TEST(metrics, counters_from_all_workers_are_summed) {
    two_workers w;
    w.a->connections_total.add(3);
    w.b->connections_total.add(4);
    w.a->connections_open.add(5);
    w.a->connections_open.sub(2);
    w.b->connections_open.add(1);
    w.a->bytes_sent.add(1000);
    w.b->bytes_sent.add(234);
    w.a->write_queue_bytes.add(10);
    w.b->write_queue_bytes.add(20);
    w.b->write_queue_bytes.sub(5);
    w.http_a->rejected[static_cast<std::size_t>(reject_reason::origin)].add(2);
    w.http_b->count(reject_reason::origin);
    w.http_b->handshake_failures[static_cast<std::size_t>(handshake_failure::timeout)].add(6);
    w.a->errors[static_cast<std::size_t>(protocol::error_code::rate_limited)].add(8);
    w.b->errors[static_cast<std::size_t>(protocol::error_code::rate_limited)].add(1);
    w.a->says.add(11);
    w.b->fanout_deliveries.add(12);
    w.in.users = 42;
    w.in.rooms = 5;
    w.in.history = {.written = 300, .failures = 1, .backlog = 17, .memory_bytes = 4096, .evictions = 8};

    auto s = w.scrape();
    EXPECT_EQ(value_of(s, "parley_connections_total"), "7");
    EXPECT_EQ(value_of(s, "parley_connections"), "4");
    EXPECT_EQ(value_of(s, "parley_bytes_sent_total"), "1234");
    EXPECT_EQ(value_of(s, "parley_write_queue_bytes"), "25");
    EXPECT_EQ(value_of(s, "parley_connections_rejected_total", {{"reason", "origin"}}), "3");
    EXPECT_EQ(value_of(s, "parley_connections_rejected_total", {{"reason", "max_connections"}}), "0");
    EXPECT_EQ(value_of(s, "parley_handshake_failures_total", {{"reason", "timeout"}}), "6");
    EXPECT_EQ(value_of(s, "parley_errors_total", {{"code", "rate_limited"}}), "9");
    EXPECT_EQ(value_of(s, "parley_says_total"), "11");
    EXPECT_EQ(value_of(s, "parley_fanout_deliveries_total"), "12");
    EXPECT_EQ(value_of(s, "parley_users"), "42");
    EXPECT_EQ(value_of(s, "parley_rooms"), "5");
    EXPECT_EQ(value_of(s, "parley_history_written_total"), "300");
    EXPECT_EQ(value_of(s, "parley_history_write_failures_total"), "1");
    EXPECT_EQ(value_of(s, "parley_history_backlog"), "17");
    EXPECT_EQ(value_of(s, "parley_history_memory_bytes"), "4096");
    EXPECT_EQ(value_of(s, "parley_history_evictions_total"), "8");
    EXPECT_EQ(value_of(s, "parley_workers"), "2");
    EXPECT_EQ(value_of(s, "parley_ready"), "1");
    EXPECT_EQ(value_of(s, "parley_build_info", {{"version", "1.2.3"}}), "1");
}

TEST(metrics, every_family_is_present_at_zero) {
    two_workers w;
    auto s = w.scrape();
    for (std::string_view name :
         {"parley_connections", "parley_connections_total", "parley_http_requests_total", "parley_users",
          "parley_rooms", "parley_messages_received_total", "parley_frames_sent_total", "parley_bytes_received_total",
          "parley_bytes_sent_total", "parley_write_queue_bytes", "parley_says_total", "parley_fanout_deliveries_total",
          "parley_slow_consumer_closes_total", "parley_idle_closes_total", "parley_history_written_total",
          "parley_history_write_failures_total", "parley_history_backlog", "parley_history_memory_bytes",
          "parley_history_evictions_total"}) {
        EXPECT_EQ(value_of(s, name), "0") << name;
    }
    for (std::string_view reason : {"max_connections", "max_connections_per_ip", "origin", "shutting_down"}) {
        EXPECT_EQ(value_of(s, "parley_connections_rejected_total", {{"reason", std::string(reason)}}), "0");
    }
    for (std::string_view reason : {"bad_request", "upgrade_required", "header_too_large", "timeout", "tls"}) {
        EXPECT_EQ(value_of(s, "parley_handshake_failures_total", {{"reason", std::string(reason)}}), "0");
    }
    EXPECT_EQ(value_of(s, "parley_broadcast_fanout_seconds_count"), "0");
}

TEST(metrics, every_error_code_appears) {
    two_workers w;
    auto s = w.scrape();
    std::size_t seen = 0;
    for (const sample& x : s) {
        if (x.name == "parley_errors_total") {
            ++seen;
        }
    }
    EXPECT_EQ(seen, protocol::error_code_count);
    for (std::size_t i = 0; i < protocol::error_code_count; ++i) {
        std::string code(protocol::wire_name(static_cast<protocol::error_code>(i)));
        EXPECT_EQ(value_of(s, "parley_errors_total", {{"code", code}}), "0") << code;
    }
}

TEST(metrics, histogram_buckets_are_cumulative_and_end_with_inf_equal_to_count) {
    two_workers w;
    w.a->record_fanout(5);       // <= 10 us
    w.a->record_fanout(10);      // <= 10 us (bounds are inclusive)
    w.b->record_fanout(30);      // <= 50 us
    w.b->record_fanout(2000);    // <= 2500 us
    w.a->record_fanout(500000);  // above the last bound: +Inf only

    auto s = w.scrape();
    std::vector<const sample*> buckets;
    for (const sample& x : s) {
        if (x.name == "parley_broadcast_fanout_seconds_bucket") {
            buckets.push_back(&x);
        }
    }
    ASSERT_EQ(buckets.size(), rooms::fanout_bucket_us.size() + 1);
    double previous_le = -1;
    double previous_count = 0;
    for (std::size_t i = 0; i < buckets.size(); ++i) {
        const std::string& le = buckets[i]->labels.at("le");
        double bound = le == "+Inf" ? INFINITY : std::strtod(le.c_str(), nullptr);
        if (i + 1 < buckets.size()) {
            EXPECT_DOUBLE_EQ(bound, static_cast<double>(rooms::fanout_bucket_us[i]) / 1e6);
        } else {
            EXPECT_EQ(le, "+Inf");
        }
        EXPECT_GT(bound, previous_le);
        double count = std::strtod(buckets[i]->value.c_str(), nullptr);
        EXPECT_GE(count, previous_count);
        previous_le = bound;
        previous_count = count;
    }
    EXPECT_EQ(value_of(s, "parley_broadcast_fanout_seconds_bucket", {{"le", "0.00001"}}), "2");
    EXPECT_EQ(value_of(s, "parley_broadcast_fanout_seconds_bucket", {{"le", "0.000025"}}), "2");
    EXPECT_EQ(value_of(s, "parley_broadcast_fanout_seconds_bucket", {{"le", "0.00005"}}), "3");
    EXPECT_EQ(value_of(s, "parley_broadcast_fanout_seconds_bucket", {{"le", "0.0025"}}), "4");
    EXPECT_EQ(value_of(s, "parley_broadcast_fanout_seconds_bucket", {{"le", "0.1"}}), "4");
    EXPECT_EQ(value_of(s, "parley_broadcast_fanout_seconds_bucket", {{"le", "+Inf"}}), "5");
    EXPECT_EQ(value_of(s, "parley_broadcast_fanout_seconds_count"), "5");
    EXPECT_DOUBLE_EQ(number_of(s, "parley_broadcast_fanout_seconds_sum"), (5 + 10 + 30 + 2000 + 500000) / 1e6);
}

TEST(metrics, label_values_are_escaped) {
    two_workers w;
    w.in.version = "1.0 \"beta\"\\x\nnext";
    std::string text = render_metrics(w.in);
    EXPECT_NE(text.find(R"(parley_build_info{version="1.0 \"beta\"\\x\nnext"} 1)"), std::string::npos) << text;
    auto s = parse_exposition(text);
    EXPECT_EQ(value_of(s, "parley_build_info", {{"version", "1.0 \"beta\"\\x\nnext"}}), "1");
}

TEST(metrics, ready_turns_zero_during_shutdown) {
    two_workers w;
    w.in.ready = false;
    EXPECT_EQ(value_of(w.scrape(), "parley_ready"), "0");
}

TEST(metrics, whole_output_is_valid_exposition_format) {
    two_workers w;
    w.a->record_fanout(70);
    w.a->messages_received.add(3);
    std::string text = render_metrics(w.in);
    auto s = parse_exposition(text);
    EXPECT_GT(s.size(), 50u);
    EXPECT_NE(text.find("# TYPE parley_broadcast_fanout_seconds histogram\n"), std::string::npos);
    EXPECT_NE(text.find("# TYPE parley_connections gauge\n"), std::string::npos);
    EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter\n"), std::string::npos);
    EXPECT_EQ(value_of(s, "process_resident_memory_bytes"), "1024");
    EXPECT_EQ(value_of(s, "process_cpu_seconds_total"), "0.25");
    EXPECT_EQ(value_of(s, "process_start_time_seconds"), "1700000000.5");
}

TEST(metrics, process_values_that_cannot_be_read_are_left_out) {
    two_workers w;
    w.process = process_stats{};
    w.process.open_fds = 3;
    std::string text = render_metrics(w.in);
    auto s = parse_exposition(text);
    EXPECT_EQ(text.find("process_resident_memory_bytes"), std::string::npos);
    EXPECT_EQ(text.find("process_max_fds"), std::string::npos);
    EXPECT_EQ(value_of(s, "process_open_fds"), "3");
}

TEST(metrics, process_stats_are_plausible) {
    process_stats p = read_process_stats();
    ASSERT_TRUE(p.resident_memory_bytes.has_value());
    EXPECT_GT(*p.resident_memory_bytes, 0u);
    ASSERT_TRUE(p.cpu_seconds.has_value());
    EXPECT_GE(*p.cpu_seconds, 0.0);
    ASSERT_TRUE(p.open_fds.has_value());
    EXPECT_GT(*p.open_fds, 0u);  // stdin, stdout, stderr at least
    if (p.max_fds) {
        EXPECT_GE(*p.max_fds, *p.open_fds);
    }
    ASSERT_TRUE(p.start_time_seconds.has_value());
    double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    EXPECT_LE(*p.start_time_seconds, now + 1);
    EXPECT_GT(*p.start_time_seconds, now - 24 * 3600.0);  // started within a day, surely

    // Read inside render when not passed in.
    two_workers w;
    w.in.process = nullptr;
    auto s = parse_exposition(render_metrics(w.in));
    EXPECT_GT(number_of(s, "process_resident_memory_bytes"), 0);
    EXPECT_GT(number_of(s, "process_open_fds"), 0);
}

TEST(metrics, labels_for_reject_reasons_and_handshake_failures) {
    EXPECT_EQ(label(reject_reason::max_connections), "max_connections");
    EXPECT_EQ(label(reject_reason::max_connections_per_ip), "max_connections_per_ip");
    EXPECT_EQ(label(reject_reason::origin), "origin");
    EXPECT_EQ(label(reject_reason::shutting_down), "shutting_down");
    EXPECT_EQ(label(handshake_failure::bad_request), "bad_request");
    EXPECT_EQ(label(handshake_failure::upgrade_required), "upgrade_required");
    EXPECT_EQ(label(handshake_failure::header_too_large), "header_too_large");
    EXPECT_EQ(label(handshake_failure::timeout), "timeout");
    EXPECT_EQ(label(handshake_failure::tls), "tls");
}

}  // namespace
}  // namespace parley::server::tests
