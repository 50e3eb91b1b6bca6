#include "config/settings.hpp"

#include "config/option_checks.hpp"
#include "config/options.hpp"

#include <algorithm>

namespace parley::config {
namespace {

// The loader checks this per key; settings built in code (tests, embedders) get the same rule.
// (auth.mode, history.store and log.format are enumerations: they cannot hold another value.)
void check_allowed(std::string_view name, const std::string& value, std::vector<std::string>& out) {
    settings scratch;
    if (std::string why = find_option(name)->set(scratch, value); !why.empty()) {
        out.push_back(std::string(name) + " " + why);
    }
}

}  // namespace

std::vector<std::string> problems(const settings& s) {
    std::vector<std::string> out;
    if (s.max_text_bytes > s.max_message_bytes) {
        out.push_back("limits.max_text_bytes (" + std::to_string(s.max_text_bytes) +
                      ") must not exceed limits.max_message_bytes (" + std::to_string(s.max_message_bytes) + ")");
    }
    if (s.ping_interval_ms != 0 && s.idle_timeout_ms != 0 && s.ping_interval_ms >= s.idle_timeout_ms) {
        out.push_back("limits.ping_interval_ms (" + std::to_string(s.ping_interval_ms) +
                      ") must be less than limits.idle_timeout_ms (" + std::to_string(s.idle_timeout_ms) +
                      "), or a quiet but live client would be closed before it is pinged");
    }
    if (s.shutdown_close_window_ms > s.shutdown_timeout_ms) {
        out.push_back("server.shutdown_close_window_ms (" + std::to_string(s.shutdown_close_window_ms) +
                      ") must not exceed server.shutdown_timeout_ms (" + std::to_string(s.shutdown_timeout_ms) +
                      ")");
    }
    if (s.joined_history > s.history_per_room) {
        out.push_back("rooms.joined_history (" + std::to_string(s.joined_history) +
                      ") must not exceed rooms.history_per_room (" + std::to_string(s.history_per_room) + ")");
    }
    if (s.history_store == history_backend::sqlite && s.history_path.empty()) {
        out.push_back("history.path must name a file when history.store is \"sqlite\"");
    }
    if (s.history_default_limit > s.history_max_limit) {
        out.push_back("rooms.history_default_limit (" + std::to_string(s.history_default_limit) +
                      ") must not exceed rooms.history_max_limit (" + std::to_string(s.history_max_limit) + ")");
    }
    for (std::size_t i = 0; i < s.permanent_rooms.size(); ++i) {
        const std::string& name = s.permanent_rooms[i].name;
        if (std::string why = room_name_problem(name); !why.empty()) {
            out.push_back("rooms.permanent: " + why);
        }
        for (std::size_t j = 0; j < i; ++j) {
            if (s.permanent_rooms[j].name == name) {
                out.push_back("rooms.permanent: room '" + name + "' is declared twice");
            }
        }
    }
    if (s.cluster_redis.size() > 64) {
        out.push_back("cluster.redis lists " + std::to_string(s.cluster_redis.size()) +
                      " servers; at most 64 are supported");
    }
    for (std::size_t i = 0; i < s.cluster_redis.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (s.cluster_redis[j] == s.cluster_redis[i]) {
                // Two shards on one server would hold each other's keys and hear each other's channels.
                out.push_back("cluster.redis lists entry " + std::to_string(j + 1) + " again as entry " +
                              std::to_string(i + 1) + "; each shard must be a server of its own");
            }
        }
    }
    if (s.auth_mode == auth_mode::token && s.auth_token_secret.empty() && s.auth_public_keys.empty() &&
        s.auth_jwks_url.empty()) {
        out.push_back("auth.mode = \"token\" needs auth.token_secret (HS256), or auth.public_keys or "
                      "auth.jwks_url (RS256, ES256), to check tokens with");
    } else if (s.auth_mode == auth_mode::token && !s.auth_token_secret.empty() && s.auth_token_secret.size() < 32) {
        out.push_back("auth.token_secret must be at least 32 bytes when auth.mode is \"token\" (it is " +
                      std::to_string(s.auth_token_secret.size()) + "): a short HS256 key can be guessed");
    }
    if (!s.admin_token.empty() && s.admin_token.size() < 16) {
        out.push_back("admin.token must be at least 16 bytes (it is " + std::to_string(s.admin_token.size()) +
                      "), or empty to turn the admin API off");
    }
    for (const auto& room : s.permanent_rooms) {
        if (room.is_private && s.auth_mode != auth_mode::token) {
            out.push_back("rooms.permanent: room '" + room.name +
                          "' is private, which needs auth.mode = \"token\": without tokens anyone may log in "
                          "with a member's name");
        }
        if ((!room.owners.empty() || !room.moderators.empty()) && s.auth_mode != auth_mode::token) {
            out.push_back("rooms.permanent: room '" + room.name +
                          "' lists owners or moderators, which needs auth.mode = \"token\": without tokens "
                          "anyone may log in with their names");
        }
        if (!room.is_private && !room.members.empty()) {
            out.push_back("rooms.permanent: room '" + room.name +
                          "' lists members but is not private; add private = true or remove the list");
        }
    }
    if (s.tls_cert_file.empty() != s.tls_key_file.empty()) {
        out.push_back(std::string("tls.cert_file and tls.key_file must be set together (") +
                      (s.tls_cert_file.empty() ? "key_file" : "cert_file") +
                      " is set, the other is empty), or both left empty for plain HTTP");
    }
    if (std::any_of(s.allowed_origins.begin(), s.allowed_origins.end(), [](const auto& o) { return o.empty(); })) {
        out.push_back("server.allowed_origins must not contain an empty entry");
    }
    // The loader checks each [[webhooks]] table; settings built in code get the same rules.
    if (std::string why = webhooks_problem(s.webhooks); !why.empty()) {
        out.push_back(why);
    }
    check_allowed("log.level", s.log_level, out);
    check_allowed("cluster.mode", s.cluster_mode, out);
    return out;
}

std::string validate(const settings& s) {
    auto found = problems(s);
    return found.empty() ? std::string() : found.front();
}

}  // namespace parley::config
