#include "daemon.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#ifndef PARLEYD_PATH
#error "PARLEYD_PATH must name the daemon executable"
#endif

namespace parley::integration {

const char* parleyd_executable() {
    const char* chosen = std::getenv("PARLEY_DAEMON");
    return chosen != nullptr && *chosen != '\0' ? chosen : PARLEYD_PATH;
}

bool daemon_process::sanitized() const {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return true;  // the tests and the daemon are one build
#else
    std::ifstream maps("/proc/" + std::to_string(pid_) + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
        if (line.find("/libasan.so") != std::string::npos || line.find("/libtsan.so") != std::string::npos) {
            return true;
        }
    }
    return false;
#endif
}

namespace {

using clock = std::chrono::steady_clock;

constexpr auto start_timeout = std::chrono::seconds(10);

// True when the test picks the history store or its file itself: by flag, by --set, or in a
// [history] table of its config.
bool chooses_history_store(const std::vector<std::string>& args, const std::string& config) {
    for (const std::string& arg : args) {
        if (arg == "--history-path" || arg == "--history-store" || arg.rfind("history.path=", 0) == 0 ||
            arg.rfind("history.store=", 0) == 0) {
            return true;
        }
    }
    auto table = config.find("[history]");
    if (table == std::string::npos) {
        return false;
    }
    auto end = config.find("\n[", table + 1);
    std::string body = config.substr(table, end == std::string::npos ? std::string::npos : end - table);
    return body.find("\npath") != std::string::npos || body.find("\nstore") != std::string::npos;
}

}  // namespace

std::string exit_status::describe() const {
    std::string text;
    if (exited) {
        text = "exited with status " + std::to_string(code);
    } else if (signal != 0) {
        text = std::string("ended by signal ") + strsignal(signal);
    } else {
        text = "still running";
    }
    if (killed) {
        text += " (needed SIGKILL: SIGTERM was not enough)";
    }
    return text;
}

daemon_process::daemon_process(std::vector<std::string> extra_args, std::string config_text) {
    std::string pattern = (std::filesystem::temp_directory_path() / "parley-test-XXXXXX.toml").string();
    const int config_fd = ::mkstemps(pattern.data(), 5);
    if (config_fd < 0) {
        throw std::runtime_error(std::string("mkstemps: ") + std::strerror(errno));
    }
    ::close(config_fd);
    config_path_ = pattern;
    write_config(config_text);
    std::vector<std::string> args = {parleyd_executable(), "--config", config_path_, "--bind", "127.0.0.1",
                                     "--port",     "0",        "--threads",  "2"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    if (!chooses_history_store(extra_args, config_text)) {
        history_dir_ = std::make_unique<temp_dir>();
        args.push_back("--history-path");
        args.push_back(history_dir_->file("history.db"));
    }
    // Everything the child needs is prepared before fork: between fork and exec only
    // async-signal-safe calls are allowed (this process has threads).
    std::vector<char*> argv;
    for (std::string& arg : args) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);

    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    }
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const pid_t parent = ::getpid();

    pid_ = ::fork();
    if (pid_ < 0) {
        const int error = errno;
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
        ::close(null_fd);
        throw std::runtime_error(std::string("fork: ") + std::strerror(error));
    }
    if (pid_ == 0) {
        // A daemon must not outlive a crashed test run.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) {
            ::_exit(127);
        }
        if (null_fd >= 0) {
            ::dup2(null_fd, 0);
        }
        ::dup2(pipe_fds[1], 1);
        ::dup2(pipe_fds[1], 2);
        ::execv(argv[0], argv.data());
        static constexpr char message[] = "exec of the daemon failed\n";
        [[maybe_unused]] const auto ignored = ::write(2, message, sizeof message - 1);
        ::_exit(127);
    }
    ::close(pipe_fds[1]);
    if (null_fd >= 0) {
        ::close(null_fd);
    }
    output_fd_ = pipe_fds[0];
    reader_ = std::thread([this] { read_output(); });

    bool ready = false;
    {
        std::unique_lock lock(mutex_);
        ready = changed_.wait_until(lock, clock::now() + start_timeout,
                                    [this] { return port_ != 0 || output_closed_; }) &&
                port_ != 0;
    }
    if (!ready) {
        const exit_status status = stop(std::chrono::milliseconds(2000));
        std::string message = "the daemon did not report \"listening on ADDR:PORT\" within 10 s (";
        message.append(status.describe());
        message.append("); its output:\n");
        message.append(tail());
        // No destructor runs for an object whose constructor throws: release here, or the
        // reader thread's std::thread would end the process with std::terminate.
        release();
        throw std::runtime_error(message);
    }
}

daemon_process::~daemon_process() {
    release();
}

void daemon_process::release() {
    if (pid_ > 0 && !reaped_) {
        stop(std::chrono::milliseconds(2000));
    }
    if (reader_.joinable()) {
        {
            std::lock_guard lock(mutex_);
            stop_reading_ = true;
        }
        reader_.join();
    }
    if (output_fd_ >= 0) {
        ::close(output_fd_);
    }
    output_fd_ = -1;
    if (!config_path_.empty()) {
        ::unlink(config_path_.c_str());
        config_path_.clear();
    }
    history_dir_.reset();
}

void daemon_process::write_config(const std::string& text) {
    // Written to a new file and renamed over the old one, as editors and config managers do:
    // the daemon never reads a half-written file.
    const std::string next = config_path_ + ".new";
    {
        std::ofstream out(next, std::ios::trunc);
        out << text;
        if (!out) {
            throw std::runtime_error("cannot write " + next);
        }
    }
    if (::rename(next.c_str(), config_path_.c_str()) != 0) {
        throw std::runtime_error(std::string("rename: ") + std::strerror(errno));
    }
}

void daemon_process::send_signal(int signal) {
    if (!reaped_) {
        ::kill(pid_, signal);
    }
}

std::size_t daemon_process::line_count() const {
    std::lock_guard lock(mutex_);
    return dropped_lines_ + lines_.size();
}

bool daemon_process::wait_for_line(const std::string& text, std::size_t from, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] {
        for (std::size_t i = std::max(from, dropped_lines_); i < dropped_lines_ + lines_.size(); ++i) {
            if (lines_[i - dropped_lines_].find(text) != std::string::npos) {
                return true;
            }
        }
        return false;
    });
}

bool daemon_process::try_reap() {
    if (reaped_) {
        return true;
    }
    int status = 0;
    const pid_t result = ::waitpid(pid_, &status, WNOHANG);
    if (result != pid_) {
        return false;
    }
    reaped_ = true;
    if (WIFEXITED(status)) {
        status_.exited = true;
        status_.code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        status_.signal = WTERMSIG(status);
    }
    return true;
}

bool daemon_process::running() {
    return !try_reap();
}

bool daemon_process::wait_exit(std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    while (running()) {
        if (clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

exit_status daemon_process::stop(std::chrono::milliseconds timeout) {
    if (!reaped_) {
        ::kill(pid_, SIGTERM);
        const auto deadline = clock::now() + timeout;
        // Polling is the portable way to wait for a child with a deadline.
        while (!try_reap() && clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        if (!reaped_) {
            ::kill(pid_, SIGKILL);
            int status = 0;
            ::waitpid(pid_, &status, 0);
            reaped_ = true;
            status_.killed = true;
            status_.signal = SIGKILL;
        }
    }
    // Let the reader collect the last lines (the shutdown log) before it is told to stop.
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, std::chrono::seconds(2), [this] { return output_closed_; });
    return status_;
}

void daemon_process::read_output() {
    std::string partial;
    char buffer[4096];
    for (;;) {
        {
            std::lock_guard lock(mutex_);
            if (stop_reading_) {
                break;
            }
        }
        pollfd p{output_fd_, POLLIN, 0};
        const int ready = ::poll(&p, 1, 100);
        if (ready < 0 && errno != EINTR) {
            break;
        }
        if (ready <= 0) {
            continue;
        }
        const ssize_t n = ::read(output_fd_, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        partial.append(buffer, static_cast<std::size_t>(n));
        std::size_t end = 0;
        while ((end = partial.find('\n')) != std::string::npos) {
            add_line(partial.substr(0, end));
            partial.erase(0, end + 1);
        }
    }
    if (!partial.empty()) {
        add_line(partial);
    }
    std::lock_guard lock(mutex_);
    output_closed_ = true;
    changed_.notify_all();
}

namespace {
// The port of the start-up line "... listening on ADDR:PORT ...", or 0 when this is not it.
std::uint16_t listening_port(const std::string& line) {
    const std::string marker = "listening on ";
    std::size_t at = line.find(marker);
    if (at == std::string::npos) {
        return 0;
    }
    std::size_t colon = line.find(':', at + marker.size());
    std::size_t space = line.find(' ', at + marker.size());
    if (colon == std::string::npos || (space != std::string::npos && colon > space)) {
        return 0;
    }
    unsigned long port = 0;
    std::size_t i = colon + 1;
    for (; i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i) {
        port = port * 10 + static_cast<unsigned long>(line[i] - '0');
    }
    return (i == colon + 1 || port > 65535) ? 0 : static_cast<std::uint16_t>(port);
}
}  // namespace

void daemon_process::add_line(std::string line) {
    std::lock_guard lock(mutex_);
    if (port_ == 0) {
        port_ = listening_port(line);
    }
    lines_.push_back(std::move(line));
    if (keep_lines_ != 0 && lines_.size() > keep_lines_) {
        lines_.pop_front();
        ++dropped_lines_;
    }
    changed_.notify_all();
}

std::vector<std::string> daemon_process::output() const {
    std::lock_guard lock(mutex_);
    return {lines_.begin(), lines_.end()};
}

void daemon_process::keep_last_lines(std::size_t count) {
    std::lock_guard lock(mutex_);
    keep_lines_ = count;
    while (keep_lines_ != 0 && lines_.size() > keep_lines_) {
        lines_.pop_front();
        ++dropped_lines_;
    }
}

std::string daemon_process::tail(std::size_t count) const {
    std::lock_guard lock(mutex_);
    std::string text;
    const std::size_t first = lines_.size() > count ? lines_.size() - count : 0;
    for (std::size_t i = first; i < lines_.size(); ++i) {
        text += "  | " + lines_[i] + "\n";
    }
    return text;
}

}  // namespace parley::integration
