#include "protocol/server_messages.hpp"

#include "protocol/frame_encoder.hpp"
#include "protocol/json_text.hpp"

#include <charconv>
#include <cstring>

namespace parley::protocol {
namespace {

// Builds the JSON payload in a reusable per-thread buffer, then allocates the frame once at its
// exact size: one allocation per encoded message, however many members receive it.
class payload_builder {
public:
    payload_builder() : out_(scratch()) { out_.clear(); }

    payload_builder& raw(std::string_view text) {
        out_.append(text);
        return *this;
    }
    payload_builder& str(std::string_view text) {
        append_json_string(out_, text);
        return *this;
    }
    payload_builder& num(std::int64_t value) {
        append_json_integer(out_, value);
        return *this;
    }
    // ,"re":<id> when the request had an id.
    payload_builder& re(std::string_view id) {
        if (!id.empty()) {
            out_.append(",\"re\":").append(id);
        }
        return *this;
    }
    shared_frame frame() {
        out_.push_back('}');
        std::size_t header = frame_header_size(out_.size());
        shared_frame f = shared_frame::allocate(header + out_.size());
        write_frame_header(f.fill(), opcode::text, out_.size());
        std::memcpy(f.fill() + header, out_.data(), out_.size());
        // Keep the scratch buffer from pinning a rare huge reply's memory forever.
        if (out_.capacity() > 256 * 1024) {
            std::string().swap(out_);
        }
        return f;
    }

private:
    static std::string& scratch() {
        thread_local std::string buffer;
        return buffer;
    }
    std::string& out_;
};

// A JSON array of items, each written by append(b, item).
template <typename Items, typename Append>
void append_array(payload_builder& b, const Items& items, Append append) {
    b.raw("[");
    bool first = true;
    for (const auto& item : items) {
        if (!first) {
            b.raw(",");
        }
        first = false;
        append(b, item);
    }
    b.raw("]");
}

void append_payloads(payload_builder& b, const std::vector<shared_frame>& frames) {
    append_array(b, frames, [](payload_builder& out, const shared_frame& f) { out.raw(frame_payload(f.view())); });
}

void append_names(payload_builder& b, const std::vector<std::string>& names) {
    append_array(b, names, [](payload_builder& out, const std::string& n) { out.str(n); });
}

}  // namespace

shared_frame encode_welcome(std::string_view user, std::string_view re) {
    return payload_builder().raw("{\"type\":\"welcome\",\"user\":").str(user).re(re).frame();
}

shared_frame encode_welcome(std::string_view user, std::string_view re,
                            const std::vector<conversation_summary>& conversations) {
    payload_builder b;
    b.raw("{\"type\":\"welcome\",\"user\":").str(user).raw(",\"conversations\":[");
    bool first = true;
    for (const conversation_summary& c : conversations) {
        b.raw(first ? "{" : ",{").raw(c.is_room ? "\"room\":" : "\"with\":").str(c.name);
        b.raw(",\"seq\":").num(c.seq).raw(",\"read\":").num(c.read).raw(",\"unread\":").num(c.unread).raw("}");
        first = false;
    }
    return b.raw("]").re(re).frame();
}

namespace {

void append_sanctions(payload_builder& b, std::string_view field, const std::vector<sanction_info>& list) {
    if (list.empty()) {
        return;
    }
    b.raw(",\"").raw(field).raw("\":[");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const sanction_info& s = list[i];
        b.raw(i == 0 ? "{\"user\":" : ",{\"user\":").str(s.user);
        if (!s.by.empty()) {
            b.raw(",\"by\":").str(s.by);
        }
        if (!s.reason.empty()) {
            b.raw(",\"reason\":").str(s.reason);
        }
        if (s.until_ms != 0) {
            b.raw(",\"until\":").num(s.until_ms);
        }
        b.raw("}");
    }
    b.raw("]");
}

// The roles, slow mode, bans and mutes of a `joined` (the topic comes first, with the room).
void append_standing(payload_builder& b, const room_standing& standing) {
    if (!standing.roles.empty()) {
        b.raw(",\"roles\":{");
        for (std::size_t i = 0; i < standing.roles.size(); ++i) {
            if (i != 0) {
                b.raw(",");
            }
            b.str(standing.roles[i].first).raw(":").str(standing.roles[i].second);
        }
        b.raw("}");
    }
    if (standing.slow_mode_s > 0) {
        b.raw(",\"slow_mode_s\":").num(standing.slow_mode_s);
    }
    append_sanctions(b, "bans", standing.bans);
    append_sanctions(b, "mutes", standing.mutes);
}

}  // namespace

shared_frame encode_joined(std::string_view room, std::int64_t epoch, const member_list& members,
                           const std::vector<shared_frame>& history, std::optional<bool> recovered,
                           std::string_view re, const room_standing* standing) {
    payload_builder b;
    b.raw("{\"type\":\"joined\",\"room\":").str(room);
    if (standing != nullptr && !standing->topic.empty()) {
        b.raw(",\"topic\":").str(standing->topic);
    }
    b.raw(",\"epoch\":").num(epoch).raw(",\"members\":");
    append_names(b, members.names);
    b.raw(",\"member_count\":").num(static_cast<std::int64_t>(members.count));
    if (members.truncated) {
        b.raw(",\"members_truncated\":true");
    }
    if (standing != nullptr) {
        append_standing(b, *standing);
    }
    b.raw(",\"history\":");
    append_payloads(b, history);
    if (recovered) {
        b.raw(*recovered ? ",\"recovered\":true" : ",\"recovered\":false");
    }
    return b.re(re).frame();
}

shared_frame encode_left(std::string_view room, std::string_view re) {
    return payload_builder().raw("{\"type\":\"left\",\"room\":").str(room).re(re).frame();
}

shared_frame encode_message(std::string_view room, std::string_view from, std::string_view text, std::int64_t seq,
                            std::int64_t ts) {
    return payload_builder()
        .raw("{\"type\":\"message\",\"room\":")
        .str(room)
        .raw(",\"from\":")
        .str(from)
        .raw(",\"text\":")
        .str(text)
        .raw(",\"seq\":")
        .num(seq)
        .raw(",\"ts\":")
        .num(ts)
        .frame();
}

shared_frame encode_moderation(const moderation_event& event, std::int64_t seq, std::int64_t ts) {
    payload_builder b;
    b.raw("{\"type\":\"moderation\",\"room\":").str(event.room).raw(",\"seq\":").num(seq).raw(",\"ts\":").num(ts);
    b.raw(",\"action\":").str(event.action).raw(",\"by\":").str(event.by);
    if (!event.user.empty()) {
        b.raw(",\"user\":").str(event.user);
    }
    if (!event.reason.empty()) {
        b.raw(",\"reason\":").str(event.reason);
    }
    if (!event.role.empty()) {
        b.raw(",\"role\":").str(event.role);
    }
    if (event.topic) {
        b.raw(",\"topic\":").str(*event.topic);
    }
    if (event.until_ms) {
        b.raw(",\"until\":").num(*event.until_ms);
    }
    if (event.interval_s) {
        b.raw(",\"interval_s\":").num(*event.interval_s);
    }
    return b.frame();
}

message_text_around_seq split_around_seq(const shared_frame& event) {
    const std::string_view payload = frame_payload(event.view());
    constexpr std::string_view field = "\"seq\":";
    // A room name holds no quote, so the first "seq" field is the event's own.
    const std::size_t at = payload.find(field);
    if (at == std::string_view::npos) {
        return {std::string(payload), {}};
    }
    std::size_t end = at + field.size();
    while (end < payload.size() && payload[end] >= '0' && payload[end] <= '9') {
        ++end;
    }
    return {std::string(payload.substr(0, at + field.size())), std::string(payload.substr(end))};
}

shared_frame encode_revised_message(std::string_view room, std::string_view from, std::string_view text,
                                    std::int64_t seq, std::int64_t ts) {
    payload_builder b;
    b.raw("{\"type\":\"message\",\"room\":").str(room).raw(",\"from\":").str(from).raw(",\"text\":").str(text);
    return b.raw(",\"seq\":").num(seq).raw(",\"ts\":").num(ts).raw(",\"edited\":true").frame();
}

shared_frame encode_deleted_message(std::string_view room, std::string_view from, std::int64_t seq, std::int64_t ts) {
    payload_builder b;
    b.raw("{\"type\":\"message\",\"room\":").str(room).raw(",\"from\":").str(from);
    return b.raw(",\"seq\":").num(seq).raw(",\"ts\":").num(ts).raw(",\"deleted\":true").frame();
}

shared_frame encode_edited(std::string_view room, std::int64_t seq, std::int64_t ts, std::int64_t target,
                           std::string_view by, std::optional<std::string_view> text) {
    payload_builder b;
    b.raw("{\"type\":\"edited\",\"room\":").str(room).raw(",\"seq\":").num(seq).raw(",\"ts\":").num(ts);
    b.raw(",\"target\":").num(target).raw(",\"by\":").str(by);
    if (text) {
        b.raw(",\"text\":").str(*text);
    } else {
        b.raw(",\"deleted\":true");
    }
    return b.frame();
}

shared_frame encode_deleted(std::string_view room, std::int64_t seq, std::int64_t ts, std::int64_t target,
                            std::string_view by) {
    payload_builder b;
    b.raw("{\"type\":\"deleted\",\"room\":").str(room).raw(",\"seq\":").num(seq).raw(",\"ts\":").num(ts);
    return b.raw(",\"target\":").num(target).raw(",\"by\":").str(by).frame();
}

namespace {

// The message's JSON up to its text, and from after its text up to its seq: one layout for
// encode_message_around_seq and append_message_before_seq, so both make the same bytes.
void append_message_head(std::string& out, std::string_view room, std::string_view from) {
    out.append("{\"type\":\"message\",\"room\":");
    append_json_string(out, room);
    out.append(",\"from\":");
    append_json_string(out, from);
    out.append(",\"text\":");
}

void append_message_tail(std::string& out, std::int64_t ts) {
    out.append(",\"ts\":");
    append_json_integer(out, ts);
    out.append(",\"seq\":");
}

}  // namespace

message_text_around_seq encode_message_around_seq(std::string_view room, std::string_view from,
                                                  std::string_view text, std::int64_t ts) {
    message_text_around_seq out;
    append_message_head(out.before, room, from);
    out.text_at = out.before.size();
    append_json_string(out.before, text);
    out.text_size = out.before.size() - out.text_at;
    append_message_tail(out.before, ts);
    out.after = "}";
    return out;
}

void append_message_before_seq(std::string& out, std::string_view room, std::string_view from,
                               std::string_view text_json, std::int64_t ts) {
    append_message_head(out, room, from);
    out.append(text_json);
    append_message_tail(out, ts);
}

shared_frame frame_of_json(std::string_view json) {
    std::size_t header = frame_header_size(json.size());
    shared_frame f = shared_frame::allocate(header + json.size());
    write_frame_header(f.fill(), opcode::text, json.size());
    if (!json.empty()) {
        std::memcpy(f.fill() + header, json.data(), json.size());
    }
    return f;
}

shared_frame frame_of_json_around(std::string_view before, std::int64_t seq, std::string_view after) {
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, seq);
    const std::size_t number = static_cast<std::size_t>(end - digits);
    const std::size_t size = before.size() + number + after.size();
    const std::size_t header = frame_header_size(size);
    shared_frame f = shared_frame::allocate(header + size);
    char* out = f.fill();
    write_frame_header(f.fill(), opcode::text, size);
    out += header;
    std::memcpy(out, before.data(), before.size());
    std::memcpy(out + before.size(), digits, number);
    std::memcpy(out + before.size() + number, after.data(), after.size());
    return f;
}

shared_frame encode_dm(std::string_view from, std::string_view to, std::string_view text, std::int64_t ts,
                       std::optional<std::int64_t> seq) {
    payload_builder b;
    b.raw("{\"type\":\"dm\",\"from\":").str(from).raw(",\"to\":").str(to).raw(",\"text\":").str(text);
    if (seq) {
        b.raw(",\"seq\":").num(*seq);
    }
    return b.raw(",\"ts\":").num(ts).frame();
}

message_text_around_seq encode_dm_around_seq(std::string_view from, std::string_view to, std::string_view text,
                                             std::int64_t ts) {
    // The order of encode_dm's fields: a node that completes it sends what a single node would.
    std::string before = "{\"type\":\"dm\",\"from\":";
    append_json_string(before, from);
    before.append(",\"to\":");
    append_json_string(before, to);
    before.append(",\"text\":");
    append_json_string(before, text);
    before.append(",\"seq\":");
    std::string after = ",\"ts\":";
    append_json_integer(after, ts);
    after.push_back('}');
    return {std::move(before), std::move(after)};
}

shared_frame encode_dm_history(std::string_view with, std::optional<std::int64_t> epoch,
                               const std::vector<shared_frame>& messages, std::string_view re) {
    payload_builder b;
    b.raw("{\"type\":\"dm_history\",\"with\":").str(with);
    if (epoch) {
        b.raw(",\"epoch\":").num(*epoch);
    }
    b.raw(",\"messages\":");
    append_payloads(b, messages);
    return b.re(re).frame();
}

shared_frame encode_read(bool is_room, std::string_view name, std::int64_t seq, std::string_view re) {
    return payload_builder()
        .raw(is_room ? "{\"type\":\"read\",\"room\":" : "{\"type\":\"read\",\"with\":")
        .str(name)
        .raw(",\"seq\":")
        .num(seq)
        .re(re)
        .frame();
}

shared_frame encode_presence(std::string_view room, std::string_view user, bool joined) {
    return payload_builder()
        .raw("{\"type\":\"presence\",\"room\":")
        .str(room)
        .raw(",\"user\":")
        .str(user)
        .raw(joined ? ",\"event\":\"join\"" : ",\"event\":\"leave\"")
        .frame();
}

shared_frame encode_members(std::string_view room, const member_list& page, bool more, std::string_view re) {
    payload_builder b;
    b.raw("{\"type\":\"members\",\"room\":").str(room).raw(",\"members\":");
    append_names(b, page.names);
    b.raw(",\"member_count\":").num(static_cast<std::int64_t>(page.count));
    b.raw(more ? ",\"more\":true" : ",\"more\":false");
    return b.re(re).frame();
}

shared_frame encode_presence_count(std::string_view room, std::size_t count) {
    return payload_builder()
        .raw("{\"type\":\"presence_count\",\"room\":")
        .str(room)
        .raw(",\"count\":")
        .num(static_cast<std::int64_t>(count))
        .frame();
}

shared_frame encode_typing(std::string_view room, std::string_view user) {
    return payload_builder().raw("{\"type\":\"typing\",\"room\":").str(room).raw(",\"user\":").str(user).frame();
}

shared_frame encode_system(std::string_view text) {
    return payload_builder().raw("{\"type\":\"system\",\"text\":").str(text).frame();
}

shared_frame encode_users(const std::vector<std::string>& users, std::string_view re) {
    payload_builder b;
    b.raw("{\"type\":\"users\",\"users\":");
    append_names(b, users);
    return b.re(re).frame();
}

shared_frame encode_rooms(const std::vector<std::pair<std::string, std::size_t>>& rooms, std::string_view re,
                          const std::vector<std::string>* topics) {
    payload_builder b;
    b.raw("{\"type\":\"rooms\",\"rooms\":");
    std::size_t index = 0;
    append_array(b, rooms, [&](payload_builder& out, const std::pair<std::string, std::size_t>& room) {
        out.raw("{\"name\":").str(room.first).raw(",\"members\":").num(static_cast<std::int64_t>(room.second));
        if (topics != nullptr && index < topics->size() && !(*topics)[index].empty()) {
            out.raw(",\"topic\":").str((*topics)[index]);
        }
        ++index;
        out.raw("}");
    });
    return b.re(re).frame();
}

shared_frame encode_history(std::string_view room, const std::vector<shared_frame>& messages, std::string_view re) {
    payload_builder b;
    b.raw("{\"type\":\"history\",\"room\":").str(room).raw(",\"messages\":");
    append_payloads(b, messages);
    return b.re(re).frame();
}

shared_frame encode_ack(std::string_view re, std::string_view room, std::int64_t seq) {
    payload_builder b;
    b.raw("{\"type\":\"ack\",\"re\":").raw(re);
    if (!room.empty()) {
        b.raw(",\"room\":").str(room).raw(",\"seq\":").num(seq);
    }
    return b.frame();
}

shared_frame encode_dm_ack(std::string_view re, std::string_view with, std::int64_t seq) {
    return payload_builder().raw("{\"type\":\"ack\",\"re\":").raw(re).raw(",\"with\":").str(with)
        .raw(",\"seq\":").num(seq).frame();
}

shared_frame encode_error(error_code code, std::string_view message, std::string_view re) {
    return payload_builder()
        .raw("{\"type\":\"error\",\"code\":\"")
        .raw(wire_name(code))
        .raw("\",\"message\":")
        .str(message)
        .re(re)
        .frame();
}

}  // namespace parley::protocol
