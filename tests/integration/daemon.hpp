#pragma once

#include <sys/types.h>

#include "temp_dir.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace parley::integration {

// The daemon executable the tests start: $PARLEY_DAEMON when set (another build's parleyd, e.g.
// a sanitized one, driven by these tests as built), else the parleyd of the build the tests
// belong to.
const char* parleyd_executable();

// How a stopped daemon ended.
struct exit_status {
    bool exited = false;     // exited normally; code is valid
    int code = -1;
    int signal = 0;          // the signal that ended it, if one did
    bool killed = false;     // it ignored SIGTERM until the deadline and got SIGKILL
    std::string describe() const;
};

// The real daemon as a child process, for one test.
//
// The constructor writes config_text to a fresh temporary file and starts the daemon with
// "--config FILE --bind 127.0.0.1 --port 0 --threads 2" plus extra_args (so a config file
// installed on the machine never leaks into a test). Unless the test picks the history store or
// file itself (--history-store, --history-path, --set history.store=/path=, or store or path in
// a [history] table), history goes to an SQLite file in a fresh temporary directory, removed
// with the daemon; its stdout and stderr on one pipe, and waits up to 10 s for the line "listening on ADDR:PORT".
// A background thread keeps reading the pipe (so the daemon never blocks on logging) and keeps
// every line for diagnostics. Throws std::runtime_error, with the output so far, when the daemon
// exits or stays silent instead.
//
// The child gets SIGKILL if the test process dies first. Not thread-safe except output().
class daemon_process {
public:
    explicit daemon_process(std::vector<std::string> extra_args = {}, std::string config_text = {});
    // Stops the daemon if stop() was not called.
    ~daemon_process();
    daemon_process(const daemon_process&) = delete;
    daemon_process& operator=(const daemon_process&) = delete;

    std::uint16_t port() const { return port_; }
    pid_t pid() const { return pid_; }
    // True when the running daemon is built with AddressSanitizer or ThreadSanitizer (it maps
    // their runtime), whatever this test binary is: such a daemon keeps freed memory aside, so
    // its resident size says nothing, and it serves requests several times slower.
    bool sanitized() const;

    // Sends SIGTERM and waits up to timeout for the exit; after that SIGKILL. Idempotent: later
    // calls return the first result.
    exit_status stop(std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));

    // True while the process has not exited (reaps it if it has).
    bool running();
    // Waits up to timeout for the daemon to exit by itself, signalling nobody; true once it has
    // (then stop() only returns its status). For tests that sent SIGTERM themselves: a stop()
    // right after would be a second signal, which the daemon answers with an immediate exit 1.
    bool wait_exit(std::chrono::milliseconds timeout);

    // The daemon's config file; write_config replaces its content (then send SIGHUP to reload).
    const std::string& config_path() const { return config_path_; }
    void write_config(const std::string& text);
    void send_signal(int signal);

    // Number of lines written so far, and a wait for a line containing text among those after
    // line `from` (so a test can wait for the log of something it just caused).
    std::size_t line_count() const;
    bool wait_for_line(const std::string& text, std::size_t from,
                       std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));

    // Every line the daemon has written so far (the kept ones, see keep_last_lines).
    std::vector<std::string> output() const;

    // From now on keeps only the newest `count` lines, for runs long enough that every line
    // would be a lot of memory; line_count() still counts every line, and wait_for_line(),
    // output() and tail() see the kept ones. Thread-safe.
    void keep_last_lines(std::size_t count);
    // The last count lines, joined, for failure messages.
    std::string tail(std::size_t count = 40) const;

private:
    // Stops the daemon if it runs, joins the reader, closes the pipe and removes the config
    // file. Idempotent.
    void release();
    void read_output();  // background thread body
    void add_line(std::string line);
    // Non-blocking reap; true once the process is gone.
    bool try_reap();

    std::string config_path_;
    std::unique_ptr<temp_dir> history_dir_;
    pid_t pid_ = -1;
    int output_fd_ = -1;
    std::uint16_t port_ = 0;
    bool reaped_ = false;
    exit_status status_;

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::string> lines_;
    std::size_t dropped_lines_ = 0;  // lines no longer kept, all before lines_
    std::size_t keep_lines_ = 0;     // 0: keep every line
    bool output_closed_ = false;
    bool stop_reading_ = false;
    std::thread reader_;
};

}  // namespace parley::integration
