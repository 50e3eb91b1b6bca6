#pragma once

#include <boost/asio/ip/address.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace parley::server {

// A client address in 16 bytes (IPv4 as an IPv4-mapped IPv6 address) and its port: what a
// connection keeps of its peer, for the per-address limit and the close log line.
struct peer_address {
    std::array<unsigned char, 16> bytes{};
    std::uint16_t port = 0;

    static peer_address from(const boost::asio::ip::address& address, std::uint16_t port);
    // "203.0.113.5:40122" or "[2001:db8::1]:40122".
    std::string text() const;
};

class connection_limiter;

// One admitted connection's place in the counts; gives it back when destroyed. Movable from
// the HTTP session to the WebSocket connection it becomes.
class connection_slot {
public:
    connection_slot() = default;
    connection_slot(connection_limiter* owner, const peer_address& peer) : owner_(owner), peer_(peer) {}
    connection_slot(connection_slot&& other) noexcept : owner_(other.owner_), peer_(other.peer_) { other.owner_ = nullptr; }
    connection_slot& operator=(connection_slot&& other) noexcept;
    connection_slot(const connection_slot&) = delete;
    connection_slot& operator=(const connection_slot&) = delete;
    ~connection_slot() { release(); }

    bool admitted() const { return owner_ != nullptr; }
    const peer_address& peer() const { return peer_; }
    void release();

private:
    connection_limiter* owner_ = nullptr;
    peer_address peer_;
};

// Counts open connections in total and per client address against the configured limits.
// Taken once per accepted connection and given back once when it ends: never on the message
// path. The total is an atomic; the per-address counts sit under a mutex (short, per connect).
// Thread: any.
class connection_limiter {
public:
    enum class verdict { admitted, over_total, over_per_ip };

    // limits are read at each call, so a reload that changes them applies to the next connect.
    // 0 for per_ip: no per-address limit.
    verdict try_admit(const peer_address& peer, std::size_t max_total, std::size_t max_per_ip, connection_slot& slot);

    std::size_t open() const { return total_.load(std::memory_order_relaxed); }

private:
    friend class connection_slot;
    void release(const peer_address& peer);

    struct address_hash {
        std::size_t operator()(const std::array<unsigned char, 16>& a) const noexcept;
    };

    std::atomic<std::size_t> total_{0};
    std::mutex mutex_;
    std::unordered_map<std::array<unsigned char, 16>, std::uint32_t, address_hash> per_address_;
};

}  // namespace parley::server
