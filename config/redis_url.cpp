#include "config/redis_url.hpp"

#include <charconv>

namespace parley::config {
namespace {

std::optional<redis_endpoint> refuse(std::string* why, std::string text) {
    if (why != nullptr) {
        *why = std::move(text);
    }
    return std::nullopt;
}

}  // namespace

std::optional<redis_endpoint> parse_redis_url(std::string_view url, std::string* why) {
    constexpr std::string_view scheme = "redis://";
    if (url.substr(0, scheme.size()) != scheme) {
        return refuse(why, "must be a URL of the form redis://HOST:PORT");
    }
    std::string_view rest = url.substr(scheme.size());
    if (!rest.empty() && rest.back() == '/') {
        rest.remove_suffix(1);  // "redis://host:6379/" is common in copied examples
    }
    if (rest.find_first_of("/?#") != std::string_view::npos) {
        return refuse(why, "must not have a path or query (Redis database numbers are not supported: parley "
                           "uses database 0)");
    }
    redis_endpoint endpoint;
    if (auto at = rest.rfind('@'); at != std::string_view::npos) {
        std::string_view user_info = rest.substr(0, at);
        if (user_info.empty() || user_info.front() != ':') {
            return refuse(why, "credentials must be written redis://:PASSWORD@HOST:PORT (no user name)");
        }
        endpoint.password = std::string(user_info.substr(1));
        rest = rest.substr(at + 1);
    }
    std::string_view host = rest;
    std::string_view port_text;
    if (!rest.empty() && rest.front() == '[') {
        auto close = rest.find(']');
        if (close == std::string_view::npos) {
            return refuse(why, "has an IPv6 address without its closing ']'");
        }
        host = rest.substr(1, close - 1);
        std::string_view after = rest.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') {
                return refuse(why, "has text after the IPv6 address's ']' that is not :PORT");
            }
            port_text = after.substr(1);
        }
    } else if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
        host = rest.substr(0, colon);
        port_text = rest.substr(colon + 1);
    }
    if (host.empty()) {
        return refuse(why, "names no host (redis://HOST:PORT)");
    }
    if (host.find_first_of(" \t:@[]") != std::string_view::npos && url.find('[') == std::string_view::npos) {
        return refuse(why, "has a host with characters a host name cannot have");
    }
    endpoint.host = std::string(host);
    if (port_text.data() != nullptr) {
        unsigned value = 0;
        auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
        if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || value == 0 ||
            value > 65535) {
            return refuse(why, "has a port that is not a number from 1 to 65535");
        }
        endpoint.port = static_cast<std::uint16_t>(value);
    }
    return endpoint;
}

}  // namespace parley::config
