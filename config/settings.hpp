#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::config {

// A room that exists from start, even with nobody in it, declared in [[rooms.permanent]].
struct permanent_room {
    permanent_room() = default;
    permanent_room(std::string room_name, std::string room_topic = {})
        : name(std::move(room_name)), topic(std::move(room_topic)) {}

    std::string name;
    std::string topic;  // sent in `joined`; empty: none
    // A private room admits only the users listed here and those whose token's `rooms` claim
    // names it, and is listed by `rooms` only to them.
    bool is_private = false;
    std::vector<std::string> members;
    // With auth.mode = "token": users who hold these roles in the room (docs/security.md).
    std::vector<std::string> owners;
    std::vector<std::string> moderators;
    friend bool operator==(const permanent_room&, const permanent_room&) = default;
};

// A receiver of chat events over HTTP, one [[webhooks]] table (docs/webhooks.md).
struct webhook_endpoint {
    std::string url;                  // http:// or https://, where batches are POSTed
    std::vector<std::string> events;  // protocol::webhook_event_names, or "*" for all
    std::string secret;               // HMAC-SHA256 key of the signature header, 16 bytes or more
    std::uint32_t timeout_ms = 5000;  // one POST, connect to answer
    std::size_t queue_events = 10000;  // events waiting for this receiver; more are dropped and counted
    std::string ca_file;              // trusted roots for an https url; empty: the system's
    friend bool operator==(const webhook_endpoint&, const webhook_endpoint&) = default;
};

// The settings that take one of a fixed set of words. The option table reads the word once, when
// the file or a flag gives it (an unknown word is a config error listing the allowed ones), and
// stores the enumerator; code compares enumerators, and name_of() gives the word back for --help,
// the reference, reload messages and anything else that prints the configuration.
enum class auth_mode { none, token };           // auth.mode
enum class history_backend { sqlite, memory };  // history.store
enum class log_format { text, json };           // log.format
enum class compression_mode { off, on };        // server.compression

// The words of each such enumeration, in the order of its enumerators.
template <typename E>
struct choice_words;
template <>
struct choice_words<auth_mode> {
    static constexpr std::array<std::string_view, 2> names = {"none", "token"};
};
template <>
struct choice_words<history_backend> {
    static constexpr std::array<std::string_view, 2> names = {"sqlite", "memory"};
};
template <>
struct choice_words<log_format> {
    static constexpr std::array<std::string_view, 2> names = {"text", "json"};
};
template <>
struct choice_words<compression_mode> {
    static constexpr std::array<std::string_view, 2> names = {"off", "on"};
};

// The word for `value` ("token"); empty for a value outside the enumeration.
template <typename E>
constexpr std::string_view name_of(E value) {
    const auto i = static_cast<std::size_t>(value);
    return i < choice_words<E>::names.size() ? choice_words<E>::names[i] : std::string_view();
}

// The enumerator whose word is `word`, exactly (case matters); nullopt for any other word.
template <typename E>
constexpr std::optional<E> choice_of(std::string_view word) {
    for (std::size_t i = 0; i < choice_words<E>::names.size(); ++i) {
        if (choice_words<E>::names[i] == word) {
            return static_cast<E>(i);
        }
    }
    return std::nullopt;
}

// Every tunable of the daemon with its default. The option table in config/options.cpp maps
// each field to its `[section] key` in the TOML file (and to a command-line flag for some), with
// its bounds, unit, help and whether a reload (SIGHUP) may change it. Nothing else in the code
// hard-codes a limit: each module reads the value it needs from here.
struct settings {
    // [server]
    std::string bind = "0.0.0.0";
    std::uint16_t port = 8080;
    unsigned threads = 0;              // 0: one worker per core
    std::string ws_path = "/ws";
    std::vector<std::string> allowed_origins;  // empty: same host only (and clients without Origin)
    std::string motd;                   // sent as a `system` message after `welcome`; empty: none
    std::uint32_t handshake_timeout_ms = 10000;  // TCP connect to complete HTTP request head
    std::uint32_t shutdown_timeout_ms = 10000;   // longest a graceful shutdown may take
    std::uint32_t shutdown_close_window_ms = 2000;  // 1001 closes are spread over this window
    std::size_t max_request_header_bytes = 8 * 1024;  // HTTP request head
    config::compression_mode compression = config::compression_mode::off;  // permessage-deflate
    std::size_t compression_min_bytes = 256;  // smaller messages go uncompressed

    // [tls]  Both empty: the port speaks plain HTTP and ws://; both set: https and wss://.
    std::string tls_cert_file;  // PEM: the certificate, then its intermediates
    std::string tls_key_file;   // PEM: the certificate's private key

    // [limits]
    std::size_t max_connections = 1000000;       // WebSocket + HTTP connections, in total
    std::size_t max_connections_per_ip = 0;      // 0: no per-address limit
    std::size_t max_message_bytes = 64 * 1024;   // one WebSocket message, after reassembly
    std::size_t max_text_bytes = 4096;           // `text` of say and dm
    std::size_t max_rooms_per_connection = 100;
    std::size_t write_queue_limit_bytes = 4 * 1024 * 1024;  // slow consumer bound
    double rate_limit_per_second = 200;          // requests per connection (token bucket)
    double rate_limit_burst = 400;
    std::uint32_t rate_limit_strikes = 50;  // rejected requests in a row before close 1008
    std::uint32_t login_timeout_ms = 10000;  // after the upgrade, `login` must come within this
    std::uint32_t idle_timeout_ms = 60000;   // nothing received for this long: close
    std::uint32_t ping_interval_ms = 25000;  // silence this long: the server sends a ping

    // [rooms]
    std::size_t max_room_members = 100000;
    std::size_t presence_max_members = 1000;  // above this size, join/leave presence is not sent
    std::uint32_t presence_count_interval_ms = 5000;  // above it, presence_count at most this often
    std::size_t joined_members_max = 100;  // names in `joined` (member_count tells the rest)
    std::size_t history_per_room = 1000;   // messages kept per room in memory
    std::size_t joined_history = 50;       // messages sent in `joined`
    std::size_t history_default_limit = 50;
    std::size_t history_max_limit = 500;
    std::uint32_t typing_interval_ms = 1000;  // at most one typing per user per room per interval
    std::uint32_t edit_window_s = 900;        // how long after saying it an author may edit a message
    std::vector<permanent_room> permanent_rooms;

    // [history]
    history_backend history_store = history_backend::sqlite;  // sqlite (a file, survives restarts) or memory
    std::string history_path = "/var/lib/parley/history.db";  // the SQLite file
    std::uint32_t history_flush_interval_ms = 50;  // longest a message waits to be written
    std::size_t history_batch_size = 10000;        // messages written at once when this many wait
    std::size_t history_retain_messages = 100000;  // per room in the file; 0: no limit
    double history_retain_days = 0;                // older messages are deleted; 0: kept
    std::size_t welcome_conversations = 200;       // listed in a token-mode welcome
    std::size_t history_memory_budget_bytes = 64 * 1024 * 1024;  // idle room logs in memory, all rooms together

    // [auth]
    // none: any free name; token: a signed token names the user. (Qualified: the member hides the type.)
    config::auth_mode auth_mode = config::auth_mode::none;
    std::string auth_token_secret;          // HS256 key shared with the application minting tokens
    std::uint32_t auth_token_leeway_ms = 30000;  // clock difference tolerated for exp and nbf
    std::string auth_public_keys;  // file: PEM public keys or a JWK Set (RS256, ES256); empty: none
    std::string auth_jwks_url;     // https URL of a JWK Set, fetched in the background; empty: none
    std::string auth_jwks_ca_file;  // trusted roots for jwks_url; empty: the system's
    std::string auth_issuer;       // tokens' iss must be this; empty: not checked
    std::string auth_audience;     // tokens' aud must name this; empty: not checked
    std::size_t max_sessions_per_user = 8;  // token mode: connections one user may hold at once

    // [admin]
    std::string admin_token;  // bearer token of the /admin/ API; empty: the API is off (404)

    // [log]
    std::string log_level = "info";   // trace, debug, info, warn, error, off
    config::log_format log_format = config::log_format::text;  // text or json (one object per line)
    std::string log_file;             // empty: stderr

    // [metrics]
    bool metrics_enabled = true;      // GET /metrics

    // [cluster]  Empty redis: a single node, and nothing of the cluster runs.
    std::vector<std::string> cluster_redis;      // redis://HOST:PORT, one per shard
    std::string cluster_mode = "standalone";     // standalone servers, or redis-cluster (seeds)
    std::string cluster_node_id;                 // unique per node; empty: the host name
    std::uint32_t cluster_name_ttl_ms = 15000;   // lease on a logged-in name, renewed by its node
    std::size_t cluster_history_messages = 10000;  // per room, in its Redis stream

    // [[webhooks]]  Empty: no events leave the daemon.
    std::vector<webhook_endpoint> webhooks;
};

// Rejects combinations no daemon can run with (each field's own range is checked by the
// loader); returns an empty string when valid, else the reason naming the keys involved.
std::string validate(const settings& s);
// Every such problem, one sentence each, naming the keys in dotted form; empty when valid.
// validate() returns the first of them.
std::vector<std::string> problems(const settings& s);

}  // namespace parley::config
