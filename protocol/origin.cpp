#include "protocol/origin.hpp"

#include "protocol/header_text.hpp"

#include <algorithm>

namespace parley::protocol {
namespace {

// "host:443" and "host" are the same place for https (and ":80" for http).
std::string_view strip_default_port(std::string_view authority, std::string_view default_port) {
    if (authority.size() > default_port.size() + 1 && authority.ends_with(default_port) &&
        authority[authority.size() - default_port.size() - 1] == ':') {
        return authority.substr(0, authority.size() - default_port.size() - 1);
    }
    return authority;
}

}  // namespace

bool origin_allowed(std::string_view origin, std::string_view host, const std::vector<std::string>& allowed) {
    if (origin.empty()) {
        return true;
    }
    if (!allowed.empty()) {
        return std::any_of(allowed.begin(), allowed.end(),
                           [&](const std::string& entry) { return entry == "*" || equal_nocase(entry, origin); });
    }
    // Same host: compare the Origin's authority with Host.
    std::string_view scheme;
    std::string_view authority;
    if (auto sep = origin.find("://"); sep != std::string_view::npos) {
        scheme = origin.substr(0, sep);
        authority = origin.substr(sep + 3);
    } else {
        return false;  // "null" (sandboxed pages, file://) and anything malformed
    }
    if (authority.empty() || authority.find('/') != std::string_view::npos || host.empty()) {
        return false;
    }
    std::string_view port = equal_nocase(scheme, "https") || equal_nocase(scheme, "wss") ? "443" : "80";
    return equal_nocase(strip_default_port(authority, port), strip_default_port(host, port));
}

}  // namespace parley::protocol
