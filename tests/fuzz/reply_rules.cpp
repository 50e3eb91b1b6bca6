#include "tests/fuzz/reply_rules.hpp"

#include "protocol/names.hpp"
#include "protocol/request.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <algorithm>
#include <string>

namespace parley::fuzz {
namespace {

using json = nlohmann::json;
using protocol::request;
using protocol::request_type;

std::string_view type_of(const json& reply) { return reply["type"].get_ref<const std::string&>(); }

std::string field(const json& reply, const char* name) {
    require(reply.contains(name) && reply[name].is_string(), "reply without a string field", name);
    return reply[name].get<std::string>();
}

// The request's own answer; empty for typing and for a say without an id.
std::string_view answer_type(const request& q) {
    switch (q.type) {
    case request_type::login: return "welcome";
    case request_type::join: return "joined";
    case request_type::leave: return "left";
    case request_type::say: return q.id.empty() ? "" : "ack";
    case request_type::dm: return "dm";
    case request_type::users: return "users";
    case request_type::rooms: return "rooms";
    case request_type::history: return "history";
    case request_type::typing: return "";
    case request_type::dm_history: return "dm_history";
    case request_type::read: return "read";
    case request_type::kick:
    case request_type::ban:
    case request_type::unban:
    case request_type::mute:
    case request_type::unmute:
    case request_type::set_role:
    case request_type::set_topic:
    case request_type::set_slow_mode:
    case request_type::edit:
    case request_type::delete_message: return q.id.empty() ? "" : "ack";
    case request_type::members: return "members";
    }
    return "";
}

// What may come along with a successful answer.
bool may_come_along(const request& q, std::string_view type) {
    return (q.type == request_type::login && type == "system") ||
           (q.type == request_type::say && type == "message") ||
           (q.type == request_type::dm && type == "ack" && !q.id.empty()) ||
           (type == "moderation" && q.type >= request_type::kick && q.type <= request_type::set_slow_mode) ||
           (type == "edited" && q.type == request_type::edit) ||
           (type == "deleted" && q.type == request_type::delete_message);
}

void check_re(const json& reply, std::string_view id) {
    if (id.empty()) {
        require(!reply.contains("re"), "a reply carries re for a request without an id", reply.dump());
        return;
    }
    require(reply.contains("re") && reply["re"] == json::parse(id), "a reply does not carry the request's id",
            reply.dump());
}

// Seqs of a list of message objects of one room: strictly ascending.
std::vector<std::int64_t> message_seqs(const json& list, std::string_view room) {
    require(list.is_array(), "a message list that is not an array", list.dump());
    std::vector<std::int64_t> seqs;
    for (const json& m : list) {
        // Messages, and the moderation, edit and delete events that share their sequence.
        const std::string type = m.is_object() ? m.value("type", "") : "";
        require((type == "message" || type == "moderation" || type == "edited" || type == "deleted") &&
                    field(m, "room") == room &&
                    m.contains("seq") && m["seq"].is_number_integer(),
                "a listed message of another room or without seq", m.dump());
        seqs.push_back(m["seq"].get<std::int64_t>());
        require(seqs.size() == 1 || seqs[seqs.size() - 2] < seqs.back(), "listed messages out of seq order",
                list.dump());
    }
    return seqs;
}

bool strictly_ascending(const std::vector<std::string>& names) {
    return std::adjacent_find(names.begin(), names.end(), std::greater_equal<>()) == names.end();
}

void check_answer(const request& q, std::string_view user, const json& a, const config::settings& s) {
    const std::string_view type = type_of(a);
    if (type == "welcome") {
        require(field(a, "user") == q.user && q.user == user, "welcome for another name", a.dump());
        require(protocol::valid_user_name(q.user), "welcome for an invalid name", q.user);
    } else if (type == "joined") {
        require(field(a, "room") == q.room && protocol::valid_room_name(q.room), "joined another room", a.dump());
        const auto members = a["members"].get<std::vector<std::string>>();
        require(std::find(members.begin(), members.end(), user) != members.end(), "joined without oneself",
                a.dump());
        const auto seqs = message_seqs(a["history"], q.room);
        require(seqs.size() <= std::max(s.joined_history, s.history_per_room), "joined with too much history",
                a.dump());
        require(a.contains("recovered") == q.after.has_value(), "recovered without after, or after without it",
                a.dump());
        if (q.after && (!q.epoch || *q.epoch == a["epoch"].get<std::int64_t>())) {
            require(seqs.empty() || seqs.front() > *q.after, "joined history not after `after`", a.dump());
        }
    } else if (type == "left") {
        require(field(a, "room") == q.room, "left another room", a.dump());
    } else if (type == "ack") {
        require(field(a, "room") == q.room && a["seq"].get<std::int64_t>() >= 1, "say ack of another room",
                a.dump());
        require(!q.text.empty() && q.text.size() <= s.max_text_bytes, "a say outside the text limits was taken",
                a.dump());
    } else if (type == "dm") {
        require(field(a, "from") == user && field(a, "to") == q.to && field(a, "text") == q.text,
                "dm echo differs from the request", a.dump());
        require(!q.text.empty() && q.text.size() <= s.max_text_bytes, "a dm outside the text limits was sent",
                a.dump());
    } else if (type == "users") {
        const auto names = a["users"].get<std::vector<std::string>>();
        require(strictly_ascending(names), "users not sorted or repeated", a.dump());
        require(std::find(names.begin(), names.end(), user) != names.end(), "users without oneself", a.dump());
    } else if (type == "rooms") {
        std::vector<std::string> names;
        for (const json& r : a["rooms"]) {
            names.push_back(field(r, "name"));
        }
        require(strictly_ascending(names), "rooms not sorted or repeated", a.dump());
    } else if (type == "dm_history") {
        require(field(a, "with") == q.with && protocol::valid_user_name(q.with), "dm_history of another user",
                a.dump());
        const json& list = a["messages"];
        require(list.is_array(), "dm_history messages that are not an array", a.dump());
        const auto limit = q.limit ? static_cast<std::size_t>(*q.limit) : s.history_default_limit;
        require(list.size() <= limit, "dm_history over its limit", a.dump());
        for (const json& m : list) {
            const std::string from = field(m, "from");
            const std::string to = field(m, "to");
            require(m.value("type", "") == "dm" && ((from == user && to == q.with) || (from == q.with && to == user)),
                    "dm_history shows a message of another conversation", m.dump());
        }
    } else if (type == "read") {
        require(q.room.empty() ? field(a, "with") == q.with : field(a, "room") == q.room, "read of another target",
                a.dump());
        require(a["seq"].is_number_integer() && a["seq"].get<std::int64_t>() >= 0, "read with a bad seq", a.dump());
    } else if (type == "history") {
        require(field(a, "room") == q.room, "history of another room", a.dump());
        const auto seqs = message_seqs(a["messages"], q.room);
        const auto limit = q.limit ? static_cast<std::size_t>(*q.limit) : s.history_default_limit;
        require(seqs.size() <= limit, "history over its limit", a.dump());
        require(!q.before || seqs.empty() || seqs.back() < *q.before, "history not before `before`", a.dump());
        require(!q.after || seqs.empty() || seqs.front() > *q.after, "history not after `after`", a.dump());
    }
}

}  // namespace

void check_replies(std::string_view text, std::string_view user, const std::vector<json>& replies,
                   const config::settings& settings) {
    const protocol::parse_result_request parsed = protocol::parse_request(text);
    std::size_t errors = 0;
    for (const json& reply : replies) {
        errors += type_of(reply) == "error" ? 1 : 0;
    }
    if (!parsed.value) {
        require(replies.size() == 1 && errors == 1, "a request that does not parse got other than one error");
        require(field(replies[0], "code") == protocol::wire_name(parsed.error), "the error is not the parser's",
                replies[0].dump());
        check_re(replies[0], parsed.id);
        return;
    }
    const request& q = *parsed.value;
    if (errors > 0) {
        require(replies.size() == 1, "an error came with other replies");
        check_re(replies[0], q.id);
        return;
    }
    const std::string_view answer = answer_type(q);
    std::size_t answers = 0;
    std::size_t dm_acks = 0;
    for (const json& reply : replies) {
        const std::string_view type = type_of(reply);
        if (type == answer && answers == 0) {
            ++answers;
            // The dm's echo is the very frame the recipient gets, so the id rides on the ack.
            check_re(reply, q.type == request_type::dm ? std::string_view{} : std::string_view{q.id});
            check_answer(q, user, reply, settings);
            continue;
        }
        require(may_come_along(q, type), "an unexpected reply", reply.dump());
        if (type == "ack") {
            ++dm_acks;
            check_re(reply, q.id);
        } else {
            require(!reply.contains("re"), "re on a reply that is not an answer", reply.dump());
        }
        if (type == "message") {
            require(field(reply, "room") == q.room && field(reply, "from") == user && field(reply, "text") == q.text,
                    "the sender's copy differs from its say", reply.dump());
        }
    }
    require(answers == (answer.empty() ? 0u : 1u), "a request without its answer");
    require(dm_acks == (q.type == request_type::dm && !q.id.empty() ? 1u : 0u), "a dm with an id without one ack");
}

}  // namespace parley::fuzz
