#pragma once

#include <string_view>

namespace parley::protocol {

// Small text rules of HTTP header values (RFC 9110), shared by the handshake checks, the Origin
// rule and the page's Accept-Encoding and If-None-Match reading.

// ASCII case-insensitive equality (header tokens and schemes are ASCII).
inline bool equal_nocase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
        char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
        if (x != y) {
            return false;
        }
    }
    return true;
}

// s without the optional white space (spaces and tabs) around it.
inline std::string_view trim_ows(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

// Calls visit(item) for each item of a comma-separated list, trimmed, skipping empty ones;
// stops early when visit returns true, and returns whether it did.
template <typename Visit>
bool any_list_item(std::string_view list, Visit visit) {
    while (!list.empty()) {
        std::size_t comma = list.find(',');
        std::string_view item = trim_ows(list.substr(0, comma));
        if (!item.empty() && visit(item)) {
            return true;
        }
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    }
    return false;
}

}  // namespace parley::protocol
