#pragma once

#include "config/settings.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// Internal to config/: the checks of string values that entries of the option table
// (config/options.cpp) point at, and the rules of a [[webhooks]] table. Each returns what is
// wrong with one value, in words for an admin ("must start with '/', got 'ws'"), or "" when it
// is fine. Pure functions, any thread.
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
// An http:// or https:// URL with a host, no user@ and no spaces (the url of a [[webhooks]] table).
std::string check_http_url(std::string_view text);

// ---- the rules of one [[webhooks]] table ----
// Shared by the loader, which reports each problem at the line of its key, and option::set,
// which checks settings built in code the same way.

inline constexpr std::int64_t webhook_timeout_ms_min = 100;
inline constexpr std::int64_t webhook_timeout_ms_max = 60'000;
inline constexpr std::int64_t webhook_queue_events_min = 1;
inline constexpr std::int64_t webhook_queue_events_max = 1'000'000;
// Shorter HMAC keys can be guessed from signed requests.
inline constexpr std::size_t webhook_secret_min_bytes = 16;

// The keys a table may have, in the order webhook_problems() reports them.
inline constexpr std::array<std::string_view, 6> webhook_keys = {
    "url", "events", "secret", "timeout_ms", "queue_events", "ca_file",
};

// "webhooks[2].url" for `key` of the table at 0-based `index`: the tables are counted from 1, as
// an admin counts them in the file. An empty key names the table itself ("webhooks[2]").
std::string webhook_key_name(std::size_t index, std::string_view key);

// At least one entry, each an event word of protocol::webhook_event_names or "*" for all.
std::string check_webhook_events(std::span<const std::string> events);
// At least webhook_secret_min_bytes; the message never shows the secret.
std::string check_webhook_secret(std::string_view secret);
// "must be from 100 to 60000, got 50", or "".
std::string check_whole_range(std::int64_t n, std::int64_t min, std::int64_t max);

struct webhook_key_problem {
    std::string_view key;  // one of webhook_keys
    std::string message;
};
// Every key of `hook` that breaks its rule, in the order of webhook_keys; empty when valid.
std::vector<webhook_key_problem> webhook_problems(const webhook_endpoint& hook);
// Why a later table may not have the url of the table at 0-based `earlier`.
std::string webhook_url_repeated(std::size_t earlier);
// The first problem of a list of tables ("webhooks[2].secret: must be ..."), or "": each table's
// rules, and no url twice.
std::string webhooks_problem(std::span<const webhook_endpoint> hooks);

}  // namespace parley::config
