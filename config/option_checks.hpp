#pragma once

#include <string>
#include <string_view>

// Internal to config/: the checks of string values that entries of the option table
// (config/options.cpp) point at. Each returns what is wrong with one value, in words for an
// admin ("must start with '/', got 'ws'"), or "" when it is fine. Pure functions, any thread.
// Checking a value against its whole option (type, bounds, allowed values, the check) is
// option::set(), defined beside these in option_checks.cpp; the checks that combine several keys
// are problems() in settings.cpp.
namespace parley::config {

// An IPv4 or IPv6 literal (server.bind).
std::string check_address(std::string_view text);
// An HTTP path starting with '/', without spaces, '?' or '#' (server.ws_path).
std::string check_ws_path(std::string_view text);
// "*" or scheme://host[:port] without a path (an entry of server.allowed_origins).
std::string check_origin(std::string_view text);
// 1-32 characters of A-Z a-z 0-9 _ . - (a member of a private permanent room).
std::string check_user_name(std::string_view text);
// A URL parse_redis_url() accepts (an entry of cluster.redis).
std::string check_redis_url(std::string_view text);
// Empty, or 1-64 characters of A-Z a-z 0-9 _ . - (cluster.node_id).
std::string check_node_id(std::string_view text);
// Empty, or an https:// URL with a host and no spaces (auth.jwks_url).
std::string check_https_url(std::string_view text);

}  // namespace parley::config
