#pragma once

#include <sys/types.h>

#include "temp_dir.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace parley::integration {

// A redis-server child process (found on PATH) for one test, listening on 127.0.0.1 only, with
// persistence off (--save "" --appendonly no), its working files and log in a fresh temporary
// directory. Not thread-safe. The child gets SIGKILL if the test process dies first.
class redis_process {
public:
    // What survives stop() and start(): nothing, or everything written (an append-only file in
    // the temporary directory, written through at every command), as a production Redis keeps it.
    enum class persistence { none, append_only };

    // Starts Redis on a free loopback port and waits until it answers PING. Throws
    // std::runtime_error, with the end of Redis's log, when it does not within 10 s.
    // cluster_node: started with --cluster-enabled (its nodes.conf in the temporary directory, so
    // a restarted node is the same member), to be joined into a Redis Cluster by the test.
    explicit redis_process(persistence kept = persistence::none, bool cluster_node = false);
    // The same on a given port (one the test reserved with reserved_port and released).
    explicit redis_process(std::uint16_t port);
    // Kills Redis (SIGKILL) if it still runs.
    ~redis_process();
    redis_process(const redis_process&) = delete;
    redis_process& operator=(const redis_process&) = delete;

    std::uint16_t port() const { return port_; }
    pid_t pid() const { return pid_; }
    bool running() const { return pid_ > 0; }

    // Starts Redis again, on the same port, after stop(); waits for PING as the constructor does.
    void start();
    // SIGTERM, and waits for the exit (SIGKILL after timeout). Every client connection is closed
    // by then. Does nothing when Redis is not running.
    void stop(std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));
    // SIGSTOP / SIGCONT: a hung Redis, whose sockets stay open (the kernel still completes TCP
    // handshakes) but which answers nothing.
    void pause();
    void resume();

    // The text of INFO section (e.g. "commandstats"); empty when Redis does not answer.
    std::string info(const std::string& section) const;

    // Every string in the reply to one command (nested arrays flattened), one per line; empty
    // when Redis does not answer. What a test reads of the cluster's keys directly.
    std::string command_text(const std::vector<std::string>& argv) const;

    // The last lines of Redis's log, for failure messages.
    std::string log_tail(std::size_t lines = 30) const;

private:
    // Forks and execs redis-server; true once it answers PING as this very process (its INFO
    // reports our child's pid), false when it exited first (the port was taken). Throws on
    // timeouts and fork or exec failures.
    bool launch();
    void kill_and_reap(int signal, std::chrono::milliseconds timeout);

    temp_dir dir_;
    persistence kept_ = persistence::none;
    bool cluster_node_ = false;
    std::uint16_t port_ = 0;
    pid_t pid_ = -1;
    bool paused_ = false;
};

// A loopback port that nobody listens on, held bound (not listening) until release(): connects
// to it are refused at once, and no other process can take the port meanwhile.
class reserved_port {
public:
    reserved_port();
    ~reserved_port();
    reserved_port(const reserved_port&) = delete;
    reserved_port& operator=(const reserved_port&) = delete;

    std::uint16_t port() const { return port_; }
    // Closes the socket, so that a server may bind the port.
    void release();

private:
    int fd_ = -1;
    std::uint16_t port_ = 0;
};

}  // namespace parley::integration
