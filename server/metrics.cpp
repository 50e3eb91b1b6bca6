#include "server/metrics.hpp"

#include "protocol/error_code.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <type_traits>
#include <variant>

namespace parley::server {
namespace {

using rooms::local_counter;
using rooms::worker_counters;

constexpr std::array<std::string_view, reject_reason_count> reject_labels = {
    "max_connections", "max_connections_per_ip", "origin", "shutting_down"};
constexpr std::array<std::string_view, handshake_failure_count> handshake_labels = {
    "bad_request", "upgrade_required", "header_too_large", "timeout", "tls"};

// Everything one scrape reads, gathered once.
struct scrape {
    const metrics_input& in;
    process_stats process;
};

// A sample's value; monostate leaves the sample out.
using sample_value = std::variant<std::monostate, std::uint64_t, double>;

enum class metric_type { counter, gauge, histogram };

// The i-th counter of a family summed over the workers: `field<&worker_counters::says>` or, for
// an array member, `field<&worker_counters::errors>` (i picks the element); the same for the
// members of http_counters.
// Counters are written with plain relaxed stores by their own workers, so each load is a whole
// value; per-worker gauges never go below zero, so an unsigned sum is exact.
template <typename Counters, typename Member>
std::uint64_t sum_over(const std::vector<const Counters*>& workers, Member Counters::*member, std::size_t i) {
    std::uint64_t total = 0;
    for (const Counters* w : workers) {
        if (w == nullptr) {
            continue;
        }
        if constexpr (std::is_same_v<Member, local_counter>) {
            total += (w->*member).get();
        } else {
            total += (w->*member)[i].get();
        }
    }
    return total;
}

template <auto Member>
std::uint64_t field(const metrics_input& in, std::size_t i) {
    if constexpr (std::is_invocable_v<decltype(Member), const http_counters&>) {
        return sum_over(in.http, Member, i);
    } else {
        return sum_over(in.workers, Member, i);
    }
}

using counter_of = std::uint64_t (*)(const metrics_input&, std::size_t);
using value_of = sample_value (*)(const scrape&, std::size_t);
using label_of = std::string_view (*)(const scrape&, std::size_t);

struct metric {
    std::string_view name;
    metric_type type;
    std::string_view help;
    // Where the value comes from: a worker counter summed over the workers, or the scrape.
    // For a histogram, `counter` gives bucket i (the last one is +Inf) and `sum_us` the sum.
    counter_of counter;
    value_of value;
    // One sample per label value, i = 0 .. label_count - 1 (one unlabelled sample when
    // label_name is empty).
    std::string_view label_name;
    std::size_t label_count;
    label_of label_value;
    counter_of sum_us;
};

// The three shapes of table entry.
constexpr metric from_workers(std::string_view name, metric_type type, std::string_view help, counter_of counter,
                              std::string_view label_name = {}, std::size_t label_count = 1,
                              label_of label_value = nullptr) {
    return {name, type, help, counter, nullptr, label_name, label_count, label_value, nullptr};
}

constexpr metric from_scrape(std::string_view name, metric_type type, std::string_view help, value_of value,
                             std::string_view label_name = {}, label_of label_value = nullptr) {
    return {name, type, help, nullptr, value, label_name, 1, label_value, nullptr};
}

constexpr metric histogram_from_workers(std::string_view name, std::string_view help, counter_of buckets,
                                        std::size_t bucket_count, counter_of sum_us) {
    return {name, metric_type::histogram, help, buckets, nullptr, {}, bucket_count, nullptr, sum_us};
}

template <typename T>
sample_value optional_value(const std::optional<T>& v) {
    if (!v) {
        return std::monostate{};
    }
    return *v;
}

// A figure of the cluster's health; left out on a single node.
template <auto Field>
sample_value cluster_value(const scrape& s, std::size_t) {
    if (!s.in.cluster) {
        return std::monostate{};
    }
    return static_cast<std::uint64_t>((*s.in.cluster).*Field);
}

// A webhook figure; zero when the scrape has no sender.
template <auto Field>
sample_value webhook_value(const scrape& s, std::size_t) {
    if (s.in.webhooks == nullptr) {
        return std::uint64_t{0};
    }
    return (s.in.webhooks->*Field).load(std::memory_order_relaxed);
}

// Every metric parleyd exports, in the order they are printed.
const metric metric_table[] = {
    from_scrape(
        "parley_build_info", metric_type::gauge, "Build information; the value is always 1.",
        [](const scrape&, std::size_t) -> sample_value { return std::uint64_t{1}; }, "version",
        [](const scrape& s, std::size_t) { return s.in.version; }),
    from_scrape("parley_ready", metric_type::gauge,
                "1 while the daemon accepts new connections, 0 once shutdown has begun.",
                [](const scrape& s, std::size_t) -> sample_value { return std::uint64_t{s.in.ready ? 1u : 0u}; }),
    from_scrape("parley_workers", metric_type::gauge, "Worker threads.",
                [](const scrape& s, std::size_t) -> sample_value { return std::uint64_t{s.in.workers.size()}; }),
    from_workers("parley_connections", metric_type::gauge, "Open WebSocket connections.",
                 field<&worker_counters::connections_open>),
    from_workers("parley_connections_total", metric_type::counter,
                 "WebSocket connections accepted (completed upgrades).", field<&worker_counters::connections_total>),
    from_workers("parley_connections_rejected_total", metric_type::counter,
                 "Connections refused before the WebSocket upgrade, by reason.", field<&http_counters::rejected>,
                 "reason", reject_reason_count, [](const scrape&, std::size_t i) { return reject_labels[i]; }),
    from_workers("parley_http_requests_total", metric_type::counter,
                 "Plain HTTP requests answered (health, readiness, metrics, not found).",
                 field<&http_counters::http_requests>),
    from_workers("parley_handshake_failures_total", metric_type::counter,
                 "HTTP connections that failed to become WebSockets through the client's fault, by reason.",
                 field<&http_counters::handshake_failures>, "reason", handshake_failure_count,
                 [](const scrape&, std::size_t i) { return handshake_labels[i]; }),
    from_scrape("parley_users", metric_type::gauge, "Logged-in users.",
                [](const scrape& s, std::size_t) -> sample_value { return s.in.users; }),
    from_scrape("parley_rooms", metric_type::gauge, "Rooms that exist.",
                [](const scrape& s, std::size_t) -> sample_value { return s.in.rooms; }),
    from_scrape("parley_history_written_total", metric_type::counter,
                "Room messages written to the history file (0 with the memory store).",
                [](const scrape& s, std::size_t) -> sample_value { return s.in.history.written; }),
    from_scrape("parley_history_write_failures_total", metric_type::counter,
                "Failed writes of a batch to the history file; the messages are kept and written again.",
                [](const scrape& s, std::size_t) -> sample_value { return s.in.history.failures; }),
    from_scrape("parley_history_backlog", metric_type::gauge,
                "Room messages accepted and not yet written to the history file.",
                [](const scrape& s, std::size_t) -> sample_value {
                    return static_cast<std::uint64_t>(s.in.history.backlog);
                }),
    from_scrape("parley_history_memory_bytes", metric_type::gauge,
                "Bytes the rooms' logs hold in memory (an estimate: messages, frames, per-room overhead), "
                "in use or idle; idle ones are evicted above history.memory_budget_bytes.",
                [](const scrape& s, std::size_t) -> sample_value {
                    return static_cast<std::uint64_t>(std::max<std::int64_t>(s.in.history.memory_bytes, 0));
                }),
    from_scrape("parley_history_evictions_total", metric_type::counter,
                "Idle room logs evicted from memory to stay within history.memory_budget_bytes (read back "
                "from the file when used again; with the memory store, gone).",
                [](const scrape& s, std::size_t) -> sample_value { return s.in.history.evictions; }),
    // Webhooks ([[webhooks]]); zeros without receivers.
    from_scrape("parley_webhook_events_queued", metric_type::gauge,
                "Chat events waiting for a webhook receiver (each receiver's queue is bounded by queue_events).",
                &webhook_value<&webhook_counters::queued>),
    from_scrape("parley_webhook_events_delivered_total", metric_type::counter,
                "Chat events in batches a webhook receiver accepted (a 2xx answer).",
                &webhook_value<&webhook_counters::delivered>),
    from_scrape("parley_webhook_batches_delivered_total", metric_type::counter,
                "Batches of events a webhook receiver accepted.", &webhook_value<&webhook_counters::batches>),
    from_scrape("parley_webhook_retries_total", metric_type::counter,
                "Webhook POSTs that failed (an error, a timeout, a status other than 2xx); each batch is sent "
                "again after a backoff.",
                &webhook_value<&webhook_counters::retries>),
    from_scrape("parley_webhook_events_dropped_total", metric_type::counter,
                "Chat events that never reached a webhook receiver: its queue was full, a reload removed it, or "
                "the daemon stopped with them queued.",
                &webhook_value<&webhook_counters::dropped>),
    // The cluster's, left out on a single node.
    from_scrape("parley_cluster_degraded", metric_type::gauge,
                "1 while this node cannot reach the cluster's Redis (it serves its own users alone), else 0.",
                &cluster_value<&rooms::cluster_health::degraded>),
    from_scrape("parley_cluster_shards_down", metric_type::gauge,
                "Redis servers of cluster.redis other than the first that this node cannot reach (the rooms "
                "living there are served by this node alone until they return).",
                &cluster_value<&rooms::cluster_health::shards_down>),
    from_scrape("parley_cluster_events_received_total", metric_type::counter,
                "Events read from the cluster's channels (every node's joins and leaves, the messages of the "
                "rooms this node feeds, ...).",
                &cluster_value<&rooms::cluster_health::events_received>),
    from_scrape("parley_cluster_messages_received_total", metric_type::counter,
                "Room messages (says, moderation, edits, deletes) read from the channels of the rooms this node "
                "feeds.",
                &cluster_value<&rooms::cluster_health::messages_received>),
    from_scrape("parley_cluster_rooms_fed", metric_type::gauge,
                "Rooms whose messages this node receives: those with members here, and for a few seconds after.",
                &cluster_value<&rooms::cluster_health::rooms_fed>),
    from_scrape("parley_cluster_messages_sequenced_total", metric_type::counter,
                "Messages of this node's users numbered and stored by the cluster.",
                &cluster_value<&rooms::cluster_health::messages_sequenced>),
    from_scrape("parley_cluster_resyncs_total", metric_type::counter,
                "Times this node read the cluster's state (on joining, and after each loss of Redis).",
                &cluster_value<&rooms::cluster_health::resyncs>),
    from_scrape("parley_cluster_names_lost_total", metric_type::counter,
                "User names another node took while this one was cut off (their sessions here were closed).",
                &cluster_value<&rooms::cluster_health::names_lost>),
    from_scrape("parley_cluster_remote_users", metric_type::gauge, "Users logged in on the other nodes, as of the last cluster user list read (users request).",
                &cluster_value<&rooms::cluster_health::remote_users>),
    from_scrape("parley_cluster_remote_nodes", metric_type::gauge, "Other live nodes of the cluster.",
                &cluster_value<&rooms::cluster_health::remote_nodes>),
    from_workers("parley_messages_received_total", metric_type::counter,
                 "Complete WebSocket text messages received from clients.", field<&worker_counters::messages_received>),
    from_workers("parley_frames_sent_total", metric_type::counter,
                 "WebSocket frames written to clients, of every kind.", field<&worker_counters::frames_sent>),
    from_workers("parley_bytes_received_total", metric_type::counter, "Bytes received from clients.",
                 field<&worker_counters::bytes_received>),
    from_workers("parley_bytes_sent_total", metric_type::counter, "Bytes sent to clients.",
                 field<&worker_counters::bytes_sent>),
    from_workers("parley_write_queue_bytes", metric_type::gauge, "Bytes queued for writing on all connections.",
                 field<&worker_counters::write_queue_bytes>),
    from_workers("parley_says_total", metric_type::counter, "Room messages accepted (say requests).",
                 field<&worker_counters::says>),
    from_workers("parley_fanout_deliveries_total", metric_type::counter, "Room broadcast frames queued on members.",
                 field<&worker_counters::fanout_deliveries>),
    from_workers(
        "parley_errors_total", metric_type::counter, "Error replies sent to clients, by error code.",
        field<&worker_counters::errors>, "code", protocol::error_code_count,
        [](const scrape&, std::size_t i) { return protocol::wire_name(static_cast<protocol::error_code>(i)); }),
    from_workers("parley_slow_consumer_closes_total", metric_type::counter,
                 "Connections closed because their write queue passed the limit.",
                 field<&worker_counters::slow_consumer_closes>),
    from_workers("parley_idle_closes_total", metric_type::counter,
                 "Connections closed for silence or for not logging in in time.", field<&worker_counters::idle_closes>),
    histogram_from_workers("parley_broadcast_fanout_seconds",
                           "Time from a room posting a broadcast to a worker having queued it on every local member.",
                           field<&worker_counters::fanout_buckets>, rooms::fanout_bucket_us.size() + 1,
                           field<&worker_counters::fanout_sum_us>),
    from_scrape("process_resident_memory_bytes", metric_type::gauge, "Resident memory size in bytes.",
                [](const scrape& s, std::size_t) { return optional_value(s.process.resident_memory_bytes); }),
    from_scrape("process_cpu_seconds_total", metric_type::counter, "Total user and system CPU time spent in seconds.",
                [](const scrape& s, std::size_t) { return optional_value(s.process.cpu_seconds); }),
    from_scrape("process_open_fds", metric_type::gauge, "Number of open file descriptors.",
                [](const scrape& s, std::size_t) { return optional_value(s.process.open_fds); }),
    from_scrape("process_max_fds", metric_type::gauge, "Maximum number of open file descriptors.",
                [](const scrape& s, std::size_t) { return optional_value(s.process.max_fds); }),
    from_scrape("process_start_time_seconds", metric_type::gauge,
                "Start time of the process since the Unix epoch in seconds.",
                [](const scrape& s, std::size_t) { return optional_value(s.process.start_time_seconds); }),
};

std::string_view type_name(metric_type t) {
    switch (t) {
    case metric_type::counter:
        return "counter";
    case metric_type::gauge:
        return "gauge";
    case metric_type::histogram:
        return "histogram";
    }
    return "untyped";
}

void append_uint(std::string& out, std::uint64_t v) {
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    (void)ec;
    out.append(buf, end);
}

// Shortest text that reads back as the same double. `fixed` for bucket bounds ("0.00001", not
// "1e-05"), which only makes them easier to read.
void append_double(std::string& out, double v, bool fixed = false) {
    if (std::isnan(v)) {
        out += "NaN";
        return;
    }
    if (std::isinf(v)) {
        out += v > 0 ? "+Inf" : "-Inf";
        return;
    }
    char buf[400];  // a fixed-notation double can have ~330 digits
    auto [end, ec] = fixed ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                           : std::to_chars(buf, buf + sizeof buf, v);
    (void)ec;
    out.append(buf, end);
}

void append_value(std::string& out, const sample_value& v) {
    if (const auto* u = std::get_if<std::uint64_t>(&v)) {
        append_uint(out, *u);
    } else if (const auto* d = std::get_if<double>(&v)) {
        append_double(out, *d);
    }
}

// HELP text escapes backslash and newline; label values also escape the double quote.
void append_escaped(std::string& out, std::string_view text, bool quote) {
    for (char c : text) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else if (quote && c == '"') {
            out += "\\\"";
        } else {
            out += c;
        }
    }
}

void append_sample(std::string& out, std::string_view name, std::string_view suffix, std::string_view label_name,
                   std::string_view label_value, const sample_value& v) {
    out += name;
    out += suffix;
    if (!label_name.empty()) {
        out += '{';
        out += label_name;
        out += "=\"";
        append_escaped(out, label_value, true);
        out += "\"}";
    }
    out += ' ';
    append_value(out, v);
    out += '\n';
}

void append_histogram(std::string& out, const metric& m, const scrape& s) {
    std::uint64_t cumulative = 0;
    std::string le;
    for (std::size_t i = 0; i < m.label_count; ++i) {
        cumulative += m.counter(s.in, i);
        le.clear();
        if (i < rooms::fanout_bucket_us.size()) {
            append_double(le, static_cast<double>(rooms::fanout_bucket_us[i]) / 1e6, true);
        } else {
            le = "+Inf";
        }
        append_sample(out, m.name, "_bucket", "le", le, cumulative);
    }
    append_sample(out, m.name, "_sum", {}, {}, static_cast<double>(m.sum_us(s.in, 0)) / 1e6);
    // _count is the +Inf bucket rather than fanout_count: the workers keep counting while this
    // reads, and the two must agree.
    append_sample(out, m.name, "_count", {}, {}, cumulative);
}

}  // namespace

std::string render_metrics(const metrics_input& in) {
    scrape s{in, in.process != nullptr ? *in.process : read_process_stats()};
    std::string out;
    out.reserve(8192);
    std::string samples;
    for (const metric& m : metric_table) {
        samples.clear();
        if (m.type == metric_type::histogram) {
            append_histogram(samples, m, s);
        } else {
            for (std::size_t i = 0; i < m.label_count; ++i) {
                sample_value v = m.counter != nullptr ? sample_value{m.counter(s.in, i)} : m.value(s, i);
                if (std::holds_alternative<std::monostate>(v)) {
                    continue;
                }
                std::string_view label_value = m.label_value != nullptr ? m.label_value(s, i) : std::string_view{};
                append_sample(samples, m.name, {}, m.label_name, label_value, v);
            }
        }
        // A family with no sample (a process value that could not be read) is left out whole.
        if (samples.empty()) {
            continue;
        }
        out += "# HELP ";
        out += m.name;
        out += ' ';
        append_escaped(out, m.help, false);
        out += "\n# TYPE ";
        out += m.name;
        out += ' ';
        out += type_name(m.type);
        out += '\n';
        out += samples;
    }
    return out;
}

std::string_view label(reject_reason reason) { return reject_labels[static_cast<std::size_t>(reason)]; }

std::string_view label(handshake_failure failure) { return handshake_labels[static_cast<std::size_t>(failure)]; }

}  // namespace parley::server
