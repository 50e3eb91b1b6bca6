#include "server/connection_limiter.hpp"

#include <spdlog/fmt/fmt.h>

#include <cstring>
#include <string>

namespace parley::server {

peer_address peer_address::from(const boost::asio::ip::address& address, std::uint16_t port) {
    peer_address p;
    p.port = port;
    if (address.is_v4()) {
        auto mapped = boost::asio::ip::make_address_v6(boost::asio::ip::v4_mapped, address.to_v4());
        p.bytes = mapped.to_bytes();
    } else {
        p.bytes = address.to_v6().to_bytes();
    }
    return p;
}

std::string peer_address::text() const {
    boost::asio::ip::address_v6 v6(bytes);
    // fmt rather than chained std::string appends: GCC 12 warns falsely (-Wrestrict) on those.
    if (v6.is_v4_mapped()) {
        return fmt::format("{}:{}", boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6).to_string(), port);
    }
    return fmt::format("[{}]:{}", v6.to_string(), port);
}

connection_slot& connection_slot::operator=(connection_slot&& other) noexcept {
    if (this != &other) {
        release();
        owner_ = other.owner_;
        peer_ = other.peer_;
        other.owner_ = nullptr;
    }
    return *this;
}

void connection_slot::release() {
    if (owner_) {
        owner_->release(peer_);
        owner_ = nullptr;
    }
}

std::size_t connection_limiter::address_hash::operator()(const std::array<unsigned char, 16>& a) const noexcept {
    std::uint64_t hi = 0;
    std::uint64_t lo = 0;
    std::memcpy(&hi, a.data(), 8);
    std::memcpy(&lo, a.data() + 8, 8);
    return static_cast<std::size_t>((hi * 0x9E3779B97F4A7C15ULL) ^ lo);
}

connection_limiter::verdict connection_limiter::try_admit(const peer_address& peer, std::size_t max_total,
                                                          std::size_t max_per_ip, connection_slot& slot) {
    if (total_.fetch_add(1, std::memory_order_relaxed) >= max_total) {
        total_.fetch_sub(1, std::memory_order_relaxed);
        return verdict::over_total;
    }
    {
        std::lock_guard lock(mutex_);
        std::uint32_t& count = per_address_[peer.bytes];
        if (max_per_ip != 0 && count >= max_per_ip) {
            total_.fetch_sub(1, std::memory_order_relaxed);
            return verdict::over_per_ip;
        }
        ++count;
    }
    slot = connection_slot(this, peer);
    return verdict::admitted;
}

void connection_limiter::release(const peer_address& peer) {
    {
        std::lock_guard lock(mutex_);
        auto it = per_address_.find(peer.bytes);
        if (it != per_address_.end() && --it->second == 0) {
            per_address_.erase(it);
        }
    }
    total_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace parley::server
