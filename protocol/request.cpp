#include "protocol/request.hpp"

#include "protocol/json_reader.hpp"
#include "protocol/json_text.hpp"

#include <array>
#include <charconv>
#include <limits>

namespace parley::protocol {
namespace {

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

// Turns the result into an error, keeping the request's id to echo when it was read.
void fail(parse_result_request& result, error_code code, std::string message, bool with_id) {
    if (with_id) {
        result.id = std::move(result.value->id);
    }
    result.value.reset();
    result.error = code;
    result.message = std::move(message);
}

// The members a request can use; the reader keeps the last value of each and skips the rest.
enum field : std::size_t { type_field, id_field, user_field, token_field, room_field, to_field, text_field,
                           after_field, before_field, epoch_field, limit_field, with_field, seq_field,
                           reason_field, role_field, duration_field, interval_field, field_count };

constexpr std::array<std::string_view, field_count> field_names{
    "type", "id", "user", "token", "room", "to", "text", "after", "before", "epoch", "limit", "with", "seq",
    "reason", "role", "duration_s", "interval_s",
};

using fields = std::array<std::optional<json_value>, field_count>;

std::string field_error(field f, std::string_view rule) {
    std::string error = "field '";
    error.append(field_names[f]).append("' ").append(rule);
    return error;
}

bool is_absent(const std::optional<json_value>& value) { return !value || value->kind == json_kind::null; }

// Reads a required string field; returns false (with the error in out) when absent or not a string.
bool take_string(const fields& object, field f, std::string& value, std::string& error) {
    const auto& member = object[f];
    if (!member || member->kind != json_kind::string) {
        error = field_error(f, "must be a string");
        return false;
    }
    assign_string(value, *member);
    return true;
}

bool take_optional_string(const fields& object, field f, std::string& value, std::string& error) {
    if (is_absent(object[f])) {
        return true;
    }
    return take_string(object, f, value, error);
}

// Optional non-negative integer field.
bool take_optional_count(const fields& object, field f, std::optional<std::int64_t>& value, std::string& error) {
    const auto& member = object[f];
    if (is_absent(member)) {
        return true;
    }
    if (member->kind == json_kind::unsigned_integer) {
        if (member->unsigned_integer <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            value = static_cast<std::int64_t>(member->unsigned_integer);
            return true;
        }
    } else if (member->kind == json_kind::integer && member->integer >= 0) {
        value = member->integer;  // only "-0" gets here
        return true;
    }
    error = field_error(f, "must be a non-negative integer");
    return false;
}

// Required non-negative integer field.
bool take_count(const fields& object, field f, std::optional<std::int64_t>& value, std::string& error) {
    if (is_absent(object[f])) {
        error = field_error(f, "must be a non-negative integer");
        return false;
    }
    return take_optional_count(object, f, value, error);
}

template <typename Integer>
std::string decimal(Integer value) {
    std::array<char, 24> buffer;
    auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    (void)ec;
    return std::string(buffer.data(), end);
}

// The id echo: a string of at most 64 characters or an integer of at most 18 digits, as JSON text
// the way nlohmann::json's dump() writes it (the id used to be echoed with that).
bool take_id(const fields& object, std::string& id, std::string& error) {
    const auto& member = object[id_field];
    if (!member) {
        return true;
    }
    constexpr std::int64_t max_id = 999'999'999'999'999'999;
    switch (member->kind) {
    case json_kind::string: {
        std::string unescaped;
        std::string_view value = string_of(*member, unescaped);
        if (value.size() <= 64) {
            id.clear();
            append_json_string(id, value);
            return true;
        }
        break;
    }
    case json_kind::unsigned_integer:
        if (member->unsigned_integer <= static_cast<std::uint64_t>(max_id)) {
            id = decimal(member->unsigned_integer);
            return true;
        }
        break;
    case json_kind::integer:
        if (member->integer >= -max_id && member->integer <= max_id) {
            id = decimal(member->integer);
            return true;
        }
        break;
    default:
        break;
    }
    error = "field 'id' must be a string of at most 64 characters or an integer of at most 18 digits";
    return false;
}

}  // namespace

parse_result_request parse_request(std::string_view text) {
    // The request is filled where it is returned: it is six strings, too much to build and move.
    parse_result_request result;
    parse_request(text, result);
    return result;
}

namespace {
// Empties a request for reuse, keeping what its strings have allocated.
request& reset(request& req) {
    req.type = request_type::users;
    for (std::string* s : {&req.id, &req.user, &req.token, &req.room, &req.to, &req.with, &req.text, &req.reason,
                           &req.role, &req.after_name}) {
        s->clear();
    }
    req.after.reset();
    req.before.reset();
    req.epoch.reset();
    req.limit.reset();
    req.seq.reset();
    req.duration_s.reset();
    req.interval_s.reset();
    return req;
}
}  // namespace

void parse_request(std::string_view text, parse_result_request& result) {
    result.error = error_code::bad_request;
    result.message.clear();
    result.id.clear();
    request& req = result.value ? reset(*result.value) : result.value.emplace();
    fields object;
    if (!read_json_object(text, field_names, object)) {
        fail(result, error_code::bad_json, "the message is not a JSON object", false);
        return;
    }
    std::string error;
    if (!take_id(object, req.id, error)) {
        fail(result, error_code::bad_request, std::move(error), false);
        return;
    }
    const auto& type_member = object[type_field];
    if (!type_member || type_member->kind != json_kind::string) {
        fail(result, error_code::bad_request, "field 'type' must be a string", true);
        return;
    }
    std::string unescaped_type;
    std::string_view type_name = string_of(*type_member, unescaped_type);
    bool known = false;
    for (const auto& [name, type] : type_names) {
        if (name == type_name) {
            req.type = type;
            known = true;
            break;
        }
    }
    if (!known) {
        std::string message = "unknown message type '";
        message.append(prefix_of(type_name, 32)).append("'");
        fail(result, error_code::unknown_type, std::move(message), true);
        return;
    }

    bool ok = true;
    switch (req.type) {
    case request_type::login:
        ok = take_string(object, user_field, req.user, error) &&
             take_optional_string(object, token_field, req.token, error);
        break;
    case request_type::join:
        ok = take_string(object, room_field, req.room, error) &&
             take_optional_count(object, after_field, req.after, error) &&
             take_optional_count(object, epoch_field, req.epoch, error);
        break;
    case request_type::leave:
    case request_type::typing:
        ok = take_string(object, room_field, req.room, error);
        break;
    case request_type::say:
        ok = take_string(object, room_field, req.room, error) && take_string(object, text_field, req.text, error);
        break;
    case request_type::dm:
        ok = take_string(object, to_field, req.to, error) && take_string(object, text_field, req.text, error);
        break;
    case request_type::history:
    case request_type::dm_history:
        ok = take_string(object, req.type == request_type::history ? room_field : with_field,
                         req.type == request_type::history ? req.room : req.with, error) &&
             take_optional_count(object, before_field, req.before, error) &&
             take_optional_count(object, after_field, req.after, error) &&
             take_optional_count(object, limit_field, req.limit, error);
        if (ok && req.before && req.after) {
            ok = false;
            error = "give 'before' or 'after', not both";
        }
        break;
    case request_type::read:
        // A marker is for one room or one direct conversation, and names the seq read up to.
        ok = take_optional_string(object, room_field, req.room, error) &&
             take_optional_string(object, with_field, req.with, error);
        if (ok && req.room.empty() == req.with.empty()) {
            ok = false;
            error = "give 'room' or 'with', exactly one";
        }
        ok = ok && take_count(object, seq_field, req.seq, error);
        break;
    case request_type::kick:
        ok = take_string(object, room_field, req.room, error) && take_string(object, user_field, req.user, error) &&
             take_optional_string(object, reason_field, req.reason, error);
        break;
    case request_type::ban:
    case request_type::mute:
        ok = take_string(object, room_field, req.room, error) && take_string(object, user_field, req.user, error) &&
             take_optional_string(object, reason_field, req.reason, error) &&
             take_optional_count(object, duration_field, req.duration_s, error);
        break;
    case request_type::unban:
    case request_type::unmute:
        ok = take_string(object, room_field, req.room, error) && take_string(object, user_field, req.user, error);
        break;
    case request_type::set_role:
        ok = take_string(object, room_field, req.room, error) && take_string(object, user_field, req.user, error) &&
             take_string(object, role_field, req.role, error);
        break;
    case request_type::set_topic:
        ok = take_string(object, room_field, req.room, error) && take_string(object, text_field, req.text, error);
        break;
    case request_type::set_slow_mode:
        ok = take_string(object, room_field, req.room, error) &&
             take_count(object, interval_field, req.interval_s, error);
        break;
    case request_type::edit:
        ok = take_string(object, room_field, req.room, error) && take_count(object, seq_field, req.seq, error) &&
             take_string(object, text_field, req.text, error);
        break;
    case request_type::delete_message:
        ok = take_string(object, room_field, req.room, error) && take_count(object, seq_field, req.seq, error);
        break;
    case request_type::members:
        // `after` is a name here (the last one of the page before), not a seq.
        ok = take_string(object, room_field, req.room, error) &&
             take_optional_string(object, after_field, req.after_name, error) &&
             take_optional_count(object, limit_field, req.limit, error);
        break;
    case request_type::users:
    case request_type::rooms:
        break;
    }
    if (!ok) {
        fail(result, error_code::bad_request, std::move(error), true);
    }
}

}  // namespace parley::protocol
