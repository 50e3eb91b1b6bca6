#include "server/admin_api.hpp"

#include "protocol/access_token.hpp"
#include "rooms/admin_actions.hpp"
#include "rooms/chat_hub.hpp"
#include "server/admin_moderation.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cctype>
#include <optional>

namespace parley::server {

namespace http = boost::beast::http;
using json = nlohmann::json;

namespace {

admin_reply error_reply(http::status status, std::string message) {
    admin_reply reply;
    reply.status = status;
    reply.body = json{{"error", std::move(message)}}.dump();
    return reply;
}

admin_reply ok_reply(const json& body) {
    admin_reply reply;
    reply.body = body.dump();
    return reply;
}

// The body as a JSON object, or the 400 that says why not.
std::optional<json> parse_object(std::string_view body, admin_reply& failure) {
    json parsed = json::parse(body, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
        failure = error_reply(http::status::bad_request, "the body must be a JSON object");
        return std::nullopt;
    }
    return parsed;
}

// A string field: required ones must be present and non-empty; optional ones default to "".
std::optional<std::string> string_field(const json& body, const char* name, bool required, admin_reply& failure) {
    auto it = body.find(name);
    if (it == body.end() || it->is_null()) {
        if (required) {
            failure = error_reply(http::status::bad_request, std::string("field '") + name + "' is required");
            return std::nullopt;
        }
        return std::string();
    }
    if (!it->is_string() || (required && it->get_ref<const std::string&>().empty())) {
        failure = error_reply(http::status::bad_request, std::string("field '") + name + "' must be a non-empty string");
        return std::nullopt;
    }
    return it->get<std::string>();
}

// The fields of every admin request: one required string (who or what) and one optional
// (the reason or the room, "" when absent).
struct request_fields {
    std::string required;
    std::string optional;
};

std::optional<request_fields> read_fields(const json& body, const char* required, const char* optional,
                                          admin_reply& failure) {
    auto first = string_field(body, required, true, failure);
    auto second = first ? string_field(body, optional, false, failure) : std::nullopt;
    if (!first || !second) {
        return std::nullopt;
    }
    return request_fields{std::move(*first), std::move(*second)};
}

bool authorized(std::string_view authorization, const std::string& token) {
    constexpr std::string_view scheme = "Bearer ";
    if (authorization.size() <= scheme.size()) {
        return false;
    }
    // The scheme is case-insensitive (RFC 9110 section 11.1).
    for (std::size_t i = 0; i < scheme.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(authorization[i])) !=
            std::tolower(static_cast<unsigned char>(scheme[i]))) {
            return false;
        }
    }
    return protocol::secrets_equal(authorization.substr(scheme.size()), token);
}

admin_reply kick(const json& body, rooms::chat_hub& hub) {
    admin_reply failure;
    auto fields = read_fields(body, "user", "reason", failure);
    if (!fields) {
        return failure;
    }
    const auto& [user, reason] = *fields;
    std::size_t connections = rooms::kick_user(hub, user, reason);
    if (connections == 0) {
        return error_reply(http::status::not_found, "no user '" + user + "' is online");
    }
    spdlog::info("admin: kicked {} ({} connections){}{}", user, connections, reason.empty() ? "" : ": ", reason);
    return ok_reply({{"user", user}, {"connections", connections}});
}

admin_reply announce(const json& body, rooms::chat_hub& hub, const config::settings& settings) {
    admin_reply failure;
    auto fields = read_fields(body, "text", "room", failure);
    if (!fields) {
        return failure;
    }
    const auto& [text, room] = *fields;
    if (text.size() > settings.max_text_bytes) {
        return error_reply(http::status::bad_request, "text is " + std::to_string(text.size()) +
                                                          " bytes; the limit is " +
                                                          std::to_string(settings.max_text_bytes));
    }
    if (room.empty()) {
        rooms::announce_to_all(hub, text);
        spdlog::info("admin: announcement to everyone");
        return ok_reply({{"room", nullptr}});
    }
    if (!rooms::announce_to_room(hub, room, text)) {
        return error_reply(http::status::not_found, "no room '" + room + "' exists");
    }
    spdlog::info("admin: announcement to room {}", room);
    return ok_reply({{"room", room}});
}

admin_reply close_room(const json& body, rooms::chat_hub& hub) {
    admin_reply failure;
    auto fields = read_fields(body, "room", "reason", failure);
    if (!fields) {
        return failure;
    }
    const auto& [room, reason] = *fields;
    auto members = rooms::close_room(hub, room, reason);
    if (!members) {
        return error_reply(http::status::not_found, "no room '" + room + "' exists");
    }
    spdlog::info("admin: closed room {} ({} members){}{}", room, *members, reason.empty() ? "" : ": ", reason);
    return ok_reply({{"room", room}, {"members", *members}});
}

}  // namespace

admin_reply handle_admin(http::verb method, std::string_view path, std::string_view authorization,
                         std::string_view body, rooms::chat_hub& hub, const config::settings& settings,
                         bool room_fed) {
    if (settings.admin_token.empty()) {
        return error_reply(http::status::not_found, "not found");
    }
    if (!authorized(authorization, settings.admin_token)) {
        admin_reply reply = error_reply(http::status::unauthorized, "a valid admin bearer token is required");
        reply.challenge = true;
        return reply;
    }
    struct route {
        std::string_view path;
        http::verb method;
    };
    static constexpr route routes[] = {{"/admin/users", http::verb::get},
                                       {"/admin/rooms", http::verb::get},
                                       {"/admin/kick", http::verb::post},
                                       {"/admin/announce", http::verb::post},
                                       {"/admin/close_room", http::verb::post},
                                       {"/admin/moderate", http::verb::post}};
    const route* found = nullptr;
    for (const route& r : routes) {
        if (r.path == path) {
            found = &r;
        }
    }
    if (found == nullptr) {
        return error_reply(http::status::not_found, "no admin endpoint " + std::string(path));
    }
    if (method != found->method) {
        admin_reply reply = error_reply(http::status::method_not_allowed,
                                        "use " + std::string(http::to_string(found->method)));
        reply.allow = http::to_string(found->method);
        return reply;
    }
    if (path == "/admin/users") {
        json users = json::array();
        for (const auto& u : rooms::list_users(hub)) {
            users.push_back({{"name", u.name}, {"connections", u.connections}});
        }
        return ok_reply({{"users", std::move(users)}});
    }
    if (path == "/admin/rooms") {
        json listed = json::array();
        for (const auto& [name, members] : hub.rooms().list()) {
            listed.push_back({{"name", name}, {"members", members}});
        }
        return ok_reply({{"rooms", std::move(listed)}});
    }
    admin_reply failure;
    auto parsed = parse_object(body, failure);
    if (!parsed) {
        return failure;
    }
    if (path == "/admin/kick") {
        return kick(*parsed, hub);
    }
    if (path == "/admin/announce") {
        return announce(*parsed, hub, settings);
    }
    if (path == "/admin/moderate") {
        return moderate_from_admin(*parsed, hub, room_fed);
    }
    return close_room(*parsed, hub);
}

}  // namespace parley::server
