#include "redis_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <ctime>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

namespace parley::integration {

namespace {

using clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto redis_start_timeout = 10s;
constexpr int exec_failed = 127;

// A socket bound to 127.0.0.1 on `port`, or on a port the kernel picks when it is 0; -1 on
// failure.
int bind_loopback(std::uint16_t& port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    socklen_t length = sizeof address;
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        ::close(fd);
        return -1;
    }
    port = ntohs(address.sin_port);
    return fd;
}

// For a Redis Cluster member: a free port below the kernel's ephemeral range whose cluster bus
// port (10000 higher, which Redis requires to stay below 65536) is free too.
std::uint16_t free_cluster_port() {
    static std::minstd_rand random(static_cast<unsigned>(::getpid()) * 7919u + static_cast<unsigned>(::time(nullptr)));
    for (int tries = 0; tries < 1000; ++tries) {
        auto port = static_cast<std::uint16_t>(12000 + random() % 18000);
        auto bus = static_cast<std::uint16_t>(port + 10000);
        const int fd = bind_loopback(port);
        const int bus_fd = fd < 0 ? -1 : bind_loopback(bus);
        if (fd >= 0) {
            ::close(fd);
        }
        if (bus_fd >= 0) {
            ::close(bus_fd);
            return port;
        }
    }
    throw std::runtime_error("no free pair of loopback ports for a Redis Cluster member");
}

std::uint16_t free_port() {
    std::uint16_t port = 0;
    const int fd = bind_loopback(port);
    if (fd < 0) {
        throw std::runtime_error(std::string("cannot bind a loopback port: ") + std::strerror(errno));
    }
    ::close(fd);
    return port;
}

// True when the Redis on port answers, and is the process pid (not some other test's Redis that
// took the port first).
bool answers_as(std::uint16_t port, pid_t pid) {
    const timeval timeout{0, 500000};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port, timeout);
    if (c == nullptr) {
        return false;
    }
    bool ours = false;
    if (c->err == 0 && redisSetTimeout(c, timeout) == REDIS_OK) {
        auto* reply = static_cast<redisReply*>(redisCommand(c, "INFO server"));
        if (reply != nullptr) {
            if (reply->type == REDIS_REPLY_STRING) {
                const std::string info(reply->str, reply->len);
                ours = info.find("process_id:" + std::to_string(pid) + "\r\n") != std::string::npos;
            }
            freeReplyObject(reply);
        }
    }
    redisFree(c);
    return ours;
}

}  // namespace

std::string redis_process::info(const std::string& section) const {
    const timeval timeout{2, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, timeout);
    if (c == nullptr) {
        return {};
    }
    std::string text;
    if (c->err == 0 && redisSetTimeout(c, timeout) == REDIS_OK) {
        auto* reply = static_cast<redisReply*>(redisCommand(c, "INFO %s", section.c_str()));
        if (reply != nullptr) {
            if (reply->type == REDIS_REPLY_STRING) {
                text.assign(reply->str, reply->len);
            }
            freeReplyObject(reply);
        }
    }
    redisFree(c);
    return text;
}

namespace {

void append_reply_text(const redisReply* reply, std::string& out) {
    if (reply->type == REDIS_REPLY_ARRAY) {
        for (std::size_t i = 0; i < reply->elements; ++i) {
            append_reply_text(reply->element[i], out);
        }
    } else if (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS ||
               reply->type == REDIS_REPLY_ERROR) {
        out.append(reply->str, reply->len).push_back('\n');
    } else if (reply->type == REDIS_REPLY_INTEGER) {
        out.append(std::to_string(reply->integer)).push_back('\n');
    }
}

}  // namespace

std::string redis_process::command_text(const std::vector<std::string>& argv) const {
    const timeval timeout{2, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, timeout);
    if (c == nullptr) {
        return {};
    }
    std::string text;
    std::vector<const char*> args;
    std::vector<std::size_t> lengths;
    for (const std::string& a : argv) {
        args.push_back(a.data());
        lengths.push_back(a.size());
    }
    if (c->err == 0 && redisSetTimeout(c, timeout) == REDIS_OK) {
        auto* reply = static_cast<redisReply*>(
            redisCommandArgv(c, static_cast<int>(args.size()), args.data(), lengths.data()));
        if (reply != nullptr) {
            append_reply_text(reply, text);
            freeReplyObject(reply);
        }
    }
    redisFree(c);
    return text;
}

redis_process::redis_process(persistence kept, bool cluster_node) : kept_(kept), cluster_node_(cluster_node) {
    // The port is free when picked but may be taken before Redis binds it: then pick another.
    for (int tries = 0; tries < 5; ++tries) {
        port_ = cluster_node_ ? free_cluster_port() : free_port();
        if (launch()) {
            return;
        }
    }
    throw std::runtime_error("redis-server did not start on any of 5 free ports; its log:\n" + log_tail());
}

redis_process::redis_process(std::uint16_t port) : port_(port) {
    if (!launch()) {
        throw std::runtime_error("redis-server exited instead of listening on port " + std::to_string(port_) +
                                 "; its log:\n" + log_tail());
    }
}

redis_process::~redis_process() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
    }
}

void redis_process::start() {
    if (pid_ > 0) {
        return;
    }
    if (!launch()) {
        throw std::runtime_error("redis-server exited instead of listening again on port " + std::to_string(port_) +
                                 "; its log:\n" + log_tail());
    }
}

void redis_process::stop(std::chrono::milliseconds timeout) {
    if (pid_ <= 0) {
        return;
    }
    ::kill(pid_, SIGTERM);
    if (paused_) {
        ::kill(pid_, SIGCONT);  // a stopped process only acts on SIGTERM once continued
    }
    kill_and_reap(SIGKILL, timeout);
}

void redis_process::pause() {
    if (pid_ > 0 && !paused_) {
        ::kill(pid_, SIGSTOP);
        paused_ = true;
    }
}

void redis_process::resume() {
    if (pid_ > 0 && paused_) {
        ::kill(pid_, SIGCONT);
        paused_ = false;
    }
}

std::string redis_process::log_tail(std::size_t lines) const {
    std::ifstream in(dir_.file("redis.log"));
    std::deque<std::string> last;
    for (std::string line; std::getline(in, line);) {
        last.push_back(line);
        if (last.size() > lines) {
            last.pop_front();
        }
    }
    std::string text;
    for (const std::string& line : last) {
        text += line;
        text += '\n';
    }
    return text;
}

bool redis_process::launch() {
    const bool append_only = kept_ == persistence::append_only;
    std::vector<std::string> args = {"redis-server", "--port",   std::to_string(port_), "--bind", "127.0.0.1",
                                     "--save",       "",         "--appendonly",        append_only ? "yes" : "no",
                                     "--appendfsync", "always",  "--daemonize",         "no",
                                     "--dir",        dir_.path(), "--logfile",          dir_.file("redis.log")};
    if (cluster_node_) {
        // Full coverage off, as docs/cluster.md advises: while one master fails, the others go
        // on serving their slots (with it on, every master refuses until the failover is done).
        for (const char* arg : {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                "--cluster-node-timeout", "2000", "--cluster-require-full-coverage", "no"}) {
            args.emplace_back(arg);
        }
    }
    // Everything the child needs is prepared before fork: only async-signal-safe calls between
    // fork and exec.
    std::vector<char*> argv;
    for (std::string& arg : args) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    const pid_t parent = ::getpid();

    const pid_t pid = ::fork();
    if (pid < 0) {
        const int error = errno;
        if (null_fd >= 0) {
            ::close(null_fd);
        }
        throw std::runtime_error(std::string("fork: ") + std::strerror(error));
    }
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) {
            ::_exit(exec_failed);
        }
        if (null_fd >= 0) {
            ::dup2(null_fd, 0);
            ::dup2(null_fd, 1);
            ::dup2(null_fd, 2);
        }
        ::execvp(argv[0], argv.data());
        ::_exit(exec_failed);
    }
    if (null_fd >= 0) {
        ::close(null_fd);
    }
    pid_ = pid;
    paused_ = false;

    const auto deadline = clock::now() + redis_start_timeout;
    while (clock::now() < deadline) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            if (WIFEXITED(status) && WEXITSTATUS(status) == exec_failed) {
                throw std::runtime_error("cannot run redis-server (is it installed and on PATH?)");
            }
            return false;
        }
        if (answers_as(port_, pid_)) {
            return true;
        }
        std::this_thread::sleep_for(20ms);
    }
    kill_and_reap(SIGKILL, 0ms);
    throw std::runtime_error("redis-server did not answer PING on port " + std::to_string(port_) +
                             " within 10 s; its log:\n" + log_tail());
}

void redis_process::kill_and_reap(int signal, std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    int status = 0;
    while (true) {
        const pid_t done = ::waitpid(pid_, &status, WNOHANG);
        if (done == pid_ || (done < 0 && errno != EINTR)) {
            break;
        }
        if (clock::now() >= deadline) {
            ::kill(pid_, signal);
            if (paused_) {
                ::kill(pid_, SIGCONT);
            }
            while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
            }
            break;
        }
        std::this_thread::sleep_for(5ms);
    }
    pid_ = -1;
    paused_ = false;
}

reserved_port::reserved_port() {
    fd_ = bind_loopback(port_);
    if (fd_ < 0) {
        throw std::runtime_error(std::string("cannot bind a loopback port: ") + std::strerror(errno));
    }
}

reserved_port::~reserved_port() { release(); }

void reserved_port::release() {
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
}

}  // namespace parley::integration
