// parley-load: a load generator for parleyd (and anything else speaking protocol v1).
//
// Modes: fanout (throughput and latency of room fan-out), idle (memory per idle connection),
// churn (connect/login/join/say/close cycles per second). Each run prints human progress on
// stderr and ends with ONE line of JSON on stdout holding every figure.

#include "histogram.hpp"
#include "json_scan.hpp"
#include "load.hpp"
#include "sysinfo.hpp"
#include "worker.hpp"
#include "ws_wire.hpp"

#include <arpa/inet.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace parley::load {
namespace {

constexpr std::uint64_t fd_cap = 20000;  // hard cap on open files per process on these machines
constexpr std::uint64_t fd_reserve = 16;  // stdio, /proc reads, epoll instances and slack

std::atomic<bool> g_interrupted{false};

extern "C" void on_signal(int) { g_interrupted.store(true); }

const char* const usage_text =
    "usage: parley-load MODE [options]\n"
    "\n"
    "modes:\n"
    "  fanout  N connections join R rooms (connection i joins r<i % R>), the first P send says\n"
    "          stamped with their send time; every member measures latency; reports deliveries/s.\n"
    "  idle    N connections log in, join a room each and stay open for --hold seconds;\n"
    "          with --server-pid reports the server's memory per connection.\n"
    "  churn   C parallel loops of connect, upgrade, login, join, say, close; reports cycles/s.\n"
    "  --selftest  checks the generator's own parsers and framing.\n"
    "\n"
    "Figures: server_cpu_s is the server's utime+stime over the measured interval (softirq time\n"
    "spent on its behalf is not included); loadgen_cpu_util is this process's CPU seconds per\n"
    "second (near --threads means the generator was saturated); core_busy is how busy each core\n"
    "was, by anything, during the interval, to spot interference.\n"
    "\n"
    "common options:\n"
    "  --host A              server address, 127.0.0.x only (default 127.0.0.1)\n"
    "  --port P[,P...]       server port (default 8080); several: connection i goes to the\n"
    "                        (i mod count)-th (a cluster's nodes)\n"
    "  --threads T           generator threads, each an epoll loop (default 1)\n"
    "  --tls                 speak TLS (wss://) to a server whose port has [tls] set; the\n"
    "                        certificate is not checked\n"
    "  --deflate             offer permessage-deflate (the server's compression on): compressed\n"
    "                        messages are inflated and counted (compressed_messages, bytes_in)\n"
    "  --words               fanout: pad say texts with everyday words in random order instead\n"
    "                        of a run of 'x' (what compression meets in a chat)\n"
    "  --server-pid PID[,..] report the server's CPU seconds (and memory in idle mode); several:\n"
    "                        the sum of their CPU seconds (a cluster's nodes and its Redis)\n"
    "  --source-addrs K      bind client sockets to 127.0.0.1 .. 127.0.0.K (default 1)\n"
    "  --rooms R             rooms (default: fanout 1, idle 100, churn 10)\n"
    "  --setup-timeout S     seconds for all connections to log in and join (default 60)\n"
    "  --connect-batch B     connections being set up at once per thread (default 256)\n"
    "fanout:\n"
    "  --connections N (1000) --publishers P (1) --duration S (10) --warmup S (1)\n"
    "  --window W            says in flight per publisher, not yet echoed back (default 8)\n"
    "  --rate M              instead of a window: M says per second in total, open loop\n"
    "  --size B              bytes of say text (default 64)\n"
    "  --history-readers H   also H connections (h0..) in room \"hist\", each looping one history\n"
    "                        request at a time, newest page and old pages alternately; reports\n"
    "                        their round trip beside the fanout figures (default 0)\n"
    "  --history-limit L     messages asked for per history request (default 500, the daemon's\n"
    "                        default maximum)\n"
    "  --history-room-fill M says h0 puts into \"hist\" before the warmup (default 2000)\n"
    "idle:\n"
    "  --connections N (1000) --hold S (10)\n"
    "churn:\n"
    "  --concurrency C (50) --duration S (10) --cycle-timeout S (5)\n";

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "parley-load: %s (see parley-load --help)\n", message.c_str());
    std::exit(2);
}

// "a,b,c" -> {"a", "b", "c"} (empty parts kept, for parse_uint to refuse).
std::vector<std::string> split_commas(std::string_view text) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (true) {
        auto comma = text.find(',', start);
        parts.emplace_back(text.substr(start, comma - start));
        if (comma == std::string_view::npos) {
            return parts;
        }
        start = comma + 1;
    }
}

std::uint64_t parse_uint(std::string_view name, const char* text, std::uint64_t lo, std::uint64_t hi) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || v < lo || v > hi) {
        usage_error(std::string(name) + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return v;
}

double parse_seconds(std::string_view name, const char* text, double lo, double hi) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) {
        usage_error(std::string(name) + " must be a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return v;
}

// ---------------------------------------------------------------------------------------------
// One line of JSON.
class json_line {
public:
    json_line& num(std::string_view k, std::uint64_t v) {
        key(k);
        s_ += std::to_string(v);
        return *this;
    }
    json_line& num(std::string_view k, std::int64_t v) {
        key(k);
        s_ += std::to_string(v);
        return *this;
    }
    json_line& num(std::string_view k, double v, int decimals = 3) {
        key(k);
        if (!std::isfinite(v)) {
            s_ += "null";
            return *this;
        }
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
        s_ += buf;
        return *this;
    }
    json_line& opt(std::string_view k, std::optional<double> v, int decimals = 3) {
        if (v) {
            return num(k, *v, decimals);
        }
        key(k);
        s_ += "null";
        return *this;
    }
    json_line& str(std::string_view k, std::string_view v) {
        key(k);
        s_ += '"';
        for (const char ch : v) {
            if (ch == '"' || ch == '\\') {
                s_ += '\\';
                s_ += ch;
            } else if (static_cast<unsigned char>(ch) < 0x20) {
                s_ += ' ';
            } else {
                s_ += ch;
            }
        }
        s_ += '"';
        return *this;
    }
    json_line& boolean(std::string_view k, bool v) {
        key(k);
        s_ += v ? "true" : "false";
        return *this;
    }
    json_line& raw(std::string_view k, std::string_view json) {
        key(k);
        s_ += json;
        return *this;
    }
    std::string done() const { return s_ + "}"; }

private:
    void key(std::string_view k) {
        s_ += first_ ? "" : ",";
        first_ = false;
        s_ += '"';
        s_ += k;
        s_ += "\":";
    }
    std::string s_ = "{";
    bool first_ = true;
};

std::string number_list(const std::vector<double>& values) {
    std::string s = "[";
    for (std::size_t i = 0; i < values.size(); ++i) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.3f", i == 0 ? "" : ",", values[i]);
        s += buf;
    }
    return s + "]";
}

std::string percentiles_us(const histogram& h, bool with_999) {
    json_line j;
    auto us = [](std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
    j.num("samples", h.count());
    j.num("p50", us(h.quantile(0.50)), 1);
    j.num("p90", us(h.quantile(0.90)), 1);
    j.num("p99", us(h.quantile(0.99)), 1);
    if (with_999) {
        j.num("p99.9", us(h.quantile(0.999)), 1);
    }
    j.num("max", us(h.max()), 1);
    return j.done();
}

// ---------------------------------------------------------------------------------------------
// The workers of one run and their threads.
class team {
public:
    team(const options& o, control& ctl) : ctl_(ctl) {
        for (std::uint32_t i = 0; i < o.threads; ++i) {
            workers_.push_back(std::make_unique<worker>(o, ctl, i));
        }
    }
    ~team() { stop(); }
    team(const team&) = delete;
    team& operator=(const team&) = delete;

    void start() {
        for (auto& w : workers_) {
            worker* p = w.get();
            threads_.emplace_back([p] { p->run(); });
        }
    }
    void stop() {
        ctl_.set(phase::done);
        for (auto& t : threads_) {
            if (t.joinable()) {
                t.join();
            }
        }
        threads_.clear();
    }
    std::uint64_t sum(counter c) const {
        std::uint64_t s = 0;
        for (const auto& w : workers_) {
            s += w->get(c);
        }
        return s;
    }
    histogram latency() const {
        histogram h;
        for (const auto& w : workers_) {
            h.merge(w->latency());
        }
        return h;
    }
    histogram cycle_time() const {
        histogram h;
        for (const auto& w : workers_) {
            h.merge(w->cycle_time());
        }
        return h;
    }
    histogram history_time() const {
        histogram h;
        for (const auto& w : workers_) {
            h.merge(w->history_time());
        }
        return h;
    }
    std::string first_error() const {
        for (const auto& w : workers_) {
            if (!w->first_error().empty()) {
                return w->first_error();
            }
        }
        return {};
    }

private:
    control& ctl_;
    std::vector<std::unique_ptr<worker>> workers_;
    std::vector<std::thread> threads_;
};

double since(std::uint64_t start_ns) { return static_cast<double>(monotonic_ns() - start_ns) / 1e9; }

// Sleeps in 10 ms steps until done() or the time limit (or an interrupt); calls report() about
// once a second. Returns whether done() became true.
bool wait_until(double limit_s, const std::function<bool()>& done, const std::function<void()>& report) {
    const std::uint64_t start = monotonic_ns();
    std::uint64_t last_report = start;
    // Bounded by limit_s.
    while (since(start) < limit_s) {
        if (done()) {
            return true;
        }
        if (g_interrupted.load()) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (monotonic_ns() - last_report >= 1000000000ull) {
            last_report = monotonic_ns();
            report();
        }
    }
    return done();
}

// Waits until the counter stops moving for quiet_s (at most limit_s).
void wait_quiet(const team& tm, counter c, double quiet_s, double limit_s) {
    std::uint64_t last = tm.sum(c);
    std::uint64_t last_change = monotonic_ns();
    wait_until(
        limit_s,
        [&] {
            const std::uint64_t v = tm.sum(c);
            if (v != last) {
                last = v;
                last_change = monotonic_ns();
            }
            return since(last_change) >= quiet_s;
        },
        [] {});
}

std::optional<double> server_cpu(const options& o) {
    if (o.server_pids.empty()) {
        return std::nullopt;
    }
    double total = 0;
    for (int pid : o.server_pids) {
        auto seconds = process_cpu_seconds(pid);
        if (!seconds) {
            return std::nullopt;
        }
        total += *seconds;
    }
    return total;
}

std::optional<std::uint64_t> server_rss(const options& o) {
    return o.server_pid > 0 ? process_rss_kib(o.server_pid) : std::nullopt;
}

void add_common(json_line& j, const options& o, const char* mode) {
    j.str("mode", mode);
    j.str("host", o.host);
    j.num("port", static_cast<std::uint64_t>(o.port));
    j.num("threads", static_cast<std::uint64_t>(o.threads));
    j.boolean("tls", o.tls);
    j.boolean("deflate", o.deflate);
    j.boolean("words", o.words);
    j.num("source_addrs", static_cast<std::uint64_t>(o.source_addrs));
    j.num("rooms", static_cast<std::uint64_t>(o.rooms));
}

// Setup shared by fanout and idle: every connection connects, upgrades, logs in and joins.
// Returns the seconds it took, or nothing when some connection failed or time ran out.
std::optional<double> set_up(const options& o, const team& tm, const char* mode) {
    const std::uint64_t start = monotonic_ns();
    const std::uint32_t total = total_connections(o);
    const bool all = wait_until(
        o.setup_timeout,
        [&] { return tm.sum(c_joined) + tm.sum(c_failed) >= total; },
        [&] {
            std::fprintf(stderr, "[%s] setup %.0fs: joined %llu/%u failed %llu\n", mode, since(start),
                         static_cast<unsigned long long>(tm.sum(c_joined)), total,
                         static_cast<unsigned long long>(tm.sum(c_failed)));
        });
    const double took = since(start);
    if (!all || tm.sum(c_joined) < total) {
        std::fprintf(stderr, "[%s] setup incomplete after %.1fs: joined %llu/%u failed %llu (%s)\n", mode, took,
                     static_cast<unsigned long long>(tm.sum(c_joined)), total,
                     static_cast<unsigned long long>(tm.sum(c_failed)), tm.first_error().c_str());
        return std::nullopt;
    }
    std::fprintf(stderr, "[%s] all %u connections joined in %.2fs\n", mode, total, took);
    return took;
}

// The fill phase of fanout with history readers: h0 puts --history-room-fill says into "hist"
// while nobody else sends. Returns whether every say was acked in time. A refused say or a
// dropped connection ends it at once: the room would not hold what was asked (a daemon with its
// default rate limit refuses most of a fill, then disconnects the filler).
bool fill_history_room(const options& o, control& ctl, const team& tm) {
    const std::uint64_t start = monotonic_ns();
    ctl.set(phase::fill);
    wait_until(
        o.setup_timeout,
        [&] { return tm.sum(c_fill_acked) >= o.history_fill || tm.sum(c_fill_refused) > 0 || tm.sum(c_dropped) > 0; },
        [&] {
            std::fprintf(stderr, "[fanout] fill %.0fs: %llu/%u says answered\n", since(start),
                         static_cast<unsigned long long>(tm.sum(c_fill_acked)), o.history_fill);
        });
    if (tm.sum(c_fill_acked) < o.history_fill || tm.sum(c_fill_refused) > 0 || tm.sum(c_dropped) > 0) {
        std::fprintf(stderr, "[fanout] fill incomplete after %.1fs: %llu/%u says answered (%s)\n", since(start),
                     static_cast<unsigned long long>(tm.sum(c_fill_acked)), o.history_fill, tm.first_error().c_str());
        return false;
    }
    std::fprintf(stderr, "[fanout] room hist filled with %u says in %.2fs (first seq %llu)\n", o.history_fill, since(start),
                 static_cast<unsigned long long>(ctl.history_base.load()));
    // The other readers are still taking in the fill's messages.
    wait_quiet(tm, c_frames, 0.3, 20);
    return true;
}

// The history readers' figures: requests and round trips of those sent in the measured interval.
void add_history(json_line& j, const options& o, const team& tm, double measured) {
    const histogram h = tm.history_time();
    auto ms = [&](double q) {
        return h.count() > 0 ? std::optional<double>(static_cast<double>(h.quantile(q)) / 1e6) : std::nullopt;
    };
    const std::uint64_t requests = tm.sum(c_history_requests);
    j.num("history_readers", static_cast<std::uint64_t>(o.history_readers));
    j.num("history_limit", static_cast<std::uint64_t>(o.history_limit));
    j.num("history_room_fill", static_cast<std::uint64_t>(o.history_fill));
    j.num("history_requests", requests);
    j.num("history_requests_per_s", static_cast<double>(requests) / measured, 1);
    j.num("history_messages", tm.sum(c_history_messages));
    j.num("history_errors", tm.sum(c_history_errors));
    j.opt("history_p50_ms", ms(0.50));
    j.opt("history_p99_ms", ms(0.99));
    j.opt("history_max_ms", h.count() > 0 ? std::optional<double>(static_cast<double>(h.max()) / 1e6) : std::nullopt);
}

// ---------------------------------------------------------------------------------------------
int run_fanout(const options& o) {
    control ctl;
    ctl.t0 = monotonic_ns();
    const double fill_limit = o.history_readers > 0 ? o.setup_timeout + 20 : 0;
    ctl.hard_deadline = static_cast<std::uint64_t>((o.setup_timeout + 20 + fill_limit + o.warmup + o.duration + 3 + 30) * 1e9);
    team tm(o, ctl);
    tm.start();

    json_line j;
    add_common(j, o, "fanout");
    j.num("connections", static_cast<std::uint64_t>(o.connections));
    j.num("publishers", static_cast<std::uint64_t>(o.publishers));
    if (o.rate > 0) {
        j.num("rate", o.rate, 1);
    } else {
        j.num("window", static_cast<std::uint64_t>(o.window));
    }
    j.num("size", static_cast<std::uint64_t>(o.size));

    const auto setup_s = set_up(o, tm, "fanout");
    if (!setup_s) {
        tm.stop();
        j.str("error", "setup failed: " + tm.first_error());
        j.num("joined", tm.sum(c_joined));
        j.num("failed", tm.sum(c_failed));
        std::printf("%s\n", j.done().c_str());
        return 1;
    }
    // Let join traffic (presence, history) settle before measuring.
    wait_quiet(tm, c_frames, 0.3, 20);
    if (o.history_readers > 0 && !fill_history_room(o, ctl, tm)) {
        tm.stop();
        j.str("error", "history fill failed: " + tm.first_error());
        j.num("fill_answered", tm.sum(c_fill_acked));
        j.num("fill_refused", tm.sum(c_fill_refused));
        std::printf("%s\n", j.done().c_str());
        return 1;
    }

    ctl.set(phase::send);
    std::uint64_t last_deliveries = 0;
    auto progress = [&](const char* what, std::uint64_t start) {
        const std::uint64_t d = tm.sum(c_deliveries);
        std::fprintf(stderr, "[fanout] %s %.0fs: says %llu deliveries %llu (%llu/s)", what, since(start),
                     static_cast<unsigned long long>(tm.sum(c_says)), static_cast<unsigned long long>(d),
                     static_cast<unsigned long long>(d - last_deliveries));
        if (o.history_readers > 0) {
            std::fprintf(stderr, " history requests %llu", static_cast<unsigned long long>(tm.sum(c_history_requests)));
        }
        std::fputc('\n', stderr);
        last_deliveries = d;
    };
    const std::uint64_t warm_start = monotonic_ns();
    if (o.warmup > 0) {
        wait_until(o.warmup, [] { return false; }, [&] { progress("warmup", warm_start); });
    }

    // Measured interval.
    const std::uint64_t m_start = monotonic_ns();
    ctl.measure_start.store(m_start - ctl.t0);
    const auto cpu0 = server_cpu(o);
    const double self0 = self_cpu_seconds();
    const auto cores0 = read_core_times();
    const std::uint64_t bytes0 = tm.sum(c_bytes_in);
    const std::uint64_t d0 = tm.sum(c_deliveries);
    const std::uint64_t s0 = tm.sum(c_says);
    last_deliveries = d0;
    wait_until(o.duration, [] { return false; }, [&] { progress("measure", m_start); });
    const std::uint64_t m_end = monotonic_ns();
    ctl.measure_end.store(m_end - ctl.t0);
    const auto cpu1 = server_cpu(o);
    const double self1 = self_cpu_seconds();
    const auto cores1 = read_core_times();
    const std::uint64_t d1 = tm.sum(c_deliveries);
    const std::uint64_t bytes1 = tm.sum(c_bytes_in);
    const std::uint64_t s1 = tm.sum(c_says);
    const double measured = static_cast<double>(m_end - m_start) / 1e9;

    // Drain: stop sending; wait until everything expected arrived (history replies included),
    // deliveries stop, or 3 s.
    ctl.set(phase::drain);
    const std::uint64_t drain_start = monotonic_ns();
    std::uint64_t last_seen = tm.sum(c_deliveries);
    std::uint64_t last_change = drain_start;
    wait_until(
        3.0,
        [&] {
            const std::uint64_t d = tm.sum(c_deliveries);
            if (d >= tm.sum(c_expected) && tm.sum(c_history_waiting) == 0) {
                return true;
            }
            if (d != last_seen) {
                last_seen = d;
                last_change = monotonic_ns();
            }
            return since(last_change) >= 0.5;
        },
        [] {});
    const double drain_s = since(drain_start);
    tm.stop();

    const std::uint64_t says = tm.sum(c_says);
    const std::uint64_t deliveries = tm.sum(c_deliveries);
    const std::uint64_t expected = tm.sum(c_expected);
    const histogram lat = tm.latency();
    const double dps = static_cast<double>(d1 - d0) / measured;

    j.num("warmup_s", o.warmup, 1);
    j.num("duration_s", o.duration, 1);
    j.num("measured_s", measured);
    j.num("setup_s", *setup_s);
    j.num("drain_s", drain_s);
    j.num("says_sent", says);
    j.num("says_refused", tm.sum(c_refused));
    j.num("deliveries", deliveries);
    j.num("expected_deliveries", expected);
    j.num("lost", static_cast<std::int64_t>(expected) - static_cast<std::int64_t>(deliveries));
    j.num("measured_says", s1 - s0);
    j.num("measured_deliveries", d1 - d0);
    j.num("says_per_s", static_cast<double>(s1 - s0) / measured, 1);
    j.num("deliveries_per_s", dps, 1);
    j.raw("latency_us", percentiles_us(lat, true));
    j.num("seq_gaps", tm.sum(c_seq_gaps));
    j.num("seq_backwards", tm.sum(c_seq_backwards));
    j.num("dropped_connections", tm.sum(c_dropped));
    j.num("server_errors", tm.sum(c_server_errors));
    j.num("bad_frames", tm.sum(c_bad_frames));
    j.num("bytes_in", tm.sum(c_bytes_in));
    j.num("measured_bytes_in", bytes1 - bytes0);
    j.num("compressed_messages", tm.sum(c_compressed));
    if (o.rate > 0) {
        j.num("rate_skipped", tm.sum(c_rate_skipped));
    }
    if (o.history_readers > 0) {
        add_history(j, o, tm, measured);
    }
    if (o.server_pid > 0) {
        j.num("server_pid", static_cast<std::int64_t>(o.server_pid));
    }
    std::optional<double> server_cpu_s;
    if (cpu0 && cpu1) {
        server_cpu_s = *cpu1 - *cpu0;
    }
    j.opt("server_cpu_s", server_cpu_s);
    j.opt("server_cpu_util", server_cpu_s ? std::optional<double>(*server_cpu_s / measured) : std::nullopt);
    j.opt("deliveries_per_server_cpu_s",
          server_cpu_s && *server_cpu_s > 0 ? std::optional<double>(static_cast<double>(d1 - d0) / *server_cpu_s) : std::nullopt, 1);
    j.num("loadgen_cpu_s", self1 - self0);
    j.num("loadgen_cpu_util", (self1 - self0) / measured);
    j.raw("core_busy", number_list(core_busy(cores0, cores1)));
    j.str("first_error", tm.first_error());
    std::printf("%s\n", j.done().c_str());
    std::fprintf(stderr, "[fanout] %.0f deliveries/s, lost %lld, p99 %.0f us, generator CPU %.2f of %u thread(s)\n", dps,
                 static_cast<long long>(expected) - static_cast<long long>(deliveries),
                 static_cast<double>(lat.quantile(0.99)) / 1000.0, (self1 - self0) / measured, o.threads);
    if (o.history_readers > 0) {
        const histogram h = tm.history_time();
        std::fprintf(stderr, "[fanout] history: %llu requests, %llu messages, p50 %.2f ms, p99 %.2f ms, %llu errors\n",
                     static_cast<unsigned long long>(tm.sum(c_history_requests)),
                     static_cast<unsigned long long>(tm.sum(c_history_messages)), static_cast<double>(h.quantile(0.50)) / 1e6,
                     static_cast<double>(h.quantile(0.99)) / 1e6, static_cast<unsigned long long>(tm.sum(c_history_errors)));
    }
    return 0;
}

int run_idle(const options& o) {
    control ctl;
    ctl.t0 = monotonic_ns();
    ctl.hard_deadline = static_cast<std::uint64_t>((o.setup_timeout + 20 + o.hold + 30) * 1e9);
    const auto rss_before = server_rss(o);
    team tm(o, ctl);
    tm.start();

    json_line j;
    add_common(j, o, "idle");
    j.num("connections", static_cast<std::uint64_t>(o.connections));
    const auto setup_s = set_up(o, tm, "idle");
    if (!setup_s) {
        tm.stop();
        j.str("error", "setup failed: " + tm.first_error());
        j.num("joined", tm.sum(c_joined));
        j.num("failed", tm.sum(c_failed));
        std::printf("%s\n", j.done().c_str());
        return 1;
    }
    wait_quiet(tm, c_frames, 0.5, 20);
    // What the server sent for the joins: upgrades, welcomes, joined replies (with their member
    // lists) and what the members heard of the others (presence or presence_count).
    const std::uint64_t setup_bytes = tm.sum(c_bytes_in);
    const auto rss_after = server_rss(o);
    const std::uint64_t hold_start = monotonic_ns();
    wait_until(o.hold, [] { return false; }, [&] {
        std::fprintf(stderr, "[idle] hold %.0fs: open %llu dropped %llu\n", since(hold_start),
                     static_cast<unsigned long long>(tm.sum(c_joined) - tm.sum(c_dropped)),
                     static_cast<unsigned long long>(tm.sum(c_dropped)));
    });
    const double held = since(hold_start);
    const auto rss_end = server_rss(o);
    const double self_cpu = self_cpu_seconds();
    tm.stop();

    const std::uint64_t joined = tm.sum(c_joined);
    j.num("joined", joined);
    j.num("failed", tm.sum(c_failed));
    j.num("dropped_during_hold", tm.sum(c_dropped));
    j.num("connect_s", *setup_s);
    j.num("connects_per_s", static_cast<double>(joined) / *setup_s, 1);
    j.num("setup_bytes_in", setup_bytes);
    j.num("bytes_in_per_join", joined > 0 ? static_cast<double>(setup_bytes) / static_cast<double>(joined) : 0.0, 0);
    j.num("hold_s", held, 1);
    if (o.server_pid > 0) {
        j.num("server_pid", static_cast<std::int64_t>(o.server_pid));
    }
    auto kib = [](std::optional<std::uint64_t> v) { return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt; };
    j.opt("server_rss_before_kib", kib(rss_before), 0);
    j.opt("server_rss_after_kib", kib(rss_after), 0);
    j.opt("server_rss_end_kib", kib(rss_end), 0);
    std::optional<double> per_conn;
    if (rss_before && rss_after && joined > 0) {
        per_conn = (static_cast<double>(*rss_after) - static_cast<double>(*rss_before)) * 1024.0 / static_cast<double>(joined);
    }
    j.opt("bytes_per_connection", per_conn, 0);
    j.num("loadgen_cpu_s", self_cpu);
    j.str("first_error", tm.first_error());
    std::printf("%s\n", j.done().c_str());
    if (per_conn) {
        std::fprintf(stderr, "[idle] %llu connections, %.0f bytes of server RSS each, %.0f connects/s\n",
                     static_cast<unsigned long long>(joined), *per_conn, static_cast<double>(joined) / *setup_s);
    }
    return 0;
}

int run_churn(const options& o) {
    control ctl;
    ctl.t0 = monotonic_ns();
    ctl.hard_deadline = static_cast<std::uint64_t>((o.duration + o.cycle_timeout + 30) * 1e9);
    team tm(o, ctl);
    tm.start();

    const std::uint64_t start = monotonic_ns();
    const auto cpu0 = server_cpu(o);
    const double self0 = self_cpu_seconds();
    const auto cores0 = read_core_times();
    ctl.set(phase::send);
    std::uint64_t last_cycles = 0;
    wait_until(o.duration, [] { return false; }, [&] {
        const std::uint64_t c = tm.sum(c_cycles);
        std::fprintf(stderr, "[churn] %.0fs: cycles %llu (%llu/s) errors %llu\n", since(start), static_cast<unsigned long long>(c),
                     static_cast<unsigned long long>(c - last_cycles),
                     static_cast<unsigned long long>(tm.sum(c_err_connect) + tm.sum(c_err_handshake) + tm.sum(c_err_closed) +
                                                     tm.sum(c_err_server) + tm.sum(c_err_timeout)));
        last_cycles = c;
    });
    const double measured = since(start);
    const std::uint64_t cycles = tm.sum(c_cycles);
    const auto cpu1 = server_cpu(o);
    const double self1 = self_cpu_seconds();
    const auto cores1 = read_core_times();
    // Let the cycles in progress finish (they no longer count toward the rate).
    ctl.set(phase::drain);
    wait_until(o.cycle_timeout + 1, [&] { return tm.sum(c_active) == 0; }, [] {});
    tm.stop();

    json_line j;
    add_common(j, o, "churn");
    j.num("concurrency", static_cast<std::uint64_t>(o.concurrency));
    j.num("duration_s", o.duration, 1);
    j.num("measured_s", measured);
    j.num("cycles", cycles);
    j.num("cycles_per_s", static_cast<double>(cycles) / measured, 1);
    j.raw("cycle_us", percentiles_us(tm.cycle_time(), false));
    json_line e;
    e.num("connect", tm.sum(c_err_connect));
    e.num("handshake", tm.sum(c_err_handshake));
    e.num("closed", tm.sum(c_err_closed));
    e.num("server_error", tm.sum(c_err_server));
    e.num("timeout", tm.sum(c_err_timeout));
    j.raw("errors", e.done());
    j.num("errors_total", tm.sum(c_err_connect) + tm.sum(c_err_handshake) + tm.sum(c_err_closed) + tm.sum(c_err_server) +
                              tm.sum(c_err_timeout));
    j.num("unfinished_at_exit", tm.sum(c_active));
    if (o.server_pid > 0) {
        j.num("server_pid", static_cast<std::int64_t>(o.server_pid));
    }
    j.opt("server_cpu_s", cpu0 && cpu1 ? std::optional<double>(*cpu1 - *cpu0) : std::nullopt);
    j.num("loadgen_cpu_s", self1 - self0);
    j.num("loadgen_cpu_util", (self1 - self0) / measured);
    j.raw("core_busy", number_list(core_busy(cores0, cores1)));
    j.str("first_error", tm.first_error());
    std::printf("%s\n", j.done().c_str());
    std::fprintf(stderr, "[churn] %.0f cycles/s\n", static_cast<double>(cycles) / measured);
    return 0;
}

// ---------------------------------------------------------------------------------------------
int selftest() {
    int failures = 0;
    int checks = 0;
    auto check = [&](bool ok, const char* what) {
        ++checks;
        if (!ok) {
            ++failures;
            std::fprintf(stderr, "selftest FAILED: %s\n", what);
        }
    };

    // Scanner: top-level fields only, nested values skipped, any member order.
    {
        server_fields f;
        const std::string_view m =
            R"({"from":"u1","room":"r0","seq":42,"text":"t=123;p=7;xx\"y","ts":1700000000000,"type":"message"})";
        check(scan(m, f), "scan message");
        server_fields spaced;
        check(scan(" { \"seq\" : 5 , \"text\" : \"t=1;p=2\" , \"type\" : \"message\" } ", spaced) && spaced.seq == 5 &&
                  spaced.text == "t=1;p=2" && spaced.type == "message",
              "whitespace between tokens");
        check(f.type == "message" && f.seq == 42, "message type and seq");
        check(f.text == R"(t=123;p=7;xx\"y)", "message text with an escaped quote");
        std::uint64_t t = 0;
        std::uint64_t p = 0;
        check(read_stamp(f.text, t, p) && t == 123 && p == 7, "stamp and sender");
        check(!read_stamp("hello", t, p) && !read_stamp("t=1;", t, p) && !read_stamp("t=;p=1", t, p), "not a stamp");
    }
    {
        server_fields f;
        const std::string_view joined =
            R"({ "type" : "joined", "room":"r1","epoch":3,"members":["a","b"],)"
            R"("history":[{"type":"message","text":"t=1","seq":9}],"recovered":true })";
        check(scan(joined, f) && f.type == "joined" && f.text.empty() && f.seq == -1, "nested values are skipped");
        server_fields g;
        check(scan(R"({"type":"error","code":"rate_limited","message":"slow \\ down"})", g) && g.code == "rate_limited",
              "error code");
        server_fields h;
        check(!scan(R"({"type":"message","text":"unterminated)", h), "truncated JSON is refused");
    }
    // A history reply: the messages are counted, not read, whatever their text holds.
    {
        server_fields f;
        const std::string_view reply =
            R"({"type":"history","room":"hist","re":3,"messages":[)"
            R"({"type":"message","text":"a, [b] {c}","seq":1,"x":[1,2]}, {"type":"message","text":"\"]","seq":2}]})";
        check(scan(reply, f) && f.type == "history" && f.messages == 2 && f.seq == -1, "history messages counted");
        server_fields empty;
        check(scan(R"({"messages": [ ],"type":"history"})", empty) && empty.messages == 0 && empty.type == "history",
              "empty history");
        server_fields other;
        check(scan(R"({"type":"joined","history":[{"seq":1}]})", other) && other.messages == -1, "only \"messages\" is counted");
        server_fields cut;
        check(!scan(R"({"type":"history","messages":[{"seq":1},)", cut), "truncated history is refused");
    }
    // Histogram: bucket bounds round-trip and quantiles stay within 1/64.
    {
        histogram h;
        bool ok = true;
        for (std::uint64_t v : {0ull, 1ull, 127ull, 128ull, 129ull, 1000ull, 123456ull, 987654321ull, 1ull << 62}) {
            const std::size_t i = histogram::index_of(v);
            ok = ok && i < histogram::bucket_count && histogram::lower_of(i) <= v &&
                 v < histogram::lower_of(i) + histogram::width_of(i);
        }
        check(ok, "histogram bucket bounds");
        for (std::uint64_t v = 1; v <= 100000; ++v) {
            h.record(v * 1000);
        }
        const double p50 = static_cast<double>(h.quantile(0.5));
        const double p99 = static_cast<double>(h.quantile(0.99));
        check(std::abs(p50 - 50e6) / 50e6 < 0.02, "histogram p50");
        check(std::abs(p99 - 99e6) / 99e6 < 0.02, "histogram p99");
        check(h.max() == 100000000 && h.count() == 100000, "histogram max and count");
    }
    // Framing: a masked frame unmasks to the payload; header sizes for each length form.
    {
        fast_rng rng(1);
        for (std::size_t n : {0u, 5u, 125u, 126u, 1000u, 65535u, 65536u, 70000u}) {
            std::string payload(n, 'a');
            for (std::size_t i = 0; i < n; ++i) {
                payload[i] = static_cast<char>('a' + i % 26);
            }
            std::string out;
            append_masked_frame(out, ws_op::text, payload, rng);
            frame_header h;
            const std::size_t need = frame_need(out.data(), out.size(), h);
            bool ok = need == out.size() && h.masked && h.fin && h.opcode == 1 && h.payload_size == n;
            unsigned char mask[4];
            std::memcpy(mask, out.data() + h.header_size - 4, 4);
            for (std::size_t i = 0; ok && i < n; ++i) {
                ok = static_cast<char>(out[h.header_size + i] ^ static_cast<char>(mask[i & 3])) == payload[i];
            }
            check(ok, "masked frame round trip");
            frame_header partial;
            check(frame_need(out.data(), 1, partial) > 1, "incomplete header asks for more");
        }
    }
    // Handshake: RFC 6455's example key, and a generated key.
    {
        check(expected_accept("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", "accept of the RFC example");
        fast_rng rng(2);
        const std::string key = make_ws_key(rng);
        check(key.size() == 24 && key.substr(22) == "==", "generated key shape");
        const char* reason = "";
        const std::string head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                 "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
        check(check_upgrade_response(head, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", reason), "101 accepted");
        check(!check_upgrade_response(head, "wrong", reason), "wrong accept refused");
        check(!check_upgrade_response("HTTP/1.1 400 Bad Request\r\n\r\n", "x", reason), "400 refused");
    }
    json_line j;
    j.str("mode", "selftest");
    j.boolean("ok", failures == 0);
    j.num("checks", static_cast<std::uint64_t>(checks));
    j.num("failures", static_cast<std::uint64_t>(failures));
    std::printf("%s\n", j.done().c_str());
    return failures == 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
options parse_options(int argc, char** argv) {
    if (argc < 2) {
        usage_error("missing mode");
    }
    options o;
    const std::string_view mode = argv[1];
    if (mode == "fanout") {
        o.mode = run_mode::fanout;
    } else if (mode == "idle") {
        o.mode = run_mode::idle;
    } else if (mode == "churn") {
        o.mode = run_mode::churn;
    } else {
        usage_error("unknown mode '" + std::string(mode) + "'");
    }
    bool rooms_given = false;
    bool window_given = false;
    for (int i = 2; i < argc; ++i) {
        const std::string_view a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) {
                usage_error("missing value for " + std::string(a));
            }
            return argv[++i];
        };
        if (a == "--host") {
            o.host = value();
        } else if (a == "--port") {
            o.ports.clear();
            for (const std::string& part : split_commas(value())) {
                o.ports.push_back(static_cast<std::uint16_t>(parse_uint(a, part.c_str(), 1, 65535)));
            }
            o.port = o.ports.front();
        } else if (a == "--connections") {
            o.connections = static_cast<std::uint32_t>(parse_uint(a, value(), 1, fd_cap));
        } else if (a == "--rooms") {
            o.rooms = static_cast<std::uint32_t>(parse_uint(a, value(), 1, fd_cap));
            rooms_given = true;
        } else if (a == "--publishers") {
            o.publishers = static_cast<std::uint32_t>(parse_uint(a, value(), 1, fd_cap));
        } else if (a == "--window") {
            o.window = static_cast<std::uint32_t>(parse_uint(a, value(), 1, 100000));
            window_given = true;
        } else if (a == "--rate") {
            o.rate = parse_seconds(a, value(), 1, 1e8);
        } else if (a == "--duration") {
            o.duration = parse_seconds(a, value(), 0.1, 86400);
        } else if (a == "--warmup") {
            o.warmup = parse_seconds(a, value(), 0, 3600);
        } else if (a == "--size") {
            o.size = static_cast<std::uint32_t>(parse_uint(a, value(), 1, 4096));
        } else if (a == "--tls") {
            o.tls = true;
        } else if (a == "--deflate") {
            o.deflate = true;
        } else if (a == "--words") {
            o.words = true;
        } else if (a == "--threads") {
            o.threads = static_cast<std::uint32_t>(parse_uint(a, value(), 1, 64));
        } else if (a == "--server-pid") {
            o.server_pids.clear();
            for (const std::string& part : split_commas(value())) {
                o.server_pids.push_back(static_cast<int>(parse_uint(a, part.c_str(), 1, 1u << 30)));
            }
            o.server_pid = o.server_pids.front();
        } else if (a == "--source-addrs") {
            o.source_addrs = static_cast<std::uint32_t>(parse_uint(a, value(), 1, 254));
        } else if (a == "--hold") {
            o.hold = parse_seconds(a, value(), 0, 86400);
        } else if (a == "--concurrency") {
            o.concurrency = static_cast<std::uint32_t>(parse_uint(a, value(), 1, fd_cap));
        } else if (a == "--setup-timeout") {
            o.setup_timeout = parse_seconds(a, value(), 1, 3600);
        } else if (a == "--connect-batch") {
            o.connect_batch = static_cast<std::uint32_t>(parse_uint(a, value(), 1, fd_cap));
        } else if (a == "--history-readers") {
            o.history_readers = static_cast<std::uint32_t>(parse_uint(a, value(), 0, fd_cap));
        } else if (a == "--history-limit") {
            o.history_limit = static_cast<std::uint32_t>(parse_uint(a, value(), 1, 100000));
        } else if (a == "--history-room-fill") {
            o.history_fill = static_cast<std::uint32_t>(parse_uint(a, value(), 0, 10000000));
        } else if (a == "--cycle-timeout") {
            o.cycle_timeout = parse_seconds(a, value(), 0.1, 600);
        } else if (a == "--help" || a == "-h") {
            std::fputs(usage_text, stdout);
            std::exit(0);
        } else {
            usage_error("unknown option '" + std::string(a) + "'");
        }
    }

    // Loopback only: 127.0.0.x.
    if (inet_pton(AF_INET, o.host.c_str(), &o.host_addr) != 1 || (ntohl(o.host_addr.s_addr) >> 8) != 0x7f0000u) {
        usage_error("--host must be an IPv4 address 127.0.0.x; refusing to connect to '" + o.host + "'");
    }
    if (!rooms_given) {
        o.rooms = o.mode == run_mode::fanout ? 1u : o.mode == run_mode::idle ? std::min(100u, o.connections) : 10u;
    }
    if (o.mode == run_mode::fanout) {
        if (o.publishers > o.connections) {
            usage_error("--publishers must not exceed --connections");
        }
        if (o.rate > 0 && window_given) {
            usage_error("give either --window or --rate, not both");
        }
        // The say text must hold its "t=<ns>;p=<index>;" prefix; longer prefixes just exceed --size.
    }
    if (o.mode != run_mode::churn && o.rooms > o.connections) {
        usage_error("--rooms must not exceed --connections");
    }
    if (o.mode != run_mode::fanout && o.history_readers > 0) {
        usage_error("--history-readers is a fanout option");
    }
    const std::uint32_t sockets = o.mode == run_mode::churn ? o.concurrency : total_connections(o);
    if (o.threads > sockets) {
        o.threads = sockets;
    }
    const std::uint64_t limit = raise_fd_limit(fd_cap);
    const std::uint64_t needed = std::uint64_t{sockets} + o.threads + fd_reserve;
    if (needed > limit) {
        usage_error("this run needs about " + std::to_string(needed) + " file descriptors; the limit is " + std::to_string(limit) +
                    " (at most " + std::to_string(fd_cap) + " here)");
    }
    if (o.server_pid > 0 && !process_cpu_seconds(o.server_pid)) {
        usage_error("--server-pid " + std::to_string(o.server_pid) + ": no such process");
    }
    return o;
}

}  // namespace
}  // namespace parley::load

int main(int argc, char** argv) {
    using namespace parley::load;
    if (argc >= 2 && std::string_view(argv[1]) == "--selftest") {
        return selftest();
    }
    if (argc >= 2 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
        std::fputs(usage_text, stdout);
        return 0;
    }
    const options o = parse_options(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    try {
        switch (o.mode) {
        case run_mode::fanout:
            return run_fanout(o);
        case run_mode::idle:
            return run_idle(o);
        case run_mode::churn:
            return run_churn(o);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "parley-load: %s\n", e.what());
        return 1;
    }
    return 1;
}
