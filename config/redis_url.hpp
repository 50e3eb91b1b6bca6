#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace parley::config {

// Where the cluster's Redis listens, from `cluster.redis`.
struct redis_endpoint {
    std::string host;  // an IP address or a host name, without brackets
    std::uint16_t port = 6379;
    std::string password;  // sent with AUTH after connecting; empty: none
};

// Reads "redis://HOST[:PORT]" or "redis://:PASSWORD@HOST[:PORT]" (an IPv6 HOST in brackets,
// PORT 6379 when left out). Returns nothing and sets why when the text is not such a URL.
std::optional<redis_endpoint> parse_redis_url(std::string_view url, std::string* why = nullptr);

}  // namespace parley::config
