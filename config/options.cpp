#include "config/options.hpp"

#include "config/option_checks.hpp"
#include "config/option_text.hpp"

#include <array>
#include <limits>
#include <type_traits>

namespace parley::config {
namespace {

// ---- accessors, one instantiation per settings field ----

template <typename T>
struct field_traits;

template <typename T>
struct field_traits<T settings::*> {
    using type = T;
};

template <auto Field>
using field_type = typename field_traits<decltype(Field)>::type;

std::string strings_text(const std::vector<std::string>& v) {
    std::string text = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
        text += i == 0 ? "" : ", ";
        text += toml_quote(v[i]);
    }
    return text + "]";
}

std::string rooms_text(const std::vector<permanent_room>& rooms) {
    std::string text = "[";
    for (std::size_t i = 0; i < rooms.size(); ++i) {
        text += i == 0 ? "" : ", ";
        text += "{ name = " + toml_quote(rooms[i].name) + ", topic = " + toml_quote(rooms[i].topic);
        if (rooms[i].is_private) {
            text.append(", private = true, members = ").append(strings_text(rooms[i].members));
        }
        if (!rooms[i].owners.empty()) {
            text.append(", owners = ").append(strings_text(rooms[i].owners));
        }
        if (!rooms[i].moderators.empty()) {
            text.append(", moderators = ").append(strings_text(rooms[i].moderators));
        }
        text += " }";
    }
    return text + "]";
}

// The secrets are written as "(secret)": an option's text may be printed anywhere (the
// reference, a test's failure), and a secret must not be.
std::string webhooks_text(const std::vector<webhook_endpoint>& hooks) {
    const webhook_endpoint defaults;
    std::string text = "[";
    for (std::size_t i = 0; i < hooks.size(); ++i) {
        const webhook_endpoint& hook = hooks[i];
        text += i == 0 ? "" : ", ";
        text += "{ url = " + toml_quote(hook.url) + ", events = " + strings_text(hook.events) +
                ", secret = \"(secret)\"";
        if (hook.timeout_ms != defaults.timeout_ms) {
            text += ", timeout_ms = " + std::to_string(hook.timeout_ms);
        }
        if (hook.queue_events != defaults.queue_events) {
            text += ", queue_events = " + std::to_string(hook.queue_events);
        }
        if (!hook.ca_file.empty()) {
            text += ", ca_file = " + toml_quote(hook.ca_file);
        }
        text += " }";
    }
    return text + "]";
}

template <auto Field>
std::string text_of(const settings& s) {
    const auto& v = s.*Field;
    using T = field_type<Field>;
    if constexpr (std::is_same_v<T, bool>) {
        return v ? "true" : "false";
    } else if constexpr (std::is_integral_v<T>) {
        return std::to_string(v);
    } else if constexpr (std::is_same_v<T, double>) {
        return number_text(v);
    } else if constexpr (std::is_same_v<T, std::string>) {
        return toml_quote(v);
    } else if constexpr (std::is_enum_v<T>) {
        return toml_quote(name_of(v));
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
        return strings_text(v);
    } else if constexpr (std::is_same_v<T, std::vector<permanent_room>>) {
        return rooms_text(v);
    } else {
        static_assert(std::is_same_v<T, std::vector<webhook_endpoint>>);
        return webhooks_text(v);
    }
}

// Called only after option::set checked the value's type and bounds.
template <auto Field>
void store(settings& s, const option_value& value) {
    using T = field_type<Field>;
    if constexpr (std::is_same_v<T, bool>) {
        s.*Field = std::get<bool>(value);
    } else if constexpr (std::is_integral_v<T>) {
        s.*Field = static_cast<T>(std::get<std::int64_t>(value));
    } else if constexpr (std::is_same_v<T, double>) {
        s.*Field = std::get<double>(value);
    } else if constexpr (std::is_enum_v<T>) {
        // The word was checked against `allowed`, which is choice_words<T>::names.
        s.*Field = *choice_of<T>(std::get<std::string>(value));
    } else {
        s.*Field = std::get<T>(value);
    }
}

template <auto Field>
void copy(settings& to, const settings& from) {
    to.*Field = from.*Field;
}

template <auto Field>
bool same(const settings& a, const settings& b) {
    return a.*Field == b.*Field;
}

template <typename T>
constexpr value_type type_of() {
    if constexpr (std::is_same_v<T, bool>) {
        return value_type::boolean;
    } else if constexpr (std::is_integral_v<T>) {
        static_assert(std::is_unsigned_v<T>, "whole-number options are unsigned");
        return value_type::whole;
    } else if constexpr (std::is_same_v<T, double>) {
        return value_type::number;
    } else if constexpr (std::is_same_v<T, std::string>) {
        return value_type::string;
    } else if constexpr (std::is_enum_v<T>) {
        return value_type::choice;
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
        return value_type::string_list;
    } else if constexpr (std::is_same_v<T, std::vector<permanent_room>>) {
        return value_type::room_list;
    } else {
        static_assert(std::is_same_v<T, std::vector<webhook_endpoint>>);
        return value_type::webhook_list;
    }
}

// Fills in the type and the accessors of `o` from the settings field it describes.
template <auto Field>
option field(option o) {
    using T = field_type<Field>;
    o.type = type_of<T>();
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        // A bound beyond the field's type would store a truncated value.
        if (o.max > static_cast<double>(std::numeric_limits<T>::max())) {
            o.max = static_cast<double>(std::numeric_limits<T>::max());
        }
    }
    if constexpr (std::is_enum_v<T>) {
        o.allowed = choice_words<T>::names;
    }
    o.text_of = &text_of<Field>;
    o.store = &store<Field>;
    o.copy = &copy<Field>;
    o.same = &same<Field>;
    return o;
}

constexpr std::array<std::string_view, 6> log_levels = {"trace", "debug", "info", "warn", "error", "off"};
constexpr std::array<std::string_view, 2> cluster_modes = {"standalone", "redis-cluster"};

constexpr double kib = 1024;
constexpr double mib = 1024 * kib;
constexpr double gib = 1024 * mib;
constexpr double hour_ms = 3600 * 1000;
constexpr double day_ms = 24 * hour_ms;

// ---- the table, one function per group of sections, in the order of sections() ----

// [server] and [tls]
void add_server_options(std::vector<option>& out) {
    out.insert(out.end(), {
        field<&settings::bind>({.section = "server", .key = "bind",
            .help = "IPv4 or IPv6 address to listen on. 0.0.0.0 listens on every IPv4 interface, :: on "
                    "every IPv6 one (and IPv4 where the system maps it), 127.0.0.1 on this machine only.",
            .flag = "--bind", .value_name = "ADDR", .check = &check_address}),
        field<&settings::port>({.section = "server", .key = "port",
            .help = "TCP port for HTTP and WebSocket. 0 lets the system pick a free port (the log says which).",
            .flag = "--port", .value_name = "N", .min = 0, .max = 65535}),
        field<&settings::threads>({.section = "server", .key = "threads", .unit = "threads",
            .help = "Worker threads, each running its own event loop; a connection stays on one worker. "
                    "0 starts one per CPU core.",
            .flag = "--threads", .value_name = "T", .min = 0, .max = 256}),
        field<&settings::ws_path>({.section = "server", .key = "ws_path",
            .help = "HTTP path that upgrades to WebSocket; every other path except the health and metrics "
                    "endpoints gets 404.",
            .flag = "--ws-path", .value_name = "PATH", .check = &check_ws_path}),
        field<&settings::allowed_origins>({.section = "server", .key = "allowed_origins",
            .help = "Web pages (Origin header) allowed to open a WebSocket, as scheme://host[:port], or \"*\" "
                    "for any. Empty: only pages served from the same host; clients that send no Origin "
                    "(bots, native apps) are always allowed.",
            .reloadable = true, .check = &check_origin}),
        field<&settings::motd>({.section = "server", .key = "motd",
            .help = "Message of the day, sent to each client as a system message right after login. "
                    "Empty: none.",
            .reloadable = true}),
        field<&settings::handshake_timeout_ms>({.section = "server", .key = "handshake_timeout_ms",
            .unit = "milliseconds",
            .help = "Time a new TCP connection has to send its complete HTTP request head; slower ones "
                    "are closed.",
            .reloadable = true, .min = 100, .max = hour_ms}),
        field<&settings::shutdown_timeout_ms>({.section = "server", .key = "shutdown_timeout_ms",
            .unit = "milliseconds",
            .help = "Longest a graceful shutdown (SIGTERM, SIGINT) may take: after it, the remaining "
                    "connections are dropped and the daemon exits.",
            .reloadable = true, .min = 0, .max = hour_ms}),
        field<&settings::shutdown_close_window_ms>({.section = "server", .key = "shutdown_close_window_ms",
            .unit = "milliseconds",
            .help = "At shutdown, the 1001 (going away) closes are spread over this window so that "
                    "clients do not all reconnect elsewhere at the same instant. Must not exceed "
                    "shutdown_timeout_ms.",
            .reloadable = true, .min = 0, .max = hour_ms}),
        field<&settings::max_request_header_bytes>({.section = "server", .key = "max_request_header_bytes",
            .unit = "bytes",
            .help = "Largest HTTP request head (request line and headers) accepted; a larger one gets "
                    "431 and the connection is closed.",
            .reloadable = true, .min = 1 * kib, .max = 1 * mib}),
        field<&settings::compression>({.section = "server", .key = "compression",
            .help = "permessage-deflate (RFC 7692) for clients that offer it: off, or on. On, each "
                    "message is compressed on its own (no context takeover in either direction), so a "
                    "broadcast is compressed once for every member and a connection keeps no compression "
                    "state. Applies to connections opened after a reload.",
            .reloadable = true}),
        field<&settings::compression_min_bytes>({.section = "server", .key = "compression_min_bytes",
            .unit = "bytes",
            .help = "With compression on, messages shorter than this go uncompressed: the shortest "
                    "gain little and cost a compression each.",
            .reloadable = true, .min = 0, .max = 1 * mib}),

        // ---- [tls] ----
        field<&settings::tls_cert_file>({.section = "tls", .key = "cert_file",
            .help = "PEM file with the server certificate followed by its intermediate certificates (a "
                    "full chain). With key_file set too, the port speaks TLS: https:// and wss:// only. Both "
                    "empty: plain HTTP and ws://. Every reload reads the file again, for new connections."}),
        field<&settings::tls_key_file>({.section = "tls", .key = "key_file",
            .help = "PEM file with the certificate's private key. Keep it readable by the daemon's user "
                    "only. Every reload reads it again, together with cert_file."}),

    });
}

// [limits]
void add_limits_options(std::vector<option>& out) {
    out.insert(out.end(), {
        field<&settings::max_connections>({.section = "limits", .key = "max_connections",
            .unit = "connections",
            .help = "Open connections (HTTP and WebSocket together) the daemon accepts; beyond it new "
                    "connections are refused until some close. Keep the process's open-file limit above it.",
            .reloadable = true, .flag = "--max-connections", .value_name = "N", .min = 1, .max = 100'000'000}),
        field<&settings::max_connections_per_ip>({.section = "limits", .key = "max_connections_per_ip",
            .unit = "connections",
            .help = "Open connections one client IP address may hold. 0: no per-address limit.",
            .reloadable = true, .min = 0, .max = 100'000'000}),
        field<&settings::max_message_bytes>({.section = "limits", .key = "max_message_bytes",
            .unit = "bytes",
            .help = "Largest WebSocket message a client may send, after reassembling its frames; a larger "
                    "one closes the connection with 1009 (message too big).",
            .reloadable = true, .flag = "--max-message", .value_name = "BYTES", .min = 125, .max = 64 * mib}),
        field<&settings::max_text_bytes>({.section = "limits", .key = "max_text_bytes", .unit = "bytes",
            .help = "Longest text of a say or dm message; a longer one gets the error too_large. "
                    "Must not exceed max_message_bytes.",
            .reloadable = true, .min = 1, .max = 64 * mib}),
        field<&settings::max_rooms_per_connection>({.section = "limits", .key = "max_rooms_per_connection",
            .unit = "rooms",
            .help = "Rooms one connection may be in at once; one more join gets the error too_many_rooms.",
            .reloadable = true, .min = 1, .max = 100'000}),
        field<&settings::write_queue_limit_bytes>({.section = "limits", .key = "write_queue_limit_bytes",
            .unit = "bytes",
            .help = "Bytes that may wait to be sent to one client before it is closed as a slow consumer "
                    "(1008). Its queue is dropped, so a client that falls behind never holds up a room.",
            .reloadable = true, .flag = "--write-queue-limit", .value_name = "BYTES", .min = 1 * kib,
            .max = 16 * gib}),
        field<&settings::rate_limit_per_second>({.section = "limits", .key = "rate_limit_per_second",
            .unit = "requests per second",
            .help = "Requests one connection may send per second on average (a token bucket); requests "
                    "beyond it get the error rate_limited.",
            .reloadable = true, .flag = "--rate-limit", .value_name = "N", .min = 0.001, .max = 10'000'000}),
        field<&settings::rate_limit_burst>({.section = "limits", .key = "rate_limit_burst", .unit = "requests",
            .help = "Requests a connection may send at once before rate_limit_per_second applies (the size "
                    "of the bucket).",
            .reloadable = true, .flag = "--rate-burst", .value_name = "N", .min = 1, .max = 10'000'000}),
        field<&settings::rate_limit_strikes>({.section = "limits", .key = "rate_limit_strikes",
            .unit = "requests",
            .help = "Rate-limited requests in a row after which the connection is closed with 1008 "
                    "(policy violation).",
            .reloadable = true, .min = 1, .max = 1'000'000}),
        field<&settings::login_timeout_ms>({.section = "limits", .key = "login_timeout_ms",
            .unit = "milliseconds",
            .help = "Time a client has after the WebSocket upgrade to log in; then it is closed. 0: no limit.",
            .reloadable = true, .min = 0, .max = hour_ms}),
        field<&settings::idle_timeout_ms>({.section = "limits", .key = "idle_timeout_ms",
            .unit = "milliseconds",
            .help = "A connection from which nothing (not even a pong) arrives for this long is closed. "
                    "0: never.",
            .reloadable = true, .min = 0, .max = day_ms}),
        field<&settings::ping_interval_ms>({.section = "limits", .key = "ping_interval_ms",
            .unit = "milliseconds",
            .help = "After this much silence from a client the server sends it a ping, so that live "
                    "clients are not taken for idle ones. 0: no pings. Must be below idle_timeout_ms.",
            .reloadable = true, .min = 0, .max = day_ms}),

    });
}

// [rooms]
void add_rooms_options(std::vector<option>& out) {
    out.insert(out.end(), {
        field<&settings::max_room_members>({.section = "rooms", .key = "max_members", .unit = "members",
            .help = "Members one room may hold; one more join gets the error room_full.",
            .reloadable = true, .flag = "--max-room-members", .value_name = "N", .min = 1,
            .max = 100'000'000}),
        field<&settings::presence_max_members>({.section = "rooms", .key = "presence_max_members",
            .unit = "members",
            .help = "Rooms with more members than this send no join and leave (presence) events, which "
                    "in a large room would outnumber the messages. 0: never send presence.",
            .reloadable = true, .min = 0, .max = 100'000'000}),
        field<&settings::presence_count_interval_ms>({.section = "rooms", .key = "presence_count_interval_ms",
            .unit = "milliseconds",
            .help = "In rooms above presence_max_members, members hear the member count (presence_count) "
                    "when it changed, at most this often, instead of each join and leave.",
            .reloadable = true, .min = 1000, .max = hour_ms}),
        field<&settings::joined_members_max>({.section = "rooms", .key = "joined_members_max",
            .unit = "members",
            .help = "Names a joined reply lists: the first of the room's sorted member list, with "
                    "member_count and members_truncated when there are more (clients page the rest "
                    "with members). 0: only the count.",
            .reloadable = true, .min = 0, .max = 100'000}),
        field<&settings::history_per_room>({.section = "rooms", .key = "history_per_room",
            .unit = "messages",
            .help = "Messages kept per room in memory, for history requests and for clients that reconnect. "
                    "The store is sized at start.",
            .flag = "--history", .value_name = "N", .min = 1, .max = 10'000'000}),
        field<&settings::joined_history>({.section = "rooms", .key = "joined_history", .unit = "messages",
            .help = "Latest messages sent with the joined reply. 0: none (clients ask with history). "
                    "Must not exceed history_per_room.",
            .reloadable = true, .min = 0, .max = 100'000}),
        field<&settings::history_default_limit>({.section = "rooms", .key = "history_default_limit",
            .unit = "messages",
            .help = "Messages a history request returns when it gives no limit. Must not exceed "
                    "history_max_limit.",
            .reloadable = true, .min = 1, .max = 100'000}),
        field<&settings::history_max_limit>({.section = "rooms", .key = "history_max_limit",
            .unit = "messages",
            .help = "Most messages one history request may return; larger limits are reduced to it.",
            .reloadable = true, .min = 1, .max = 100'000}),
        field<&settings::typing_interval_ms>({.section = "rooms", .key = "typing_interval_ms",
            .unit = "milliseconds",
            .help = "At most one typing notice per user per room is passed on in this interval; more are "
                    "dropped silently. 0: no limit.",
            .reloadable = true, .min = 0, .max = hour_ms}),
        field<&settings::edit_window_s>({.section = "rooms", .key = "edit_window_s", .unit = "seconds",
            .help = "How long after saying a message its author may edit it (token mode). 0: messages cannot "
                    "be edited. Deleting has no window.",
            .reloadable = true, .min = 0, .max = 7 * 24 * 3600}),
        field<&settings::permanent_rooms>({.section = "rooms", .key = "permanent",
            .help = "Rooms that exist from start, even when empty, each a [[rooms.permanent]] table with "
                    "a name (1-64 characters of A-Z a-z 0-9 _ . -), an optional topic sent in joined, and "
                    "optionally private = true with members = [user names]: a private room admits only "
                    "its members and users whose token names it. With auth.mode = \"token\", owners = [...] "
                    "and moderators = [...] give those users that role in the room. Other rooms exist while "
                    "they have members.",
            .reloadable = true}),

    });
}

// [history] and [auth]
void add_history_and_auth_options(std::vector<option>& out) {
    out.insert(out.end(), {
        field<&settings::history_store>({.section = "history", .key = "store",
            .help = "Where room history lives. sqlite: in the file at path, so rooms keep their messages and "
                    "their seq across restarts (written in batches by a thread of its own). memory: only in "
                    "memory (rooms.history_per_room per room), lost at restart.",
            .flag = "--history-store", .value_name = "STORE"}),
        field<&settings::history_path>({.section = "history", .key = "path",
            .help = "The SQLite database file (made when missing, with its -wal and -shm files beside it, so "
                    "the directory must be writable). The systemd unit's state directory holds it.",
            .flag = "--history-path", .value_name = "FILE"}),
        field<&settings::history_flush_interval_ms>({.section = "history", .key = "flush_interval_ms",
            .unit = "milliseconds",
            .help = "Accepted messages are written at least this often (sooner when batch_size wait). A crash "
                    "(kill -9, not SIGTERM) loses at most the messages of the last interval.",
            .min = 1, .max = 60000}),
        field<&settings::history_batch_size>({.section = "history", .key = "batch_size", .unit = "messages",
            .help = "When this many messages wait, they are written at once without waiting for the interval.",
            .min = 1, .max = 1'000'000}),
        field<&settings::history_retain_messages>({.section = "history", .key = "retain_messages",
            .unit = "messages",
            .help = "Messages kept per room in the file; older ones are deleted as new ones come. 0: no limit. "
                    "The newest rooms.history_per_room of them are also kept in memory.",
            .min = 0, .max = 1'000'000'000}),
        field<&settings::history_retain_days>({.section = "history", .key = "retain_days", .unit = "days",
            .help = "Messages older than this are deleted (from the file and memory, with either store), "
                    "checked about every hundredth of the period. 0: kept however old.",
            .min = 0, .max = 100000}),
        field<&settings::welcome_conversations>({.section = "history", .key = "welcome_conversations",
            .unit = "conversations",
            .help = "With auth.mode = \"token\": the most rooms and direct conversations listed in a login's "
                    "welcome, each with its last seq, the user's read marker and unread count, newest "
                    "activity first. 0: none listed.",
            .min = 0, .max = 100'000}),
        field<&settings::history_memory_budget_bytes>({.section = "history", .key = "memory_budget_bytes",
            .unit = "bytes",
            .help = "Memory the rooms' logs (their newest messages) may hold, all rooms together, before "
                    "logs of rooms nobody is in are evicted, least recently used first: with sqlite once "
                    "written, and read back from the file when the room is used again. Logs of rooms with "
                    "members are never evicted. With the memory store an evicted log is gone, and the room "
                    "starts over in a new epoch. 64 MiB keeps tens of thousands of quiet rooms, or a few "
                    "hundred with a full memory history, ready to rejoin from memory, and caps what clients "
                    "inventing room names can make the daemon keep. 0: a log goes once nobody uses it.",
            .min = 0, .max = 1024 * gib}),

        // ---- [auth] ----
        field<&settings::auth_mode>({.section = "auth", .key = "mode",
            .help = "How a login proves its name. none: any free name is taken as given, and one name is one "
                    "connection. token: login carries a signed token (JWT: HS256, RS256 or ES256) whose sub is the user name; "
                    "anything else gets unauthorized and the connection is closed.",
            .reloadable = true, .flag = "--auth", .value_name = "MODE"}),
        field<&settings::auth_token_secret>({.section = "auth", .key = "token_secret",
            .help = "The HS256 key the web application signs tokens with, at least 32 bytes; empty: HS256 "
                    "tokens are refused (use public_keys). Keep the file readable by the daemon's user only.",
            .reloadable = true, .secret = true}),
        field<&settings::auth_public_keys>({.section = "auth", .key = "public_keys",
            .help = "A file with the public keys tokens may be signed with: PEM (-----BEGIN PUBLIC KEY-----, "
                    "one or more) or a JWK Set (JSON, as an issuer publishes it at its jwks_uri). RSA keys "
                    "check RS256 tokens, EC keys on P-256 ES256 tokens; a token's kid picks the key. Read at "
                    "start, on a reload, and again (at most every 10 s) when a token names a key it lacks.",
            .reloadable = true}),
        field<&settings::auth_jwks_url>({.section = "auth", .key = "jwks_url",
            .help = "An https URL serving a JWK Set (an identity provider's jwks_uri), fetched in the "
                    "background: at start, every 10 minutes, and (at most every 10 s) when a token names a key "
                    "the keys lack. Its keys count together with public_keys'. A fetch that fails keeps the "
                    "keys in force.",
            .reloadable = true, .check = &check_https_url}),
        field<&settings::auth_jwks_ca_file>({.section = "auth", .key = "jwks_ca_file",
            .help = "PEM file of the certificates trusted for jwks_url; empty: the system's trusted roots.",
            .reloadable = true}),
        field<&settings::auth_issuer>({.section = "auth", .key = "issuer",
            .help = "When set, a token's iss claim must be exactly this.",
            .reloadable = true}),
        field<&settings::auth_audience>({.section = "auth", .key = "audience",
            .help = "When set, a token's aud claim (a string or a list) must name this.",
            .reloadable = true}),
        field<&settings::auth_token_leeway_ms>({.section = "auth", .key = "token_leeway_ms",
            .unit = "milliseconds",
            .help = "Clock difference tolerated between this machine and the token's issuer when checking "
                    "its exp and nbf claims.",
            .reloadable = true, .min = 0, .max = hour_ms}),
        field<&settings::max_sessions_per_user>({.section = "auth", .key = "max_sessions_per_user",
            .unit = "connections",
            .help = "In token mode, connections one user may hold at once (tabs, devices); one more login "
                    "gets username_taken. In none mode a name is always one connection.",
            .reloadable = true, .min = 1, .max = 64}),

    });
}

// [admin], [log], [metrics] and [cluster]
void add_admin_log_metrics_cluster_options(std::vector<option>& out) {
    out.insert(out.end(), {
        field<&settings::admin_token>({.section = "admin", .key = "token",
            .help = "Bearer token of the admin API under /admin/ on the same port (list users and rooms, "
                    "kick, announce, close rooms), at least 16 bytes. Empty: the API is off and /admin/ "
                    "gets 404.",
            .reloadable = true, .secret = true}),

        // ---- [log] ----
        field<&settings::log_level>({.section = "log", .key = "level",
            .help = "Least severe log messages written: trace, debug, info, warn, error, or off. "
                    "Clients' mistakes are logged at debug.",
            .reloadable = true, .flag = "--log-level", .value_name = "LEVEL", .allowed = log_levels}),
        field<&settings::log_format>({.section = "log", .key = "format",
            .help = "Log line format: text (one readable line per event) or json (one JSON object per line, "
                    "for log collectors).",
            .flag = "--log-format", .value_name = "FORMAT"}),
        field<&settings::log_file>({.section = "log", .key = "file",
            .help = "File the log is appended to; empty: standard error (which systemd's journal collects).",
            .flag = "--log-file", .value_name = "PATH"}),

        // ---- [metrics] ----
        field<&settings::metrics_enabled>({.section = "metrics", .key = "enabled",
            .help = "Serve Prometheus metrics at GET /metrics on the same port. false: that path gets 404.",
            .reloadable = true}),

        // ---- [cluster] ----
        field<&settings::cluster_redis>({.section = "cluster", .key = "redis",
            .help = "The Redis servers the nodes of a cluster share, as redis://HOST:PORT (or "
                    "redis://:PASSWORD@HOST:PORT): one URL, or a list of them to spread the rooms over several "
                    "servers (shards), the same list in the same order on every node. Nodes pointing at the same "
                    "Redis share rooms, presence, direct messages, name uniqueness and history. Empty: this daemon "
                    "is a single node and nothing of the cluster runs.",
            .flag = "--cluster-redis", .value_name = "URL[,URL...]", .check = &check_redis_url, .secret = true,
            .one_or_list = true}),
        field<&settings::cluster_mode>({.section = "cluster", .key = "mode",
            .help = "What cluster.redis lists: standalone (Redis servers of their own; with several, the rooms "
                    "are spread over them by partition, the first holding the cluster's own data) or "
                    "redis-cluster (seeds of one Redis Cluster, 7.0 or later: the nodes read its slot map "
                    "and follow it).",
            .flag = "--cluster-mode", .value_name = "MODE", .allowed = cluster_modes}),
        field<&settings::cluster_node_id>({.section = "cluster", .key = "node_id",
            .help = "This node's name in the cluster, unique among the nodes: 1-64 characters of A-Z a-z "
                    "0-9 _ . -. Empty: the machine's host name.",
            .flag = "--node-id", .value_name = "ID", .check = &check_node_id}),
        field<&settings::cluster_name_ttl_ms>({.section = "cluster", .key = "name_ttl_ms",
            .unit = "milliseconds",
            .help = "Lease on each logged-in user name in Redis. The node holding the name renews it every "
                    "third of this; when a node dies, its users' names become free after at most this long.",
            .min = 1000, .max = hour_ms}),
        field<&settings::cluster_history_messages>({.section = "cluster", .key = "history_messages",
            .unit = "messages",
            .help = "Messages each room's Redis stream keeps (trimmed approximately, in whole blocks), and "
                    "each direct conversation's in token mode. In a cluster this is the shared history that "
                    "`joined`, `history` and `dm_history` read on every node, in place of history.store.",
            .min = 100, .max = 100'000'000}),
    });
}

// [[webhooks]]
void add_webhook_options(std::vector<option>& out) {
    out.push_back(field<&settings::webhooks>({.section = "webhooks", .key = "",
        .help = "Receivers of chat events over HTTP, each a [[webhooks]] table at the top level of the file "
                "(docs/webhooks.md). Its keys: url, http:// or https://, where batches of events are POSTed; "
                "events, a list of the words user_connected, user_disconnected, room_occupied, room_vacated, "
                "member_joined, member_left, message, message_edited, message_deleted, dm and moderation, or "
                "[\"*\"] for all; secret, at least 16 bytes, which signs each POST with the header "
                "X-Parley-Signature: t=TIME,v1=SIGNATURE, TIME the Unix time in seconds and SIGNATURE the hex "
                "HMAC-SHA256, keyed with the secret, of TIME, \".\" and the body; optionally timeout_ms for one "
                "POST (default 5000, 100 to 60000), queue_events, the events waiting for the receiver before "
                "more are dropped (default 10000, 1 to 1000000), and ca_file, a PEM file of the roots trusted "
                "for an https url (default: the system's). Two tables may not share a url. None: no event "
                "leaves the daemon.",
        // The whole list is secret-aware: a url may carry a token of the receiver in its path too,
        // so a reload only says that the list changed.
        .reloadable = true, .secret = true}));
}

const std::vector<option>& table() {
    static const std::vector<option> options_table = [] {
        std::vector<option> out;
        add_server_options(out);
        add_limits_options(out);
        add_rooms_options(out);
        add_history_and_auth_options(out);
        add_admin_log_metrics_cluster_options(out);
        add_webhook_options(out);
        return out;
    }();
    return options_table;
}

constexpr std::array<std::string_view, 11> section_names = {
    "server", "tls", "limits", "rooms", "history", "auth", "admin", "log", "metrics", "cluster", "webhooks",
};

}  // namespace

std::string option::name() const {
    // A root-level array of tables has no key of its own: [[webhooks]] is "webhooks".
    return key.empty() ? std::string(section) : std::string(section) + "." + std::string(key);
}

std::span<const option> options() { return table(); }

std::span<const std::string_view> sections() { return section_names; }

const option* find_option(std::string_view section, std::string_view key) {
    for (const auto& o : table()) {
        if (o.section == section && o.key == key) {
            return &o;
        }
    }
    return nullptr;
}

const option* find_option(std::string_view dotted_name) {
    auto dot = dotted_name.find('.');
    if (dot == std::string_view::npos) {
        return find_option(dotted_name, "");
    }
    return find_option(dotted_name.substr(0, dot), dotted_name.substr(dot + 1));
}

const option* find_flag(std::string_view flag) {
    if (flag.empty()) {
        return nullptr;
    }
    for (const auto& o : table()) {
        if (o.flag == flag) {
            return &o;
        }
    }
    return nullptr;
}

}  // namespace parley::config
