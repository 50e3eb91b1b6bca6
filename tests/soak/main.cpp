// parley-soak: well-behaved clients chat steadily while hostile clients connect, stall, send
// garbage, flood, stop reading and reset connections. Passes when no well-behaved client lost a
// message or its connection, every hostile behaviour met the server action it provokes, and
// the daemon's memory and descriptors came back to their baseline once the hostile clients
// were gone. Usage and phases: docs/operations.md ("Soak test").
#include "daemon.hpp"
#include "good_room.hpp"
#include "hostile.hpp"
#include "metrics_scrape.hpp"
#include "process_memory.hpp"
#include "soak_checks.hpp"
#include "soak_config.hpp"
#include "verdict.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace parley::soak {
namespace {

using clock = std::chrono::steady_clock;
using seconds = std::chrono::seconds;

struct run_options {
    int seconds = 100;            // warm-up + hostile phase + quiet phase
    std::size_t rooms = 4;
    std::size_t members = 30;     // per room
    milliseconds say_interval{1500};
};

const char usage[] =
    "usage: parley-soak [--seconds N] [--rooms R] [--members M] [--say-interval-ms MS]\n"
    "  --seconds N          length of warm-up, hostile phase and quiet phase together (default 100, at least 40)\n"
    "  --rooms R            rooms of well-behaved clients (default 4)\n"
    "  --members M          well-behaved clients per room (default 30, at most 35)\n"
    "  --say-interval-ms MS how often each well-behaved client says something (default 1500)\n";

bool parse(int argc, char** argv, run_options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (i + 1 >= argc) {
            return false;
        }
        const long value = std::strtol(argv[++i], nullptr, 10);
        if (arg == "--seconds" && value >= 40) {
            o.seconds = static_cast<int>(value);
        } else if (arg == "--rooms" && value >= 1 && value <= 50) {
            o.rooms = static_cast<std::size_t>(value);
        } else if (arg == "--members" && value >= 2 && value <= 35) {
            // Below the per-address limit (40): each room connects from an address of its own.
            o.members = static_cast<std::size_t>(value);
        } else if (arg == "--say-interval-ms" && value >= 200) {
            o.say_interval = milliseconds(value);
        } else {
            return false;
        }
    }
    return true;
}

// Samples the daemon's memory and descriptors twice a second on a thread of its own.
class sampler {
public:
    explicit sampler(pid_t pid) : pid_(pid), thread_([this] { loop(); }) {}
    ~sampler() {
        stop_ = true;
        thread_.join();
    }
    // The samples taken since `since`.
    std::vector<process_sample> since(clock::time_point since) const {
        std::lock_guard lock(mutex_);
        std::vector<process_sample> out;
        for (const auto& [at, s] : samples_) {
            if (at >= since) {
                out.push_back(s);
            }
        }
        return out;
    }
    std::optional<process_sample> last() const {
        std::lock_guard lock(mutex_);
        return samples_.empty() ? std::nullopt : std::optional(samples_.back().second);
    }

private:
    void loop() {
        while (!stop_) {
            if (auto s = sample_process(pid_)) {
                std::lock_guard lock(mutex_);
                samples_.emplace_back(clock::now(), *s);
            }
            std::this_thread::sleep_for(milliseconds(500));
        }
    }

    pid_t pid_;
    std::atomic<bool> stop_{false};
    mutable std::mutex mutex_;
    std::vector<std::pair<clock::time_point, process_sample>> samples_;
    std::thread thread_;
};

std::uint64_t peak_rss(const std::vector<process_sample>& samples) {
    std::uint64_t peak = 0;
    for (const auto& s : samples) {
        peak = std::max(peak, s.rss_kb);
    }
    return peak;
}

std::size_t peak_fds(const std::vector<process_sample>& samples) {
    std::size_t peak = 0;
    for (const auto& s : samples) {
        peak = std::max(peak, s.open_fds);
    }
    return peak;
}

class soak_run {
public:
    explicit soak_run(const run_options& o) : options_(o) {}

    int run();

private:
    void progress(const char* phase, clock::time_point start);
    // Sleeps for `length`, printing progress every 10 s; false if the daemon died meanwhile.
    bool wait_phase(const char* phase, seconds length, clock::time_point start);
    std::uint64_t deliveries() const;
    std::uint64_t good_problems() const;
    // Waits up to `limit` until only the well-behaved clients remain; the last scrape.
    std::optional<metrics_snapshot> wait_settled(std::size_t baseline_fds, seconds limit);

    run_options options_;
    soak_limits limits_;
    std::unique_ptr<integration::daemon_process> daemon_;
    std::unique_ptr<sampler> sampler_;
    std::vector<std::unique_ptr<good_room>> rooms_;
    tally hostile_counts_;
};

std::uint64_t soak_run::deliveries() const {
    std::uint64_t total = 0;
    for (const auto& room : rooms_) {
        total += room->deliveries();
    }
    return total;
}

std::uint64_t soak_run::good_problems() const {
    std::uint64_t total = 0;
    for (const auto& room : rooms_) {
        total += room->problem_count();
    }
    return total;
}

void soak_run::progress(const char* phase, clock::time_point start) {
    const auto s = sampler_->last();
    std::uint64_t hostile_events = 0;
    for (const auto& [key, n] : hostile_counts_.snapshot()) {
        hostile_events += n;
    }
    std::printf("[%4lds] %-8s rss %6lu KiB (anon %6lu)  fds %5zu  deliveries %9lu  good-client problems %lu  "
                "hostile events %lu\n",
                static_cast<long>(std::chrono::duration_cast<seconds>(clock::now() - start).count()), phase,
                static_cast<unsigned long>(s ? s->rss_kb : 0), static_cast<unsigned long>(s ? s->anon_kb : 0),
                s ? s->open_fds : 0,
                static_cast<unsigned long>(deliveries()), static_cast<unsigned long>(good_problems()),
                static_cast<unsigned long>(hostile_events));
    std::fflush(stdout);
}

bool soak_run::wait_phase(const char* phase, seconds length, clock::time_point start) {
    const auto end = clock::now() + length;
    auto next_report = clock::now();
    while (clock::now() < end) {
        if (!daemon_->running()) {
            return false;
        }
        if (clock::now() >= next_report) {
            progress(phase, start);
            next_report += seconds(10);
        }
        std::this_thread::sleep_for(std::min<clock::duration>(milliseconds(250), end - clock::now()));
    }
    return daemon_->running();
}

std::optional<metrics_snapshot> soak_run::wait_settled(std::size_t baseline_fds, seconds limit) {
    const std::size_t good = options_.rooms * options_.members;
    const auto deadline = clock::now() + limit;
    std::optional<metrics_snapshot> m;
    while (clock::now() < deadline) {
        m = scrape_metrics(daemon_->port());
        // The fd count comes from /proc after the scrape's own connection has closed.
        std::this_thread::sleep_for(milliseconds(500));
        const auto s = sample_process(daemon_->pid());
        if (m && s && m->get("parley_connections") == static_cast<double>(good) &&
            m->get("parley_users") == static_cast<double>(good) && s->open_fds <= baseline_fds) {
            return m;
        }
    }
    return m;
}

int soak_run::run() {
    const int warmup_s = std::clamp(options_.seconds * 15 / 100, 15, 120);
    const int quiet_s = 10;
    const int hostile_s = options_.seconds - warmup_s - quiet_s;
    const std::size_t good = options_.rooms * options_.members;
    std::printf("parley-soak: %zu rooms x %zu well-behaved clients, one say each per %ld ms; warm-up %d s, "
                "hostile %d s, quiet %d s\n",
                options_.rooms, options_.members, static_cast<long>(options_.say_interval.count()), warmup_s,
                hostile_s, quiet_s);

    daemon_ = std::make_unique<integration::daemon_process>(std::vector<std::string>{}, daemon_config(limits_));
    std::printf("parleyd pid %d on port %u\n", static_cast<int>(daemon_->pid()), daemon_->port());
    // One line per WebSocket connection that ends: an hour's run would keep a million of them.
    daemon_->keep_last_lines(10000);
    sampler_ = std::make_unique<sampler>(daemon_->pid());
    verdict v;

    std::atomic<bool> chatting{true};
    std::vector<std::thread> room_threads;
    try {
        for (std::size_t i = 0; i < options_.rooms; ++i) {
            // Each room's clients come from an address of their own (127.0.1.1, 127.0.1.2, ...).
            // Each member reads the room's history every 20 s or so, as a client scrolling back
            // does: the baseline then includes the replies of up to 200 messages that the hostile
            // slow consumers also ask for.
            rooms_.push_back(std::make_unique<good_room>(daemon_->port(), i, options_.members,
                                                         "127.0.1." + std::to_string(i + 1), options_.say_interval,
                                                         milliseconds(20000), limits_.history_max_limit));
            rooms_.back()->connect();
            // The room starts at once: its members answer pings while the next rooms connect.
            room_threads.emplace_back(
                [room = rooms_.back().get(), &chatting] { room->run(chatting, milliseconds(30000)); });
        }
    } catch (...) {
        chatting = false;
        for (auto& t : room_threads) {
            t.join();
        }
        throw;
    }
    const auto start = clock::now();

    // Warm-up: only the well-behaved clients. Every room's history fills (the store keeps the
    // newest 200 per room), so the baseline already holds what the daemon keeps for good.
    bool alive = wait_phase("warm-up", seconds(warmup_s - 5), start);
    // The settle wait scrapes /metrics before the second measure; one scrape now puts the same
    // code (metrics rendering, /proc reading) in the baseline's resident pages.
    const auto warmup_metrics = scrape_metrics(daemon_->port());
    alive = alive && wait_phase("warm-up", seconds(2), start);
    const auto baseline_from = clock::now();
    alive = alive && wait_phase("warm-up", seconds(3), start);
    const process_sample baseline = median(sampler_->since(baseline_from));
    std::printf("baseline: rss %lu KiB (anon %lu KiB), %zu open descriptors\n",
                static_cast<unsigned long>(baseline.rss_kb), static_cast<unsigned long>(baseline.anon_kb),
                baseline.open_fds);

    // Hostile phase: every behaviour at once, while the rooms go on chatting.
    std::atomic<bool> hostile_running{true};
    hostile_env env{daemon_->port(), limits_, rooms_.front()->name(), &hostile_counts_, &hostile_running};
    const auto hostile_from = clock::now();
    {
        hostile_crowd crowd(env);
        if (alive) {
            crowd.start();
            alive = wait_phase("hostile", seconds(hostile_s), start);
        }
        hostile_running = false;
        crowd.join();  // each thread finishes its round: at most the longest server timeout plus slack
    }
    const auto hostile_samples = sampler_->since(hostile_from);
    progress("hostile", start);

    // Quiet: the hostile connections are gone (the server's timeouts and lingers have run out),
    // then the same measure as the baseline, with the same clients chatting.
    std::optional<metrics_snapshot> settled;
    process_sample after{};
    if (alive) {
        settled = wait_settled(baseline.open_fds, seconds(60));
        alive = wait_phase("quiet", seconds(quiet_s - 3), start);
        const auto after_from = clock::now();
        alive = alive && wait_phase("quiet", seconds(3), start);
        after = median(sampler_->since(after_from));
    }

    chatting = false;
    for (auto& t : room_threads) {
        t.join();
    }
    progress("drained", start);
    const auto final_metrics = alive ? scrape_metrics(daemon_->port()) : std::nullopt;

    std::printf("\nmemory: baseline rss %lu KiB (anon %lu, file %lu), hostile-phase peak %lu KiB, after %lu KiB "
                "(anon %lu, file %lu), %+.1f%%; descriptors: baseline %zu, peak %zu, after %zu\n",
                static_cast<unsigned long>(baseline.rss_kb), static_cast<unsigned long>(baseline.anon_kb),
                static_cast<unsigned long>(baseline.file_kb), static_cast<unsigned long>(peak_rss(hostile_samples)),
                static_cast<unsigned long>(after.rss_kb), static_cast<unsigned long>(after.anon_kb),
                static_cast<unsigned long>(after.file_kb),
                baseline.rss_kb ? 100.0 * (static_cast<double>(after.rss_kb) - static_cast<double>(baseline.rss_kb)) /
                                      static_cast<double>(baseline.rss_kb)
                                : 0.0,
                baseline.open_fds, peak_fds(hostile_samples), after.open_fds);
    std::printf("daemon log: %zu lines (one per WebSocket connection that ended, among others; "
                "the last 10,000 kept)\n",
                daemon_->line_count());
    std::printf("\nhostile clients (behaviour outcome = count):\n");
    for (const auto& [key, n] : hostile_counts_.snapshot()) {
        std::printf("  %-52s %lu\n", key.c_str(), static_cast<unsigned long>(n));
    }
    for (const auto& [behaviour, text] : hostile_counts_.notes()) {
        std::printf("  %s, first exception: %s\n", behaviour.c_str(), text.c_str());
    }
    std::printf("\nwell-behaved rooms:\n");
    std::uint64_t total_says = 0;
    for (auto& room : rooms_) {
        const good_room_report r = room->report();
        total_says += r.says;
        std::printf("  %s: %zu/%zu members connected, %lu says, %lu acks, %lu deliveries (%lu from hostile "
                    "senders), last seq %ld, %lu history replies, %lu presence/system/typing events\n",
                    r.room.c_str(), r.members_left, r.members, static_cast<unsigned long>(r.says),
                    static_cast<unsigned long>(r.acks), static_cast<unsigned long>(r.deliveries),
                    static_cast<unsigned long>(r.hostile_deliveries), static_cast<long>(r.final_seq),
                    static_cast<unsigned long>(r.history_replies), static_cast<unsigned long>(r.other_events));
        for (const std::string& p : r.problems) {
            std::printf("    problem: %s\n", p.c_str());
        }
    }

    std::printf("\nchecks:\n");
    v.require(alive, "the daemon ran through every phase");
    for (auto& room : rooms_) {
        const good_room_report r = room->report();
        v.require(r.problem_count == 0 && r.members_left == r.members && r.says == r.acks && r.says > 0,
                  r.room + ": every say acked and delivered to every member in order, nobody disconnected (" +
                      std::to_string(r.problem_count) + " problems)");
    }
    v.require(total_says > 0, "the well-behaved clients chatted");
    v.require(warmup_metrics && warmup_metrics->get("parley_connections") == static_cast<double>(good),
              "GET /metrics during the warm-up counts the " + std::to_string(good) + " well-behaved connections");
    check_hostile_outcomes(hostile_counts_, v);
    if (v.require(final_metrics.has_value(), "GET /metrics answered after the run")) {
        check_server_counters(*final_metrics, hostile_counts_, v);
    }
    if (v.require(settled.has_value(), "GET /metrics answered once the hostile clients were gone")) {
        check_settled(*settled, good, options_.rooms, v);
    }
    v.require(after.open_fds <= baseline.open_fds,
              "open descriptors after (" + std::to_string(after.open_fds) + ") <= baseline (" +
                  std::to_string(baseline.open_fds) + ")");
    // 10%: glibc keeps some freed memory and the good clients' traffic moves RSS by a little;
    // a leak per hostile connection (thousands of them) would show far above it.
    const double limit_kb = static_cast<double>(baseline.rss_kb) * 1.10;
    v.require(after.rss_kb > 0 && static_cast<double>(after.rss_kb) <= limit_kb,
              "rss after (" + std::to_string(after.rss_kb) + " KiB) within 10% of baseline (" +
                  std::to_string(baseline.rss_kb) + " KiB)");

    sampler_.reset();
    const integration::exit_status status = daemon_->stop();
    v.require(status.exited && status.code == 0, "the daemon exits 0 on SIGTERM (" + status.describe() + ")");
    if (v.failures() > 0) {
        std::printf("\ndaemon log (last lines):\n%s", daemon_->tail(60).c_str());
        std::printf("\nparley-soak: FAILED (%d checks)\n", v.failures());
        return 1;
    }
    std::printf("\nparley-soak: passed\n");
    return 0;
}

}  // namespace
}  // namespace parley::soak

int main(int argc, char** argv) {
    parley::soak::run_options options;
    if (!parley::soak::parse(argc, argv, options)) {
        std::fputs(parley::soak::usage, stderr);
        return 2;
    }
    try {
        return parley::soak::soak_run(options).run();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "parley-soak: %s\n", e.what());
        return 1;
    }
}
