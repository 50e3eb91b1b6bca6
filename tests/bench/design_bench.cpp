// The broadcast head to head: each part of the fan-out design against the path as built with
// that ONE part changed, measured in the same run on real loopback TCP connections, so each
// part's gain is shown by a ratio and not claimed.
//
// The path as built (the real rooms/ code from the say on): room::say encodes the message once
// into one shared frame and posts one task to the worker; the worker's task walks its members and
// each member's session_output queues a reference to that frame; after a batch of messages each
// member's queue is written with ONE sendmsg carrying an iovec per queued frame, as the daemon's
// connection flush does (up to 256 frames per call, partial writes resumed from the byte they
// stopped at). The socket side lives in this file, with plain POSIX calls, because server/ is
// the daemon's and not a library to borrow from here.
//
// One benchmark iteration = one pass of one broadcasting thread: the publisher says 8 messages
// (typical chat lines) into a room of 1,000 members, the worker runs the 8 delivery tasks, then
// every member's queue is flushed: 8,000 member deliveries per pass. The worker's tasks run on
// the benchmark thread (inline on drain), so everything a pass costs is on that thread.
//
// Variants, each differing from the one it is compared with in ONE thing:
//
//   single/as_built                 as described above
//   single/reencode_per_member      the member's output re-encodes the message (encode_message
//                                   with the same fields) and queues its own copy instead of a
//                                   reference to the shared frame. The room still encodes once
//                                   (1 in 1,000 of the encodes, within the noise).
//                                   as_built / this = what encoding once gains
//   single/one_write_per_frame      each queued frame is written by its own sendmsg (one iovec):
//                                   the same syscall as as_built, so only the frames per call
//                                   change (8 to 1); with TCP_NODELAY each is its own segment.
//                                   as_built / this = what gathering the writes gains
//   single_no_io/...                as_built and reencode_per_member with the writes left out
//                                   (the queues are released as if written): how much of the
//                                   re-encoding's cost is the encoding itself, and how much is
//                                   the writes copying from 8,000 buffers instead of 8
//
//   lock/as_built                   2 threads, each a worker broadcasting into its own room of
//                                   1,000 members: the path as built, no per-member lookup at all
//                                   (each worker keeps its own members list)
//   lock/sharded_registry_lookup    the same, and every delivery (each member, each message)
//                                   also looks the member's name up in a user_registry of 10,000
//                                   names: sharded, lock-free reads
//   lock/global_mutex_lookup        the same lookups through ONE std::mutex around one
//                                   unordered_map holding the same 10,000 names
//                                   sharded / global = what avoiding one global lock gains;
//                                   as_built / sharded = what not looking members up gains
//   lock_no_io/...                  the three lock variants again with the writes left out: the
//                                   CPU-bound fan-out, where a per-delivery lock weighs most.
//                                   Their ratios are an upper bound of the lock's share; the
//                                   lock/ ones, with the writes, are what a real pass shows.
//
// What is counted. single/ variants: items_per_second is member deliveries per CPU-second of the
// broadcasting thread (the default CPU time), which holds up better than wall-clock time when
// other work shares the machine. Loopback does the receiving side's TCP work in the writer's
// syscall, and that is charged to the writing thread unless the kernel accounts IRQ time
// separately (CONFIG_IRQ_TIME_ACCOUNTING); the drain thread's reads are not counted (they are the
// clients' cost). lock/ variants: items_per_second is deliveries per wall-clock second of the two
// threads together (UseRealTime), since a thread waiting for the lock uses no CPU but delivers
// nothing. Every variant also reports cpu_ns_per_delivery (thread CPU time per delivery,
// averaged over the threads) so the groups can be read on the same scale.
//
// Expected reading: ratios within one run (run with --benchmark_repetitions=3 and compare the
// medians on a shared machine). The lock/ variants run 2 broadcasting threads and the drain
// thread on 2 cores, so their absolute figures are not comparable with single/ ones.
//
// Setup: 2 rooms x 1,000 members = 2,000 loopback TCP connections (4,000 descriptors). The
// writing end is non-blocking with TCP_NODELAY, as the daemon sets it; buffers are the kernel's
// autotuned defaults, as the daemon leaves them. One drain thread reads every peer end through
// edge-triggered epoll and discards the bytes, concurrently with the writes. A write that finds
// the socket full (EAGAIN) waits for it with poll and is counted: `eagain` should be 0, or the
// figures include waiting for the reader. Each run ends by waiting for the drain thread to catch
// up (outside the timing), so a run never leaves its bytes to the next one.
//
// Other counters: deliveries_per_write (8 for gathered writes, 1 for one write per frame) and
// bytes_per_delivery (the same for re-encoded frames as for shared ones: identical bytes).

#include "protocol/server_messages.hpp"
#include "protocol/shared_frame.hpp"
#include "registry/user_registry.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/history/memory_history_store.hpp"
#include "rooms/room.hpp"
#include "rooms/worker_context.hpp"
#include "tests/bench/bench_support.hpp"

#include <benchmark/benchmark.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

using parley::bench::drained_executor;
using parley::protocol::shared_frame;
using parley::registry::session_handle;
using parley::registry::user_registry;
using parley::rooms::chat_session;
using parley::rooms::worker_context;

constexpr std::uint32_t lane_count = 2;           // broadcasting threads, one worker and room each
constexpr std::size_t members_per_room = 1000;
constexpr std::size_t batch = 8;                   // messages per member per pass
constexpr std::uint32_t population = 10000;        // names in the lookup tables
constexpr std::size_t max_iov = 256;               // frames per gathered write, as the daemon
constexpr std::int64_t first_ts = 1'764'460'800'000;
constexpr std::int64_t first_seq = 100'000;  // seqs of the run have 6 digits (up to 900,000 messages)

// What the member's output does with a frame the room hands it.
enum class delivery_mode {
    shared_reference,     // as built: queue a reference to the one shared frame
    reencode,             // encode the message again for this member
    registry_lookup,      // as built, after looking the member up in a user_registry
    global_mutex_lookup,  // as built, after looking the member up in a one-mutex map
};

// How a member's queue goes out at the end of a pass.
enum class write_mode {
    gathered,   // as built: one sendmsg, an iovec per frame
    per_frame,  // one sendmsg per frame
    none,       // not written: the references are released as a flush would
};

// The design the registry replaced: one lock for every name.
class one_mutex_map {
public:
    void insert(const std::string& name, session_handle h) {
        std::lock_guard lock(mutex_);
        map_.emplace(name, h);
    }
    std::optional<session_handle> lookup(const std::string& name) const {
        std::lock_guard lock(mutex_);
        const auto it = map_.find(name);
        return it == map_.end() ? std::nullopt : std::optional(it->second);
    }

private:
    mutable std::mutex mutex_;
    std::unordered_map<std::string, session_handle> map_;
};

std::string user_name(std::uint32_t i) {
    std::string name = "user_";
    name += std::to_string(i);
    return name;
}

// The handle each name has in the lookup tables (what a lookup must return).
session_handle handle_of(std::uint32_t i) { return {i % lane_count, i}; }

// What a lane counts; read by its own thread after each run.
struct lane_stats {
    std::uint64_t write_calls = 0;
    std::uint64_t bytes_written = 0;
    std::uint64_t eagain = 0;
    std::uint64_t write_errors = 0;
    std::uint64_t lookup_misses = 0;
    std::uint64_t closes = 0;
};

struct message_fields {
    std::string_view text;
    std::int64_t seq = 0;
    std::int64_t ts = 0;
};

struct lane;

// A member's outbound side: a queue of frame references and a real socket.
class socket_output final : public parley::rooms::session_output {
public:
    socket_output(lane& owner, int fd, std::uint32_t id) : lane_(owner), fd_(fd), name_(user_name(id)), id_(id) {}
    ~socket_output() override { ::close(fd_); }
    socket_output(const socket_output&) = delete;
    socket_output& operator=(const socket_output&) = delete;

    void send(const shared_frame& frame) override;
    void close(parley::protocol::close_code, std::string_view) override;

    const std::string& name() const { return name_; }
    // Writes the queue as the lane's write mode says, then drops the references.
    void flush();
    void discard() { queue_.clear(); }

private:
    void write_queue(std::size_t frames_per_call);

    lane& lane_;
    int fd_;
    std::string name_;
    std::uint32_t id_;
    std::vector<shared_frame> queue_;
};

struct member {
    member(worker_context& worker, lane& owner, int fd, std::uint32_t id)
        : output(owner, fd, id), session(worker, output) {}
    socket_output output;  // before session: the session refers to it
    chat_session session;
};

// One broadcasting thread's share: its worker, its room, its members. Aligned so that two lanes'
// counters never share a cache line.
struct alignas(64) lane {
    explicit lane(std::uint32_t i) : index(i), context(i, executor), room_name("room_") { room_name += std::to_string(i); }

    // Finds the fields of the message whose frame is being delivered. The worker runs the pass's
    // tasks in order, each to every member before the next, so a new frame means the next message.
    const message_fields& message_of(const shared_frame& frame) {
        if (frame.identity() != current_frame) {
            current_frame = frame.identity();
            ++current_message;
        }
        return messages[std::min(current_message, batch - 1)];
    }

    std::uint32_t index;
    drained_executor executor;
    worker_context context;
    std::string room_name;
    std::string publisher;
    std::shared_ptr<parley::rooms::room> room;
    std::vector<std::unique_ptr<member>> members;

    delivery_mode delivery = delivery_mode::shared_reference;
    write_mode writing = write_mode::gathered;
    const user_registry* registry = nullptr;
    const one_mutex_map* global_map = nullptr;

    std::array<message_fields, batch> messages{};
    const void* current_frame = nullptr;
    std::size_t current_message = 0;

    std::int64_t ts = first_ts;
    lane_stats stats;
};

void socket_output::send(const shared_frame& frame) {
    switch (lane_.delivery) {
    case delivery_mode::shared_reference: queue_.push_back(frame); return;
    case delivery_mode::reencode: {
        const message_fields& m = lane_.message_of(frame);
        queue_.push_back(parley::protocol::encode_message(lane_.room_name, lane_.publisher, m.text, m.seq, m.ts));
        return;
    }
    case delivery_mode::registry_lookup: {
        const auto found = lane_.registry->lookup(name_);
        lane_.stats.lookup_misses += !found || *found != handle_of(id_);
        queue_.push_back(frame);
        return;
    }
    case delivery_mode::global_mutex_lookup: {
        const auto found = lane_.global_map->lookup(name_);
        lane_.stats.lookup_misses += !found || *found != handle_of(id_);
        queue_.push_back(frame);
        return;
    }
    }
}

void socket_output::close(parley::protocol::close_code, std::string_view) { ++lane_.stats.closes; }

void socket_output::flush() {
    switch (lane_.writing) {
    case write_mode::gathered: write_queue(max_iov); break;
    case write_mode::per_frame: write_queue(1); break;
    case write_mode::none: break;
    }
    queue_.clear();
}

// The daemon's flush with a chosen number of frames per call: an iovec per frame, the first one
// starting where a partial write stopped.
void socket_output::write_queue(std::size_t frames_per_call) {
    lane_stats& stats = lane_.stats;
    std::size_t head = 0;    // first frame not completely written
    std::size_t offset = 0;  // bytes of queue_[head] already written
    while (head < queue_.size()) {
        std::array<iovec, max_iov> iov;
        const std::size_t count = std::min(queue_.size() - head, frames_per_call);
        for (std::size_t i = 0; i < count; ++i) {
            const shared_frame& f = queue_[head + i];
            const std::size_t skip = i == 0 ? offset : 0;
            iov[i].iov_base = const_cast<char*>(f.data() + skip);
            iov[i].iov_len = f.size() - skip;
        }
        msghdr msg{};
        msg.msg_iov = iov.data();
        msg.msg_iovlen = count;
        const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
        ++stats.write_calls;
        if (n >= 0) {
            stats.bytes_written += static_cast<std::uint64_t>(n);
            auto left = static_cast<std::size_t>(n);
            while (left > 0) {
                const std::size_t rest = queue_[head].size() - offset;
                if (left < rest) {
                    offset += left;
                    break;
                }
                left -= rest;
                ++head;
                offset = 0;
            }
            continue;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            // The daemon would wait for writability in its event loop; here the pass waits.
            ++stats.eagain;
            pollfd p{fd_, POLLOUT, 0};
            ::poll(&p, 1, 1000);
            continue;
        }
        ++stats.write_errors;
        return;
    }
}

// Everything the variants share, built once for the whole run: making 2,000 connections and
// 2,000 sessions takes far longer than a pass.
class design_world {
public:
    design_world() : settings_(parley::bench::bench_settings()) {
        std::vector<worker_context*> workers;
        for (std::uint32_t i = 0; i < lane_count; ++i) {
            lanes_.push_back(std::make_unique<lane>(i));
            workers.push_back(&lanes_.back()->context);
        }
        hub_ = std::make_unique<parley::rooms::chat_hub>(
            settings_, parley::rooms::make_memory_history_store(settings_.history_per_room, first_ts), workers);
        for (std::uint32_t i = 0; i < population; ++i) {
            registry_.try_register(user_name(i), handle_of(i), 1);
            global_map_.insert(user_name(i), handle_of(i));
        }
        if (!open_drain() || !connect_members()) {
            return;
        }
        drain_thread_ = std::thread([this] { drain_loop(); });
        ready_ = true;
    }

    ~design_world() {
        if (drain_thread_.joinable()) {
            const std::uint64_t one = 1;
            [[maybe_unused]] const auto n = ::write(stop_fd_, &one, sizeof one);
            drain_thread_.join();
        }
        // Sessions leave their rooms through the hub, so they go before it.
        for (auto& l : lanes_) {
            l->members.clear();
            l->room.reset();
            l->executor.drain();
        }
        for (int fd : peer_fds_) {
            ::close(fd);
        }
        for (int fd : {epoll_fd_, stop_fd_}) {
            if (fd >= 0) {
                ::close(fd);
            }
        }
    }
    design_world(const design_world&) = delete;
    design_world& operator=(const design_world&) = delete;

    const std::string& error() const { return error_; }
    bool ready() const { return ready_; }
    lane& lane_at(std::size_t i) { return *lanes_.at(i); }

    // Called by each thread after its run with the bytes it wrote in it; then waits (up to 10 s)
    // until the drain thread has read everything written so far by anyone.
    bool settle(std::uint64_t written) {
        const std::uint64_t target = written_.fetch_add(written, std::memory_order_acq_rel) + written;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (drained_.load(std::memory_order_acquire) < target) {
            if (std::chrono::steady_clock::now() > deadline) {
                return false;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        return true;
    }

private:
    bool fail(const char* what) {
        error_ = what;
        error_ += ": ";
        error_ += std::strerror(errno);
        return false;
    }

    bool open_drain() {
        epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
        stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (epoll_fd_ < 0 || stop_fd_ < 0) {
            return fail("epoll/eventfd");
        }
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = stop_fd_;
        if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, stop_fd_, &ev) != 0) {
            return fail("epoll_ctl");
        }
        return true;
    }

    // One loopback connection per member: the accepted end is the member's (the daemon's side,
    // written), the connecting end the client's (read by the drain thread).
    bool connect_members() {
        const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (listener < 0) {
            return fail("socket");
        }
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 128) != 0 ||
            ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
            ::close(listener);
            return fail("listen");
        }
        bool ok = true;
        for (std::uint32_t l = 0; l < lane_count && ok; ++l) {
            lane& owner = *lanes_[l];
            // Messages said before anyone joins reach nobody; they move the room's seq to where
            // it keeps the same number of digits for the whole run, so every variant's frames
            // have the same size and bytes_per_delivery can show re-encoded frames are identical.
            auto early = hub_->rooms().find_or_create(owner.room_name);
            for (std::int64_t seq = 0; seq < first_seq; ++seq) {
                early->say("nobody", "before the run", first_ts);
            }
            for (std::size_t m = 0; m < members_per_room && ok; ++m) {
                ok = add_member(owner, listener, addr, static_cast<std::uint32_t>(l * members_per_room + m));
            }
            if (ok) {
                owner.publisher = owner.members.front()->output.name();
                owner.room = hub_->rooms().find(owner.room_name);
                owner.executor.drain();
                for (auto& mem : owner.members) {
                    mem->output.discard();  // the welcome and joined replies
                }
                owner.registry = &registry_;
                owner.global_map = &global_map_;
                if (!owner.room || owner.room->member_count() != members_per_room) {
                    error_ = "the room did not get every member";
                    ok = false;
                }
            }
        }
        ::close(listener);
        return ok;
    }

    bool add_member(lane& owner, int listener, const sockaddr_in& addr, std::uint32_t id) {
        const int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (client < 0) {
            return fail("socket");
        }
        peer_fds_.push_back(client);
        if (::connect(client, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
            return fail("connect");
        }
        const int server = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (server < 0) {
            return fail("accept");
        }
        // From here the member's output owns the descriptor.
        owner.members.push_back(std::make_unique<member>(owner.context, owner, server, id));
        const int one = 1;
        if (::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
            ::fcntl(client, F_SETFL, ::fcntl(client, F_GETFL) | O_NONBLOCK) != 0) {
            return fail("socket options");
        }
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLET;
        ev.data.fd = client;
        if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, client, &ev) != 0) {
            return fail("epoll_ctl");
        }
        if (!parley::bench::login_and_join(owner.members.back()->session, owner.members.back()->output.name(),
                                           owner.room_name)) {
            error_ = "a member could not log in and join";
            return false;
        }
        return true;
    }

    // Reads every readable peer end until it has nothing more, and discards the bytes.
    void drain_loop() {
        std::vector<char> buffer(256 * 1024);
        std::array<epoll_event, 256> events;
        for (;;) {
            const int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), -1);
            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                return;
            }
            std::uint64_t read_now = 0;
            for (int i = 0; i < n; ++i) {
                const int fd = events[static_cast<std::size_t>(i)].data.fd;
                if (fd == stop_fd_) {
                    return;
                }
                for (;;) {
                    const ssize_t r = ::read(fd, buffer.data(), buffer.size());
                    if (r > 0) {
                        read_now += static_cast<std::uint64_t>(r);
                        if (static_cast<std::size_t>(r) < buffer.size()) {
                            break;  // what the kernel had: the next bytes raise a new edge
                        }
                        continue;
                    }
                    if (r < 0 && errno == EINTR) {
                        continue;
                    }
                    break;  // EAGAIN, or the end at teardown
                }
            }
            drained_.fetch_add(read_now, std::memory_order_release);
        }
    }

    parley::config::settings settings_;
    std::vector<std::unique_ptr<lane>> lanes_;
    std::unique_ptr<parley::rooms::chat_hub> hub_;
    user_registry registry_;
    one_mutex_map global_map_;
    std::vector<int> peer_fds_;
    int epoll_fd_ = -1;
    int stop_fd_ = -1;
    std::atomic<std::uint64_t> written_{0};
    std::atomic<std::uint64_t> drained_{0};
    std::string error_;
    bool ready_ = false;
    std::thread drain_thread_;
};

design_world& shared_world() {
    static design_world world;
    return world;
}

// One pass: 8 messages said into the lane's room, the worker's tasks run, every queue flushed.
void pass(lane& l) {
    for (std::size_t k = 0; k < batch; ++k) {
        const std::string_view text = parley::bench::chat_lines[k];
        const std::int64_t ts = ++l.ts;
        const std::int64_t seq = l.room->say(l.publisher, text, ts).seq;
        // Read by a re-encoding output; the tasks that deliver this message run after the loop.
        l.messages[k] = {text, seq, ts};
    }
    l.current_frame = nullptr;
    l.current_message = static_cast<std::size_t>(-1);  // the first frame delivered is message 0
    l.executor.drain();
    for (auto& m : l.members) {
        m->output.flush();
    }
}

std::uint64_t thread_cpu_ns() {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(t.tv_nsec);
}

void broadcast(benchmark::State& state, delivery_mode delivery, write_mode writing) {
    design_world& world = shared_world();
    if (!world.ready()) {
        state.SkipWithError(world.error().c_str());
        return;
    }
    lane& l = world.lane_at(static_cast<std::size_t>(state.thread_index()));
    l.delivery = delivery;
    l.writing = writing;
    const lane_stats before = l.stats;
    const std::uint64_t delivered_before = l.context.counters().fanout_deliveries.get();

    std::uint64_t cpu_ns = 0;
    for (auto _ : state) {
        // Read inside the loop so the start barrier of a multi-threaded run is not counted.
        if (cpu_ns == 0) {
            cpu_ns = thread_cpu_ns();
        }
        pass(l);
    }
    cpu_ns = thread_cpu_ns() - cpu_ns;

    const std::uint64_t delivered = l.context.counters().fanout_deliveries.get() - delivered_before;
    const std::uint64_t calls = l.stats.write_calls - before.write_calls;
    const std::uint64_t bytes = l.stats.bytes_written - before.bytes_written;
    const bool drained = world.settle(bytes);
    if (delivered != static_cast<std::uint64_t>(state.iterations()) * batch * members_per_room) {
        state.SkipWithError("a member missed a delivery");
        return;
    }
    if (l.stats.write_errors != before.write_errors || l.stats.closes != before.closes) {
        state.SkipWithError("a write failed or a member was closed");
        return;
    }
    if (l.stats.lookup_misses != before.lookup_misses) {
        state.SkipWithError("a lookup did not find a member");
        return;
    }
    if (!drained) {
        state.SkipWithError("the drain thread did not catch up");
        return;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(delivered));
    state.counters["eagain"] = static_cast<double>(l.stats.eagain - before.eagain);
    state.counters["cpu_ns_per_delivery"] = benchmark::Counter(
        static_cast<double>(cpu_ns) / static_cast<double>(delivered), benchmark::Counter::kAvgThreads);
    if (calls != 0) {
        state.counters["deliveries_per_write"] = benchmark::Counter(
            static_cast<double>(delivered) / static_cast<double>(calls), benchmark::Counter::kAvgThreads);
        state.counters["bytes_per_delivery"] = benchmark::Counter(
            static_cast<double>(bytes) / static_cast<double>(delivered), benchmark::Counter::kAvgThreads);
    }
}

using dm = delivery_mode;
using wm = write_mode;

BENCHMARK_CAPTURE(broadcast, as_built, dm::shared_reference, wm::gathered)->Name("single/as_built");
BENCHMARK_CAPTURE(broadcast, reencode_per_member, dm::reencode, wm::gathered)->Name("single/reencode_per_member");
BENCHMARK_CAPTURE(broadcast, one_write_per_frame, dm::shared_reference, wm::per_frame)
    ->Name("single/one_write_per_frame");
BENCHMARK_CAPTURE(broadcast, no_io_as_built, dm::shared_reference, wm::none)->Name("single_no_io/as_built");
BENCHMARK_CAPTURE(broadcast, no_io_reencode, dm::reencode, wm::none)->Name("single_no_io/reencode_per_member");

BENCHMARK_CAPTURE(broadcast, lock_as_built, dm::shared_reference, wm::gathered)
    ->Name("lock/as_built")
    ->Threads(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(broadcast, lock_sharded, dm::registry_lookup, wm::gathered)
    ->Name("lock/sharded_registry_lookup")
    ->Threads(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(broadcast, lock_global, dm::global_mutex_lookup, wm::gathered)
    ->Name("lock/global_mutex_lookup")
    ->Threads(2)
    ->UseRealTime();

BENCHMARK_CAPTURE(broadcast, lock_no_io_as_built, dm::shared_reference, wm::none)
    ->Name("lock_no_io/as_built")
    ->Threads(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(broadcast, lock_no_io_sharded, dm::registry_lookup, wm::none)
    ->Name("lock_no_io/sharded_registry_lookup")
    ->Threads(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(broadcast, lock_no_io_global, dm::global_mutex_lookup, wm::none)
    ->Name("lock_no_io/global_mutex_lookup")
    ->Threads(2)
    ->UseRealTime();

}  // namespace
