// The pre-rewrite parse_request, unchanged apart from its name and namespace (see the header),
// plus the requests added since (dm_history, read, moderation, edit and delete, members), written the
// same way.

#include "tests/unit/protocol/request_reference.hpp"

#include <nlohmann/json.hpp>

#include <array>

namespace parley::protocol::reference {
namespace {

using json = nlohmann::json;

constexpr std::array<std::pair<std::string_view, request_type>, 22> type_names{{
    {"login", request_type::login},
    {"join", request_type::join},
    {"leave", request_type::leave},
    {"say", request_type::say},
    {"dm", request_type::dm},
    {"users", request_type::users},
    {"rooms", request_type::rooms},
    {"history", request_type::history},
    {"typing", request_type::typing},
    {"dm_history", request_type::dm_history},
    {"read", request_type::read},
    {"kick", request_type::kick},
    {"ban", request_type::ban},
    {"unban", request_type::unban},
    {"mute", request_type::mute},
    {"unmute", request_type::unmute},
    {"set_role", request_type::set_role},
    {"set_topic", request_type::set_topic},
    {"set_slow_mode", request_type::set_slow_mode},
    {"edit", request_type::edit},
    {"delete", request_type::delete_message},
    {"members", request_type::members},
}};

// At most max bytes of text, cut at a character boundary: the result is sent back inside JSON
// text, and half a UTF-8 sequence there would make the whole frame invalid.
std::string prefix_of(std::string_view text, std::size_t max) {
    if (text.size() <= max) {
        return std::string(text);
    }
    while (max > 0 && (static_cast<unsigned char>(text[max]) & 0xC0) == 0x80) {
        --max;
    }
    return std::string(text.substr(0, max));
}

parse_result_request failure(error_code code, std::string message, std::string id = {}) {
    parse_result_request r;
    r.error = code;
    r.message = std::move(message);
    r.id = std::move(id);
    return r;
}

// Reads a required string field; returns false (with the error in out) when absent or not a string.
bool take_string(const json& object, const char* field, std::string& value, std::string& error) {
    auto it = object.find(field);
    if (it == object.end() || !it->is_string()) {
        error = std::string("field '") + field + "' must be a string";
        return false;
    }
    value = it->get_ref<const std::string&>();
    return true;
}

bool take_optional_string(const json& object, const char* field, std::string& value, std::string& error) {
    auto it = object.find(field);
    if (it == object.end() || it->is_null()) {
        return true;
    }
    return take_string(object, field, value, error);
}

// Optional non-negative integer field.
bool take_optional_count(const json& object, const char* field, std::optional<std::int64_t>& value,
                         std::string& error) {
    auto it = object.find(field);
    if (it == object.end() || it->is_null()) {
        return true;
    }
    if (it->is_number_unsigned()) {
        auto v = it->get<std::uint64_t>();
        if (v <= static_cast<std::uint64_t>(INT64_MAX)) {
            value = static_cast<std::int64_t>(v);
            return true;
        }
    } else if (it->is_number_integer() && it->get<std::int64_t>() >= 0) {
        value = it->get<std::int64_t>();
        return true;
    }
    error = std::string("field '") + field + "' must be a non-negative integer";
    return false;
}

// Required non-negative integer field.
bool take_count(const json& object, const char* field, std::optional<std::int64_t>& value, std::string& error) {
    auto it = object.find(field);
    if (it == object.end() || it->is_null()) {
        error = std::string("field '") + field + "' must be a non-negative integer";
        return false;
    }
    return take_optional_count(object, field, value, error);
}

// The id echo: a string of at most 64 characters or an integer of at most 18 digits.
bool take_id(const json& object, std::string& id, std::string& error) {
    auto it = object.find("id");
    if (it == object.end()) {
        return true;
    }
    constexpr std::int64_t max_id = 999'999'999'999'999'999;
    if (it->is_string()) {
        if (it->get_ref<const std::string&>().size() <= 64) {
            id = it->dump();
            return true;
        }
    } else if (it->is_number_unsigned()) {
        if (it->get<std::uint64_t>() <= static_cast<std::uint64_t>(max_id)) {
            id = it->dump();
            return true;
        }
    } else if (it->is_number_integer()) {
        auto v = it->get<std::int64_t>();
        if (v >= -max_id && v <= max_id) {
            id = it->dump();
            return true;
        }
    }
    error = "field 'id' must be a string of at most 64 characters or an integer of at most 18 digits";
    return false;
}

}  // namespace

parse_result_request parse_request_reference(std::string_view text) {
    json object = json::parse(text, nullptr, false);
    if (object.is_discarded() || !object.is_object()) {
        return failure(error_code::bad_json, "the message is not a JSON object");
    }
    std::string error;
    request req;
    if (!take_id(object, req.id, error)) {
        return failure(error_code::bad_request, error);
    }
    auto type_it = object.find("type");
    if (type_it == object.end() || !type_it->is_string()) {
        return failure(error_code::bad_request, "field 'type' must be a string", req.id);
    }
    const auto& type_name = type_it->get_ref<const std::string&>();
    bool known = false;
    for (const auto& [name, type] : type_names) {
        if (name == type_name) {
            req.type = type;
            known = true;
            break;
        }
    }
    if (!known) {
        return failure(error_code::unknown_type, "unknown message type '" + prefix_of(type_name, 32) + "'",
                       req.id);
    }

    bool ok = true;
    switch (req.type) {
    case request_type::login:
        ok = take_string(object, "user", req.user, error) &&
             take_optional_string(object, "token", req.token, error);
        break;
    case request_type::join:
        ok = take_string(object, "room", req.room, error) &&
             take_optional_count(object, "after", req.after, error) &&
             take_optional_count(object, "epoch", req.epoch, error);
        break;
    case request_type::leave:
    case request_type::typing:
        ok = take_string(object, "room", req.room, error);
        break;
    case request_type::say:
        ok = take_string(object, "room", req.room, error) && take_string(object, "text", req.text, error);
        break;
    case request_type::dm:
        ok = take_string(object, "to", req.to, error) && take_string(object, "text", req.text, error);
        break;
    case request_type::history:
        ok = take_string(object, "room", req.room, error) &&
             take_optional_count(object, "before", req.before, error) &&
             take_optional_count(object, "after", req.after, error) &&
             take_optional_count(object, "limit", req.limit, error);
        if (ok && req.before && req.after) {
            ok = false;
            error = "give 'before' or 'after', not both";
        }
        break;
    case request_type::dm_history:
        ok = take_string(object, "with", req.with, error) &&
             take_optional_count(object, "before", req.before, error) &&
             take_optional_count(object, "after", req.after, error) &&
             take_optional_count(object, "limit", req.limit, error);
        if (ok && req.before && req.after) {
            ok = false;
            error = "give 'before' or 'after', not both";
        }
        break;
    case request_type::read: {
        ok = take_optional_string(object, "room", req.room, error) &&
             take_optional_string(object, "with", req.with, error);
        if (ok && req.room.empty() == req.with.empty()) {
            ok = false;
            error = "give 'room' or 'with', exactly one";
        }
        ok = ok && take_count(object, "seq", req.seq, error);
        break;
    }
    case request_type::kick:
        ok = take_string(object, "room", req.room, error) && take_string(object, "user", req.user, error) &&
             take_optional_string(object, "reason", req.reason, error);
        break;
    case request_type::ban:
    case request_type::mute:
        ok = take_string(object, "room", req.room, error) && take_string(object, "user", req.user, error) &&
             take_optional_string(object, "reason", req.reason, error) &&
             take_optional_count(object, "duration_s", req.duration_s, error);
        break;
    case request_type::unban:
    case request_type::unmute:
        ok = take_string(object, "room", req.room, error) && take_string(object, "user", req.user, error);
        break;
    case request_type::set_role:
        ok = take_string(object, "room", req.room, error) && take_string(object, "user", req.user, error) &&
             take_string(object, "role", req.role, error);
        break;
    case request_type::set_topic:
        ok = take_string(object, "room", req.room, error) && take_string(object, "text", req.text, error);
        break;
    case request_type::set_slow_mode:
        ok = take_string(object, "room", req.room, error) && take_count(object, "interval_s", req.interval_s, error);
        break;
    case request_type::edit:
        ok = take_string(object, "room", req.room, error) && take_count(object, "seq", req.seq, error) &&
             take_string(object, "text", req.text, error);
        break;
    case request_type::delete_message:
        ok = take_string(object, "room", req.room, error) && take_count(object, "seq", req.seq, error);
        break;
    case request_type::members:
        ok = take_string(object, "room", req.room, error) &&
             take_optional_string(object, "after", req.after_name, error) &&
             take_optional_count(object, "limit", req.limit, error);
        break;
    case request_type::users:
    case request_type::rooms:
        break;
    }
    if (!ok) {
        return failure(error_code::bad_request, error, req.id);
    }
    parse_result_request r;
    r.value = std::move(req);
    return r;
}

}  // namespace parley::protocol::reference
