#include "server/admin_moderation.hpp"

#include "protocol/names.hpp"
#include "rooms/admin_actions.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/history/unix_clock.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <limits>
#include <optional>

namespace parley::server {

namespace http = boost::beast::http;
using json = nlohmann::json;
using rooms::moderation_action;

namespace {

// The name the administrator acts under in the room's events: not a valid user name, so no
// user can be taken for it.
constexpr std::string_view admin_actor = "@admin";

admin_reply refuse(http::status status, std::string message) {
    admin_reply reply;
    reply.status = status;
    reply.body = json{{"error", std::move(message)}}.dump();
    return reply;
}

std::optional<moderation_action> action_named(std::string_view name) {
    static constexpr std::pair<std::string_view, moderation_action> actions[] = {
        {"kick", moderation_action::kick},         {"ban", moderation_action::ban},
        {"unban", moderation_action::unban},       {"mute", moderation_action::mute},
        {"unmute", moderation_action::unmute},     {"set_role", moderation_action::set_role},
        {"set_topic", moderation_action::set_topic}, {"set_slow_mode", moderation_action::set_slow_mode}};
    for (const auto& [word, action] : actions) {
        if (word == name) {
            return action;
        }
    }
    return std::nullopt;
}

// The string at key: "" when absent; nullopt (with failure set) when it is not a string.
std::optional<std::string> text_of(const json& body, const char* key, admin_reply& failure) {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) {
        return std::string();
    }
    if (!it->is_string()) {
        failure = refuse(http::status::bad_request, std::string("field '") + key + "' must be a string");
        return std::nullopt;
    }
    return it->get<std::string>();
}

// The whole number at key within [low, high]: nullopt inside `present` when absent.
bool number_of(const json& body, const char* key, std::int64_t low, std::int64_t high,
               std::optional<std::int64_t>& out, admin_reply& failure) {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) {
        return true;
    }
    if (!it->is_number_integer() || it->get<std::int64_t>() < low || it->get<std::int64_t>() > high) {
        failure = refuse(http::status::bad_request, std::string("field '") + key + "' must be a whole number from " +
                                                        std::to_string(low) + " to " + std::to_string(high));
        return false;
    }
    out = it->get<std::int64_t>();
    return true;
}

// One line per action, with what was asked: who, what, where, why and until when.
void audit(const json& body, const std::string& action, const std::string& room,
           std::optional<std::int64_t> until_ms) {
    json line = {{"action", action}, {"room", room}};
    for (const char* key : {"user", "reason", "duration_s", "role", "text", "interval_s", "seq"}) {
        if (auto it = body.find(key); it != body.end() && !it->is_null()) {
            line[key] = *it;
        }
    }
    if (until_ms) {
        line["until"] = *until_ms;
    }
    spdlog::info("admin audit: {}", line.dump());
}

admin_reply done(const std::string& room, const std::string& action) {
    admin_reply reply;
    reply.body = json{{"room", room}, {"action", action}}.dump();
    return reply;
}

admin_reply delete_from_admin(const json& body, const std::string& room, rooms::chat_hub& hub, bool room_fed) {
    admin_reply failure;
    std::optional<std::int64_t> seq;
    if (!number_of(body, "seq", 1, std::numeric_limits<std::int64_t>::max(), seq, failure)) {
        return failure;
    }
    if (!seq) {
        return refuse(http::status::bad_request, "field 'seq' is required for delete");
    }
    using outcome = rooms::room::change_outcome;
    switch (rooms::delete_as_admin(hub, room, *seq, !room_fed)) {
    case outcome::done: break;
    case outcome::not_fed: {
        admin_reply wait;
        wait.wait_for_room = room;
        return wait;
    }
    case outcome::gone: return refuse(http::status::not_found, "no room '" + room + "' exists");
    case outcome::unavailable:
        return refuse(http::status::service_unavailable, "the cluster cannot take it just now; try again");
    default:
        return refuse(http::status::not_found, "no message " + std::to_string(*seq) + " of '" + room +
                                                   "' (among the room's newest, not deleted)");
    }
    audit(body, "delete", room, std::nullopt);
    return done(room, "delete");
}

}  // namespace

admin_reply moderate_from_admin(const json& body, rooms::chat_hub& hub, bool room_fed) {
    admin_reply failure;
    auto room = text_of(body, "room", failure);
    auto action_word = room ? text_of(body, "action", failure) : std::nullopt;
    auto user = action_word ? text_of(body, "user", failure) : std::nullopt;
    auto reason = user ? text_of(body, "reason", failure) : std::nullopt;
    auto role_word = reason ? text_of(body, "role", failure) : std::nullopt;
    auto topic = role_word ? text_of(body, "text", failure) : std::nullopt;
    if (!topic) {
        return failure;
    }
    if (!protocol::valid_room_name(*room)) {
        return refuse(http::status::bad_request, "field 'room': " + std::string(protocol::room_name_rule()));
    }
    if (*action_word == "delete") {
        return delete_from_admin(body, *room, hub, room_fed);
    }
    const std::optional<moderation_action> action = action_named(*action_word);
    if (!action) {
        return refuse(http::status::bad_request,
                      "field 'action' must be kick, ban, unban, mute, unmute, set_role, set_topic, set_slow_mode "
                      "or delete");
    }
    const bool about_user = *action != moderation_action::set_topic && *action != moderation_action::set_slow_mode;
    if (about_user && !protocol::valid_user_name(*user)) {
        return refuse(http::status::bad_request, "field 'user': " + std::string(protocol::user_name_rule()));
    }
    if (reason->size() > rooms::max_reason_bytes) {
        return refuse(http::status::bad_request,
                      "field 'reason' is at most " + std::to_string(rooms::max_reason_bytes) + " bytes");
    }
    if (topic->size() > rooms::max_topic_bytes) {
        return refuse(http::status::bad_request,
                      "field 'text' is at most " + std::to_string(rooms::max_topic_bytes) + " bytes");
    }
    std::optional<std::int64_t> duration_s;
    std::optional<std::int64_t> interval_s;
    if (!number_of(body, "duration_s", 1, rooms::max_sanction_s, duration_s, failure) ||
        !number_of(body, "interval_s", 0, rooms::max_slow_mode_s, interval_s, failure)) {
        return failure;
    }
    rooms::room::moderation_request request;
    request.actor = admin_actor;
    request.action = *action;
    request.target = *user;
    request.reason = *reason;
    request.topic = *topic;
    if (duration_s) {
        request.until_ms = rooms::unix_millis() + *duration_s * 1000;
    }
    if (*action == moderation_action::set_role) {
        std::optional<rooms::room_role> role = rooms::parse_role(*role_word);
        if (!role) {
            return refuse(http::status::bad_request, "field 'role' must be owner, moderator or member");
        }
        request.role = *role;
    }
    if (*action == moderation_action::set_slow_mode) {
        if (!interval_s) {
            return refuse(http::status::bad_request, "field 'interval_s' is required for set_slow_mode");
        }
        request.interval_s = *interval_s;
    }

    using outcome = rooms::room::moderation_outcome;
    switch (rooms::moderate_as_admin(hub, *room, request, !room_fed)) {
    case outcome::done: break;
    case outcome::not_fed: {
        admin_reply wait;
        wait.wait_for_room = *room;
        return wait;
    }
    case outcome::forbidden:
        return refuse(http::status::forbidden,
                      "roles, bans and mutes are about names, which are identities only with auth.mode = \"token\"");
    case outcome::not_a_member: return refuse(http::status::not_found, "'" + *user + "' is not in '" + *room + "'");
    case outcome::unchanged:
        return refuse(http::status::not_found, "'" + *user + "' is not " +
                                                   (*action == moderation_action::unban ? "banned" : "muted") +
                                                   " in '" + *room + "'");
    case outcome::last_owner:
        return refuse(http::status::conflict, "'" + *room + "' would be left without an owner");
    case outcome::too_many:
        return refuse(http::status::conflict, "'" + *room + "' holds too many bans, mutes and roles");
    case outcome::gone: return refuse(http::status::service_unavailable, "the room closed meanwhile; try again");
    case outcome::unavailable:
        return refuse(http::status::service_unavailable, "the cluster cannot take it just now; try again");
    }
    audit(body, *action_word, *room, request.until_ms);
    return done(*room, *action_word);
}

}  // namespace parley::server
