#include "rooms/cluster/cluster_event.hpp"

namespace parley::cluster {
namespace {

// Cuts the next line off text; false when there is no newline left.
bool next_line(std::string_view& text, std::string_view& line) {
    auto end = text.find('\n');
    if (end == std::string_view::npos) {
        return false;
    }
    line = text.substr(0, end);
    text.remove_prefix(end + 1);
    return true;
}

bool known_type(char c) {
    switch (static_cast<event_type>(c)) {
    case event_type::message:
    case event_type::join:
    case event_type::leave:
    case event_type::leave_disconnected:
    case event_type::typing:
    case event_type::system:
    case event_type::login:
    case event_type::logout:
    case event_type::dm:
    case event_type::node_gone:
    case event_type::node_state:
    case event_type::marker:
    case event_type::stored_dm:
        return true;
    }
    return false;
}

}  // namespace

std::optional<cluster_event> parse_event(std::string_view payload, std::int64_t batch_seq) {
    cluster_event e;
    std::string_view type;
    if (!next_line(payload, type) || type.size() != 1 || !known_type(type[0]) || !next_line(payload, e.origin) ||
        !next_line(payload, e.room) || !next_line(payload, e.user)) {
        return std::nullopt;
    }
    e.type = static_cast<event_type>(type[0]);
    if (e.origin.empty()) {
        return std::nullopt;
    }
    if (e.type == event_type::stored_dm) {
        if (!next_line(payload, e.sender) || e.room.empty() || e.user.empty()) {
            return std::nullopt;
        }
        e.body = payload;
        return e;
    }
    const bool membership =
        e.type == event_type::join || e.type == event_type::leave || e.type == event_type::leave_disconnected;
    if (membership && !payload.empty() && payload[0] >= '0' && payload[0] <= '9') {
        // From a room's channel (scripts::presence): the membership version, then the JSON
        // (JSON text never starts with a digit here: it is an object).
        std::string_view version;
        if (!next_line(payload, version) || !parse_number(version, e.version) || e.version <= 0 || e.room.empty()) {
            return std::nullopt;
        }
    }
    if (e.type != event_type::message) {
        e.body = payload;
        return e;
    }
    std::string_view seq;
    std::string_view ts;
    if (!next_line(payload, seq) || !next_line(payload, ts) || !next_line(payload, e.ack) ||
        !parse_number(ts, e.ts) || e.room.empty()) {
        return std::nullopt;
    }
    if (batch_seq > 0) {
        // From a batch of says: the line holds where the seq's digits go into the JSON.
        std::size_t at = 0;
        if (!parse_number(seq, at) || at > payload.size()) {
            return std::nullopt;
        }
        e.seq = batch_seq;
        e.seq_at = at;
    } else if (!parse_number(seq, e.seq) || e.seq <= 0) {
        return std::nullopt;
    }
    e.body = payload;
    return e;
}

std::string format_event(event_type type, std::string_view origin, std::string_view room, std::string_view user,
                         std::string_view body) {
    std::string out;
    out.reserve(8 + origin.size() + room.size() + user.size() + body.size());
    out.push_back(static_cast<char>(type));
    out.push_back('\n');
    out.append(origin).push_back('\n');
    out.append(room).push_back('\n');
    out.append(user).push_back('\n');
    out.append(body);
    return out;
}

std::string message_event_head(std::string_view origin, std::string_view room, std::string_view from) {
    return format_event(event_type::message, origin, room, from, {});
}

std::string format_ack_ticket(registry::session_handle sender, std::string_view re) {
    std::string out = std::to_string(sender.worker);
    out.push_back('.');
    out.append(std::to_string(sender.session)).push_back('.');
    out.append(re);
    return out;
}

std::optional<ack_ticket> parse_ack_ticket(std::string_view text) {
    auto first = text.find('.');
    auto second = first == std::string_view::npos ? first : text.find('.', first + 1);
    if (second == std::string_view::npos) {
        return std::nullopt;
    }
    ack_ticket t;
    if (!parse_number(text.substr(0, first), t.sender.worker) ||
        !parse_number(text.substr(first + 1, second - first - 1), t.sender.session)) {
        return std::nullopt;
    }
    t.re = text.substr(second + 1);
    if (t.re.empty()) {
        return std::nullopt;
    }
    return t;
}

std::string format_session(registry::session_handle session) {
    std::string out = std::to_string(session.worker);
    out.push_back('.');
    out.append(std::to_string(session.session));
    return out;
}

std::optional<registry::session_handle> parse_session(std::string_view text) {
    auto dot = text.find('.');
    registry::session_handle h;
    if (dot == std::string_view::npos || !parse_number(text.substr(0, dot), h.worker) ||
        !parse_number(text.substr(dot + 1), h.session)) {
        return std::nullopt;
    }
    return h;
}

}  // namespace parley::cluster
