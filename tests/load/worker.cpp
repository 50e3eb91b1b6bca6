#include "worker.hpp"

#include "json_scan.hpp"
#include "sysinfo.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace parley::load {

namespace {

constexpr std::size_t read_buffer_size = 256 * 1024;
constexpr std::size_t max_server_frame = 64u << 20;      // refuse anything larger
constexpr std::size_t max_response_head = 16 * 1024;     // the 101 response
constexpr std::size_t rate_max_pending = 1u << 20;       // rate mode: skip a publisher this far behind
constexpr std::uint64_t ms = 1000000;
constexpr std::uint64_t close_wait = 2000 * ms;          // churn: wait for the server's close
constexpr std::uint32_t fill_window = 64;                // history fill: says in flight
constexpr std::string_view history_room = "hist";        // not r<k>, so no fanout member is in it

std::uint64_t seconds_to_ns(double s) { return static_cast<std::uint64_t>(s * 1e9); }

}  // namespace

worker::worker(const options& opts, control& ctl, std::uint32_t id)
    : opts_(opts),
      ctl_(ctl),
      rng_(monotonic_ns() ^ (static_cast<std::uint64_t>(id) << 40) ^ static_cast<std::uint64_t>(getpid())),
      rbuf_(read_buffer_size),
      latency_(std::make_unique<histogram>()),
      cycle_time_(std::make_unique<histogram>()),
      history_time_(std::make_unique<histogram>()) {
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) {
        throw std::system_error(errno, std::generic_category(), "epoll_create1");
    }
    const std::uint32_t total = opts.mode == run_mode::churn ? opts.concurrency : total_connections(opts);
    conns_.reserve(total / opts.threads + 1);
    for (std::uint32_t i = id; i < total; i += opts.threads) {
        conn c;
        c.index = i;
        c.room = i % opts.rooms;
        if (opts.mode == run_mode::fanout && i < opts.publishers) {
            c.publisher = static_cast<std::int32_t>(i);
            publishers_.push_back(static_cast<std::uint32_t>(conns_.size()));
        }
        if (opts.mode == run_mode::fanout && i >= opts.connections) {
            c.reader = static_cast<std::int32_t>(i - opts.connections);
            c.room = 0;  // unused: readers are in history_room
            if (c.reader == 0) {
                filler_ = static_cast<std::uint32_t>(conns_.size());
            }
            readers_.push_back(static_cast<std::uint32_t>(conns_.size()));
        }
        conns_.push_back(std::move(c));
    }
    if (opts.mode == run_mode::churn) {
        for (std::uint32_t s = 0; s < conns_.size(); ++s) {
            free_slots_.push_back(static_cast<std::uint32_t>(conns_.size()) - 1 - s);
        }
    }
    if (opts.rate > 0 && opts.publishers > 0) {
        my_rate_ = opts.rate * static_cast<double>(publishers_.size()) / static_cast<double>(opts.publishers);
    }
    dirty_.reserve(conns_.size());
    scratch_.reserve(opts.size + 256);
    if (opts.tls) {
        tls_ = tls_client_context();
    }
}

worker::~worker() {
    for (auto& c : conns_) {
        if (c.ssl != nullptr) {
            tls_free(c.ssl);
        }
        if (c.fd >= 0) {
            ::close(c.fd);
        }
    }
    if (tls_ != nullptr) {
        tls_free_context(tls_);
    }
    if (ep_ >= 0) {
        ::close(ep_);
    }
}

std::uint64_t worker::now() const { return monotonic_ns() - ctl_.t0; }

void worker::run() {
    std::vector<epoll_event> events(1024);
    const int timeout_ms = (opts_.mode == run_mode::churn || my_rate_ > 0) ? 1 : 5;
    // Bounded in time: ends when the control block says done or at the hard deadline.
    for (;;) {
        const phase ph = ctl_.get();
        const std::uint64_t t = now();
        if (ph == phase::done || t > ctl_.hard_deadline) {
            break;
        }
        measure_start_ = ctl_.measure_start.load(std::memory_order_relaxed);
        measure_end_ = ctl_.measure_end.load(std::memory_order_relaxed);
        maintain(t, ph);
        flush_all();
        publish();
        if (!read_again_.empty()) {
            std::swap(read_again_, reading_);
            for (const std::uint64_t data : reading_) {
                on_event(data, EPOLLIN);
            }
            reading_.clear();
        }
        const int n = epoll_wait(ep_, events.data(), static_cast<int>(events.size()), read_again_.empty() ? timeout_ms : 0);
        if (n < 0 && errno != EINTR) {
            note_error(std::string("epoll_wait: ") + std::strerror(errno));
            break;
        }
        for (int i = 0; i < n; ++i) {
            on_event(events[static_cast<std::size_t>(i)].data.u64, events[static_cast<std::size_t>(i)].events);
        }
    }
    for (auto& c : conns_) {
        if (c.fd >= 0) {
            ::close(c.fd);
            c.fd = -1;
        }
    }
    publish();
}

void worker::maintain(std::uint64_t t, phase ph) {
    if (opts_.mode == run_mode::churn) {
        if (ph == phase::send) {
            // Slots that fail at once go back to free_slots_ and wait for the next pass.
            std::swap(free_slots_, starting_);
            for (const std::uint32_t slot : starting_) {
                conn& c = conns_[slot];
                ++c.cycle;
                start_connect(c, t);
            }
            starting_.clear();
        }
    } else if (ph == phase::setup) {
        while (in_setup_ < opts_.connect_batch && next_setup_ < conns_.size()) {
            start_connect(conns_[next_setup_++], t);
        }
    }

    // Deadlines: setup steps (fanout, idle) or whole cycles (churn), checked every 50 ms.
    if (t - last_deadline_check_ >= 50 * ms) {
        last_deadline_check_ = t;
        if (opts_.mode == run_mode::churn || in_setup_ > 0) {
            for (auto& c : conns_) {
                if (c.fd < 0 || t <= c.deadline) {
                    continue;
                }
                const bool busy = opts_.mode == run_mode::churn
                                      ? c.st != state::unused && c.st != state::dead
                                      : in_setup(c.st);
                if (busy) {
                    fail(c, c_err_timeout, "timed out (connect, upgrade, login, join or close took too long)");
                }
            }
        }
    }

    if (opts_.mode != run_mode::fanout) {
        return;
    }
    if (ph == phase::fill && !fill_started_) {
        start_fill();
    }
    sending_ = ph == phase::send;
    if (!sending_) {
        return;
    }
    if (!readers_started_) {
        start_readers();
    }
    if (my_rate_ <= 0) {
        if (!sending_started_) {
            sending_started_ = true;
            for (const std::uint32_t slot : publishers_) {
                conn& c = conns_[slot];
                if (c.st == state::ready) {
                    c.owed += opts_.window;
                    mark_dirty(c);
                }
            }
        }
        return;
    }
    // Rate mode: open loop. Each say is stamped with the time it was due, so time the generator
    // spends behind schedule shows up as latency instead of hiding (no coordinated omission).
    if (publishers_.empty()) {
        return;
    }
    if (!sending_started_) {
        sending_started_ = true;
        rate_start_ = t;
    }
    const double elapsed = static_cast<double>(t - rate_start_) / 1e9;
    const auto due = static_cast<std::uint64_t>(elapsed * my_rate_) + 1;
    const std::uint64_t one_second = static_cast<std::uint64_t>(my_rate_) + 1;
    if (due > rate_sent_ + one_second) {
        // More than a second behind: give up on the backlog rather than burst it.
        local_[c_rate_skipped] += due - one_second - rate_sent_;
        rate_sent_ = due - one_second;
    }
    for (std::uint32_t burst = 0; rate_sent_ < due && burst < 100000; ++burst, ++rate_sent_) {
        conn& c = conns_[publishers_[rate_next_++ % publishers_.size()]];
        const std::uint64_t stamp = rate_start_ + static_cast<std::uint64_t>(static_cast<double>(rate_sent_) * 1e9 / my_rate_);
        if (c.st != state::ready || c.out.size() - c.out_off > rate_max_pending) {
            ++local_[c_rate_skipped];
            continue;
        }
        append_say(c, stamp);
    }
}

void worker::start_connect(conn& c, std::uint64_t t) {
    c.started = t;
    c.deadline = t + seconds_to_ns(opts_.mode == run_mode::churn ? opts_.cycle_timeout : opts_.setup_timeout);
    c.st = state::connecting;
    c.last_seq = -1;
    c.say_t = 0;
    if (opts_.mode == run_mode::churn) {
        ++local_[c_active];
    } else {
        ++in_setup_;
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fail(c, c_err_connect, std::string("socket: ") + std::strerror(errno));
        return;
    }
    c.fd = fd;
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (opts_.source_addrs > 1) {
        // Pick the port at connect() time, per destination, instead of at bind() time.
        ::setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        sockaddr_in src{};
        src.sin_family = AF_INET;
        src.sin_addr.s_addr = htonl(0x7f000001u + c.index % opts_.source_addrs);
        if (::bind(fd, reinterpret_cast<const sockaddr*>(&src), sizeof src) != 0) {
            fail(c, c_err_connect, std::string("bind: ") + std::strerror(errno));
            return;
        }
    }
    sockaddr_in dst{};
    dst.sin_family = AF_INET;
    dst.sin_port = htons(opts_.ports[c.index % opts_.ports.size()]);
    dst.sin_addr = opts_.host_addr;
    const int r = ::connect(fd, reinterpret_cast<const sockaddr*>(&dst), sizeof dst);
    if (r != 0 && errno != EINPROGRESS) {
        fail(c, c_err_connect, std::string("connect: ") + std::strerror(errno));
        return;
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLET;
    ev.data.u64 = (static_cast<std::uint64_t>(c.gen) << 32) | slot_of(c);
    c.want_out = true;
    if (epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) != 0) {
        fail(c, c_err_connect, std::string("epoll_ctl: ") + std::strerror(errno));
        return;
    }
    if (r == 0) {
        on_connected(c);
    }
}

void worker::on_event(std::uint64_t data, std::uint32_t events) {
    const auto slot = static_cast<std::uint32_t>(data & 0xffffffffu);
    const auto gen = static_cast<std::uint32_t>(data >> 32);
    if (slot >= conns_.size()) {
        return;
    }
    conn& c = conns_[slot];
    if (c.fd < 0 || c.gen != gen) {
        return;  // an event for a socket closed earlier in this pass
    }
    if (c.st == state::connecting) {
        if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) {
            on_connected(c);
        }
        return;
    }
    if (c.st == state::securing) {
        drive_tls(c);
        return;
    }
    if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) {
        on_readable(c);
    }
    if (c.fd >= 0 && c.gen == gen && (events & EPOLLOUT) != 0) {
        flush(c);
    }
}

void worker::on_connected(conn& c) {
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
        err = errno;
    }
    if (err != 0) {
        fail(c, c_err_connect, std::string("connect: ") + std::strerror(err));
        return;
    }
    if (tls_ != nullptr) {
        c.ssl = tls_session(tls_, c.fd);
        if (c.ssl == nullptr) {
            fail(c, c_err_handshake, "TLS: " + tls_error_text());
            return;
        }
        c.st = state::securing;
        drive_tls(c);
        return;
    }
    start_upgrade(c);
}

void worker::drive_tls(conn& c) {
    switch (tls_handshake(c.ssl)) {
    case tls_status::done:
        start_upgrade(c);
        return;
    case tls_status::want_read:
        set_out_interest(c, false);
        return;
    case tls_status::want_write:
        set_out_interest(c, true);
        return;
    case tls_status::closed:
    case tls_status::failed:
        fail(c, c_err_handshake, "TLS handshake: " + tls_error_text());
        return;
    }
}

namespace {

// A TLS step's outcome as recv() and send() give theirs: bytes, 0 for a closed peer (reads
// only), or -1 with errno (EAGAIN while TLS waits for the socket).
ssize_t as_socket_result(tls_status status, std::size_t bytes, bool reading) {
    switch (status) {
    case tls_status::done:
        return static_cast<ssize_t>(bytes);
    case tls_status::want_read:
    case tls_status::want_write:
        errno = EAGAIN;
        return -1;
    case tls_status::closed:
        if (reading) {
            return 0;
        }
        break;
    case tls_status::failed:
        break;
    }
    errno = ECONNRESET;
    return -1;
}

}  // namespace

ssize_t worker::read_some(conn& c, char* data, std::size_t size) {
    if (c.ssl == nullptr) {
        return ::recv(c.fd, data, size, 0);
    }
    std::size_t bytes = 0;
    const tls_status status = tls_read(c.ssl, data, size, bytes);  // sets bytes first
    return as_socket_result(status, bytes, true);
}

ssize_t worker::write_some(conn& c, const char* data, std::size_t size) {
    if (c.ssl == nullptr) {
        return ::send(c.fd, data, size, MSG_NOSIGNAL);
    }
    std::size_t bytes = 0;
    const tls_status status = tls_write(c.ssl, data, size, bytes);
    return as_socket_result(status, bytes, false);
}

void worker::start_upgrade(conn& c) {
    const std::string key = make_ws_key(rng_);
    c.accept = expected_accept(key);
    c.out += upgrade_request(opts_.host, opts_.ports[c.index % opts_.ports.size()], key, opts_.deflate);
    c.st = state::handshake;
    set_out_interest(c, false);
    mark_dirty(c);
}

void worker::on_readable(conn& c) {
    // Edge-triggered: read until a short read (for TCP, the receive queue was drained) or EAGAIN.
    // After a few full buffers the connection waits for the next pass so that one busy socket
    // cannot starve the others; it is then read without waiting for another edge.
    for (int attempt = 0; attempt < 4; ++attempt) {
        const ssize_t n = read_some(c, rbuf_.data(), rbuf_.size());
        if (n > 0) {
            local_[c_bytes_in] += static_cast<std::uint64_t>(n);
            on_bytes(c, rbuf_.data(), static_cast<std::size_t>(n), now());
            // A short TCP read drained the socket; TLS hands over one record per read, so it
            // reads on until it would wait.
            if (c.fd < 0 || (c.ssl == nullptr && static_cast<std::size_t>(n) < rbuf_.size())) {
                return;
            }
            continue;
        }
        if (n == 0) {
            on_peer_gone(c, c_err_closed);
            return;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return;
        }
        if (errno == EINTR) {
            continue;
        }
        on_peer_gone(c, c_err_closed);
        return;
    }
    read_again_.push_back((static_cast<std::uint64_t>(c.gen) << 32) | slot_of(c));
}

void worker::on_peer_gone(conn& c, counter churn_reason) {
    if (c.st == state::closing) {
        finish_cycle(c, now());  // churn: the server closed after our close frame
        return;
    }
    fail(c, churn_reason, c.st == state::handshake ? "connection closed during the upgrade" : "server closed the connection");
}

void worker::on_bytes(conn& c, char* data, std::size_t size, std::uint64_t t) {
    if (c.st != state::handshake) {
        on_frames(c, data, size, t);
        return;
    }
    c.carry.append(data, size);
    const std::size_t end = c.carry.find("\r\n\r\n");
    if (end == std::string::npos) {
        if (c.carry.size() > max_response_head) {
            fail(c, c_err_handshake, "upgrade response too large");
        }
        return;
    }
    const char* reason = "";
    if (!check_upgrade_response(std::string_view(c.carry).substr(0, end + 4), c.accept, reason)) {
        fail(c, c_err_handshake, std::string("upgrade refused: ") + reason);
        return;
    }
    std::string().swap(c.accept);
    scratch2_.assign(c.carry, end + 4, std::string::npos);
    c.carry.clear();
    c.st = state::login_wait;
    send_login(c);
    if (!scratch2_.empty()) {
        on_frames(c, scratch2_.data(), scratch2_.size(), t);
    }
}

void worker::on_frames(conn& c, char* data, std::size_t size, std::uint64_t t) {
    std::size_t off = 0;
    frame_header h;
    // First complete the frame cut off by the previous read. Bounded: every pass takes bytes,
    // returns, or empties the carry.
    while (!c.carry.empty()) {
        const std::size_t need = frame_need(c.carry.data(), c.carry.size(), h);
        if (need > max_server_frame) {
            fail(c, c_err_closed, "server frame too large");
            return;
        }
        if (c.carry.size() < need) {
            const std::size_t take = std::min(need - c.carry.size(), size - off);
            if (take == 0) {
                return;
            }
            c.carry.append(data + off, take);
            off += take;
            continue;
        }
        std::swap(c.carry, held_);
        on_frame(c, h, held_.data() + h.header_size, t);
        held_.clear();
        if (c.fd < 0) {
            return;
        }
    }
    // Then every whole frame in place in the read buffer. Bounded by size.
    while (off < size) {
        const std::size_t need = frame_need(data + off, size - off, h);
        if (need > max_server_frame) {
            fail(c, c_err_closed, "server frame too large");
            return;
        }
        if (size - off < need) {
            c.carry.assign(data + off, size - off);
            return;
        }
        on_frame(c, h, data + off + h.header_size, t);
        off += need;
        if (c.fd < 0) {
            return;
        }
    }
}

void worker::on_frame(conn& c, const frame_header& h, char* payload, std::uint64_t t) {
    ++local_[c_frames];
    const auto n = static_cast<std::size_t>(h.payload_size);
    if (h.masked) {
        ++local_[c_bad_frames];
        fail(c, c_err_closed, "server sent a masked frame");
        return;
    }
    if (h.rsv1) {
        // parleyd compresses whole messages in one frame and never fragments what it sends.
        if (!opts_.deflate || static_cast<ws_op>(h.opcode) != ws_op::text || !h.fin || c.in_fragment) {
            ++local_[c_bad_frames];
            fail(c, c_err_closed, "server sent RSV1 where it does not belong");
            return;
        }
        if (!inflate_) {
            inflate_ = std::make_unique<inflate_state>();
        }
        if (!inflate_->inflater.inflate(std::string_view(payload, n), inflate_->inflated)) {
            ++local_[c_bad_frames];
            fail(c, c_err_closed, "server sent a compressed message that does not inflate");
            return;
        }
        ++local_[c_compressed];
        on_text(c, inflate_->inflated, t);
        return;
    }
    switch (static_cast<ws_op>(h.opcode)) {
    case ws_op::text:
        if (c.in_fragment) {
            ++local_[c_bad_frames];
            fail(c, c_err_closed, "server started a message inside a fragmented one");
            return;
        }
        if (h.fin) {
            on_text(c, std::string_view(payload, n), t);
        } else {
            c.in_fragment = true;
            c.fragment.assign(payload, n);
        }
        return;
    case ws_op::continuation:
        if (!c.in_fragment) {
            ++local_[c_bad_frames];
            fail(c, c_err_closed, "server sent a continuation without a start");
            return;
        }
        c.fragment.append(payload, n);
        if (h.fin) {
            c.in_fragment = false;
            std::swap(c.fragment, held_text_);
            on_text(c, held_text_, t);
            held_text_.clear();
        }
        return;
    case ws_op::ping:
        append_masked_frame(c.out, ws_op::pong, std::string_view(payload, n), rng_);
        mark_dirty(c);
        return;
    case ws_op::pong:
        return;
    case ws_op::close: {
        if (c.st == state::closing) {
            finish_cycle(c, t);
            return;
        }
        unsigned code = 1005;
        if (n >= 2) {
            code = (static_cast<unsigned>(static_cast<std::uint8_t>(payload[0])) << 8) | static_cast<std::uint8_t>(payload[1]);
        }
        fail(c, c_err_closed, "server sent close " + std::to_string(code));
        return;
    }
    case ws_op::binary:
        ++local_[c_bad_frames];
        return;
    }
    ++local_[c_bad_frames];
    fail(c, c_err_closed, "server sent an unknown opcode");
}

void worker::on_text(conn& c, std::string_view text, std::uint64_t t) {
    server_fields f;
    if (!scan(text, f)) {
        ++local_[c_bad_frames];
        return;
    }
    const bool is_error = f.type == "error";
    if (is_error) {
        ++local_[c_server_errors];
    }
    switch (c.st) {
    case state::login_wait:
        if (f.type == "welcome") {
            c.st = state::join_wait;
            send_join(c);
        } else if (is_error) {
            fail(c, c_err_server, "login refused: " + std::string(f.code));
        }
        return;
    case state::join_wait:
        if (f.type == "joined") {
            on_joined(c, t);
        } else if (is_error) {
            fail(c, c_err_server, "join refused: " + std::string(f.code));
        }
        return;
    case state::ready:
        if (c.reader >= 0) {
            on_reader_text(c, f, t);
            return;
        }
        if (f.type == "message") {
            on_message(c, f, t);
        } else if (is_error) {
            if (opts_.mode == run_mode::churn) {
                fail(c, c_err_server, "say refused: " + std::string(f.code));
                return;
            }
            if (c.publisher >= 0 && c.inflight > 0) {
                // A say was refused: it will produce no deliveries and frees its window slot.
                --c.inflight;
                ++local_[c_refused];
                const std::uint64_t members = room_members(opts_.connections, opts_.rooms, c.room);
                local_[c_expected] -= std::min(local_[c_expected], members);
            }
            note_error("server error: " + std::string(f.code));
        }
        return;
    default:
        return;
    }
}

void worker::on_joined(conn& c, std::uint64_t t) {
    c.st = state::ready;
    if (opts_.mode == run_mode::churn) {
        c.say_t = t;
        append_say(c, t);
        return;
    }
    --in_setup_;
    ++local_[c_joined];
    if (opts_.mode == run_mode::idle && c.out.empty() && c.carry.empty()) {
        // An idle connection keeps nothing it does not need.
        std::string().swap(c.carry);
        std::string().swap(c.out);
        c.out_off = 0;
    }
}

void worker::on_message(conn& c, const server_fields& f, std::uint64_t t) {
    std::uint64_t stamp = 0;
    std::uint64_t from = 0;
    if (!read_stamp(f.text, stamp, from)) {
        return;  // not a generator's say
    }
    if (opts_.mode == run_mode::churn) {
        if (c.say_t != 0 && stamp == c.say_t && from == c.index) {
            static constexpr char normal_close[2] = {0x03, static_cast<char>(0xE8)};  // 1000
            append_masked_frame(c.out, ws_op::close, std::string_view(normal_close, 2), rng_);
            mark_dirty(c);
            c.st = state::closing;
            c.deadline = std::min(c.deadline, t + close_wait);
        }
        return;
    }
    ++local_[c_deliveries];
    if (stamp >= measure_start_ && stamp < measure_end_) {
        latency_->record(t > stamp ? t - stamp : 0);
    }
    if (f.seq >= 0) {
        if (c.last_seq >= 0) {
            if (f.seq <= c.last_seq) {
                ++local_[c_seq_backwards];
            } else if (f.seq > c.last_seq + 1) {
                local_[c_seq_gaps] += static_cast<std::uint64_t>(f.seq - c.last_seq - 1);
            }
        }
        c.last_seq = f.seq;
    }
    if (c.publisher >= 0 && from == c.index) {
        if (c.inflight > 0) {
            --c.inflight;
        }
        if (sending_ && my_rate_ <= 0) {
            ++c.owed;  // written, freshly stamped, at the end of this loop pass
            mark_dirty(c);
        }
    }
}

void worker::send_text(conn& c, std::string_view payload) {
    append_masked_frame(c.out, ws_op::text, payload, rng_);
    mark_dirty(c);
}

void worker::send_login(conn& c) {
    scratch_.assign(R"({"type":"login","user":")");
    if (opts_.mode == run_mode::churn) {
        scratch_ += 'c';
        append_uint(scratch_, c.index);
        scratch_ += 'x';
        append_uint(scratch_, c.cycle);
    } else if (c.reader >= 0) {
        scratch_ += 'h';
        append_uint(scratch_, static_cast<std::uint64_t>(c.reader));
    } else {
        scratch_ += 'u';
        append_uint(scratch_, c.index);
    }
    scratch_ += R"("})";
    send_text(c, scratch_);
}

void worker::send_join(conn& c) {
    scratch_.assign(R"({"type":"join","room":")");
    if (c.reader >= 0) {
        scratch_ += history_room;
    } else {
        scratch_ += 'r';
        append_uint(scratch_, c.room);
    }
    scratch_ += R"("})";
    send_text(c, scratch_);
}

void worker::pad_text(std::string& p, std::size_t n) {
    if (!opts_.words) {
        p.append(n, 'x');
        return;
    }
    // Everyday words in random order: a chat's text, for what compression makes of it.
    static constexpr std::string_view words[64] = {
        "the", "a", "to", "and", "of", "is", "in", "it", "you", "that", "we", "for", "on", "this", "with",
        "are", "be", "have", "not", "at", "i", "can", "will", "just", "so", "what", "do", "if", "about",
        "meeting", "today", "tomorrow", "build", "release", "thanks", "ok", "sure", "please", "check",
        "deploy", "server", "looks", "good", "fixed", "bug", "review", "lunch", "later", "morning",
        "coffee", "team", "issue", "done", "now", "yes", "no", "maybe", "update", "branch", "test",
        "green", "red", "again", "soon"};
    const std::size_t end = p.size() + n;
    while (p.size() < end) {
        p += words[rng_.next() & 63];
        p += ' ';
    }
    p.resize(end);
}

void worker::append_say(conn& c, std::uint64_t t) {
    std::string& p = scratch_;
    p.assign(R"({"type":"say","room":"r)");
    append_uint(p, c.room);
    p += R"(","text":")";
    const std::size_t text_start = p.size();
    p += "t=";
    append_uint(p, t);
    p += ";p=";
    append_uint(p, c.index);
    p += ';';
    const std::size_t text_len = p.size() - text_start;
    if (text_len < opts_.size) {
        pad_text(p, opts_.size - text_len);
    }
    p += R"("})";
    send_text(c, p);
    ++c.inflight;
    ++local_[c_says];
    if (opts_.mode == run_mode::fanout) {
        local_[c_expected] += room_members(opts_.connections, opts_.rooms, c.room);
    }
}

// ---------------------------------------------------------------------------------------------
// History readers (fanout). Reader 0 first fills history_room in the fill phase; in the send
// phase every reader keeps exactly one history request in flight, so the round trip it measures
// is the server's alone and not a queue the generator built.

void worker::start_fill() {
    fill_started_ = true;
    if (filler_ == UINT32_MAX || conns_[filler_].st != state::ready) {
        return;
    }
    // A window rather than all at once: the echoes to every reader stay well under the server's
    // per-connection write queue limit.
    conn& c = conns_[filler_];
    while (fill_sent_ < opts_.history_fill && fill_sent_ < fill_window) {
        append_fill_say(c);
    }
}

void worker::start_readers() {
    readers_started_ = true;
    for (const std::uint32_t slot : readers_) {
        conn& c = conns_[slot];
        if (c.st == state::ready) {
            c.history_owed = true;
            mark_dirty(c);
        }
    }
}

void worker::on_reader_text(conn& c, const server_fields& f, std::uint64_t t) {
    if (f.type == "history") {
        on_history_answer(c, f, t);
    } else if (f.type == "ack") {
        on_fill_answer(c, f);
    } else if (f.type == "error") {
        // A reader has at most one kind of request outstanding: fill says or one history request.
        if (c.history_waiting) {
            on_history_answer(c, f, t);
        } else if (slot_of(c) == filler_ && local_[c_fill_acked] < fill_sent_) {
            on_fill_answer(c, f);
        } else {
            note_error("server error: " + std::string(f.code));
        }
    }
    // Anything else (the fill's messages, presence) is not counted.
}

void worker::on_fill_answer(conn& c, const server_fields& f) {
    ++local_[c_fill_acked];
    if (f.type == "error") {
        ++local_[c_fill_refused];
        note_error("fill say refused: " + std::string(f.code));
    } else if (f.seq > 0 && ctl_.history_base.load(std::memory_order_relaxed) == 0) {
        // One connection's acks come in the order of its says: this is the first fill message.
        ctl_.history_base.store(static_cast<std::uint64_t>(f.seq), std::memory_order_relaxed);
    }
    if (fill_sent_ < opts_.history_fill) {
        append_fill_say(c);
    }
}

void worker::on_history_answer(conn& c, const server_fields& f, std::uint64_t t) {
    if (!c.history_waiting) {
        note_error("history reply without a request");
        return;
    }
    c.history_waiting = false;
    --local_[c_history_waiting];
    if (f.type == "error") {
        ++local_[c_history_errors];
        note_error("history refused: " + std::string(f.code));
    } else if (c.history_sent >= measure_start_ && c.history_sent < measure_end_) {
        ++local_[c_history_requests];
        local_[c_history_messages] += f.messages > 0 ? static_cast<std::uint64_t>(f.messages) : 0;
        history_time_->record(t > c.history_sent ? t - c.history_sent : 0);
    }
    if (sending_) {
        c.history_owed = true;  // written, freshly timed, at the end of this loop pass
        mark_dirty(c);
    }
}

void worker::append_fill_say(conn& c) {
    // The text does not start with "t=", so members do not take it for a stamped say.
    std::string& p = scratch_;
    p.assign(R"({"type":"say","room":")");
    p += history_room;
    p += R"(","text":")";
    const std::size_t text_start = p.size();
    p += "f=";
    append_uint(p, fill_sent_);
    p += ';';
    const std::size_t text_len = p.size() - text_start;
    if (text_len < opts_.size) {
        pad_text(p, opts_.size - text_len);
    }
    p += R"(","id":)";
    append_uint(p, fill_sent_);
    p += '}';
    send_text(c, p);
    ++fill_sent_;
}

void worker::append_history(conn& c, std::uint64_t t) {
    const std::uint64_t before = history_before(c);
    std::string& p = scratch_;
    p.assign(R"({"type":"history","room":")");
    p += history_room;
    p += R"(",)";
    if (before > 0) {
        p += R"("before":)";
        append_uint(p, before);
        p += ',';
    }
    p += R"("limit":)";
    append_uint(p, opts_.history_limit);
    p += R"(,"id":)";
    append_uint(p, c.history_count);
    p += '}';
    send_text(c, p);
    ++c.history_count;
    c.history_sent = t;
    c.history_waiting = true;
    ++local_[c_history_waiting];
}

// The "before" of a reader's next request, 0 for none. Requests alternate between the newest page
// (what a daemon keeps in memory) and a page from the oldest half of the fill: with the defaults
// (fill 2000, limit 500) before runs over base+500 .. base+1000, older than the newest 1000 a
// daemon keeps in memory by default, so a daemon with a history file reads those pages from it.
// The page moves from request to request and differs between readers, so that no single page is
// all that is read.
std::uint64_t worker::history_before(const conn& c) const {
    const std::uint64_t base = ctl_.history_base.load(std::memory_order_relaxed);
    if (c.history_count % 2 == 0 || base == 0) {
        return 0;
    }
    const std::uint64_t lo = base + opts_.history_limit;  // the oldest page that is a full one
    const std::uint64_t hi = base + std::max(opts_.history_fill / 2, opts_.history_limit);
    const std::uint64_t step = c.history_count / 2 * 37 + static_cast<std::uint64_t>(c.reader) * 101;
    return lo + step % (hi - lo + 1);
}

// ---------------------------------------------------------------------------------------------
void worker::mark_dirty(conn& c) {
    if (!c.dirty) {
        c.dirty = true;
        dirty_.push_back(slot_of(c));
    }
}

void worker::flush_all() {
    if (dirty_.empty()) {
        return;
    }
    const std::uint64_t t = now();
    // Nothing below adds to dirty_: says are built while the connection is still marked dirty.
    for (const std::uint32_t slot : dirty_) {
        conn& c = conns_[slot];
        if (c.fd >= 0) {
            for (; c.owed > 0; --c.owed) {
                append_say(c, t);
            }
            if (c.history_owed) {
                c.history_owed = false;
                append_history(c, t);
            }
        }
        c.dirty = false;
        if (c.fd >= 0 && !c.want_out) {
            flush(c);
        }
    }
    dirty_.clear();
}

void worker::flush(conn& c) {
    // Bounded: each send() makes progress or the loop ends; EINTR at most a few times.
    for (int interrupted = 0; c.out_off < c.out.size();) {
        const ssize_t n = write_some(c, c.out.data() + c.out_off, c.out.size() - c.out_off);
        if (n > 0) {
            c.out_off += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR && ++interrupted < 8) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (c.out_off >= 64 * 1024) {
                c.out.erase(0, c.out_off);
                c.out_off = 0;
            }
            set_out_interest(c, true);
            return;
        }
        fail(c, c_err_closed, std::string("send: ") + std::strerror(errno));
        return;
    }
    c.out.clear();
    c.out_off = 0;
    set_out_interest(c, false);
}

void worker::set_out_interest(conn& c, bool want) {
    if (c.want_out == want || c.fd < 0) {
        return;
    }
    c.want_out = want;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLET | (want ? static_cast<std::uint32_t>(EPOLLOUT) : 0u);
    ev.data.u64 = (static_cast<std::uint64_t>(c.gen) << 32) | slot_of(c);
    epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
}

void worker::close_conn(conn& c, state next) {
    if (c.ssl != nullptr) {
        tls_free(c.ssl);
        c.ssl = nullptr;
    }
    if (c.fd >= 0) {
        ::close(c.fd);  // also removes it from the epoll set
        c.fd = -1;
    }
    ++c.gen;
    if (opts_.mode == run_mode::churn) {
        if (c.st != state::unused) {
            --local_[c_active];
        }
        if (next == state::unused) {
            free_slots_.push_back(slot_of(c));
        }
    } else if (in_setup(c.st)) {
        --in_setup_;
    }
    c.st = next;
    c.want_out = false;
    c.in_fragment = false;
    c.history_owed = false;
    if (c.history_waiting) {
        c.history_waiting = false;
        --local_[c_history_waiting];
    }
    c.inflight = 0;
    c.owed = 0;
    c.out_off = 0;
    c.out.clear();
    c.carry.clear();
    c.fragment.clear();
    c.accept.clear();
}

void worker::fail(conn& c, counter churn_reason, std::string_view what) {
    note_error(what);
    if (opts_.mode == run_mode::churn) {
        ++local_[churn_reason];
        close_conn(c, state::unused);
        return;
    }
    if (c.st == state::ready) {
        ++local_[c_dropped];
    } else {
        ++local_[c_failed];
    }
    close_conn(c, state::dead);
}

void worker::finish_cycle(conn& c, std::uint64_t t) {
    ++local_[c_cycles];
    cycle_time_->record(t - c.started);
    close_conn(c, state::unused);
}

void worker::publish() {
    for (std::size_t i = 0; i < counter_count; ++i) {
        published_[i].store(local_[i], std::memory_order_relaxed);
    }
}

void worker::note_error(std::string_view what) {
    if (first_error_.empty()) {
        first_error_.assign(what);
    }
}

}  // namespace parley::load
