#include "rooms/cluster/stream_entries.hpp"

#include "protocol/server_messages.hpp"
#include "rooms/cluster/said_batch.hpp"

namespace parley::cluster {

namespace {

// x: "OFFSET\nTS\nACK\nNODE:RUN:NUMBER\n" and the JSON without the seq's digits, which go at
// OFFSET (the entry's id holds them). Leaves e's JSON empty when x is not that.
void read_batched(std::string_view x, stream_entry& e) {
    std::string_view lines[4];
    for (std::string_view& line : lines) {
        const std::size_t end = x.find('\n');
        if (end == std::string_view::npos) {
            return;
        }
        line = x.substr(0, end);
        x.remove_prefix(end + 1);
    }
    std::size_t at = 0;
    if (!parse_number(lines[0], at) || at > x.size() || !parse_number(lines[1], e.ts)) {
        return;
    }
    e.ack = lines[2];
    e.origin = lines[3].substr(0, lines[3].find(':'));
    e.json.assign(x.substr(0, at)).append(std::to_string(e.seq)).append(x.substr(at));
}

// y: a block of one say (said_batch.hpp). Leaves e's JSON empty when y is not that.
void read_said(std::string_view y, std::string_view room, stream_entry& e) {
    std::string json;
    const std::int64_t read = said_batch::read(y, [&](const said_batch::say& say) {
        protocol::append_message_before_seq(json, room, say.from, say.text_json, say.ts);
        json.append(std::to_string(e.seq)).push_back('}');
        e.ts = say.ts;
        e.ack = say.ack;
        e.origin = say.node;
    });
    if (read == 1 && !room.empty()) {
        e.json = std::move(json);
    }
}

}  // namespace

std::vector<stream_entry> parse_stream(const redis_reply& reply, std::string_view room) {
    std::vector<stream_entry> out;
    if (reply.type != redis_reply::kind::array) {
        return out;
    }
    for (const auto& item : reply.elements) {
        if (item.type != redis_reply::kind::array || item.elements.size() != 2) {
            continue;
        }
        stream_entry e;
        std::string_view id = item.elements[0].text;
        if (!parse_number(id.substr(0, id.find('-')), e.seq)) {
            continue;
        }
        const auto& fields = item.elements[1].elements;
        for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
            const std::string& name = fields[i].text;
            const std::string& value = fields[i + 1].text;
            if (name == "j") {
                e.json = value;
            } else if (name == "t") {
                parse_number(std::string_view(value), e.ts);
            } else if (name == "n") {
                e.origin = value.substr(0, value.find(':'));  // "NODE:RUN:NUMBER"; ids hold no ':'
            } else if (name == "a") {
                e.ack = value;
            } else if (name == "y") {
                read_said(value, room, e);
            } else if (name == "x") {
                read_batched(value, e);
            }
        }
        if (!e.json.empty()) {
            out.push_back(std::move(e));
        }
    }
    return out;
}

std::string membership_field(std::string_view room, std::string_view user) {
    std::string field(room);
    field.push_back('\n');
    field.append(user);
    return field;
}

}  // namespace parley::cluster
