#include "rooms/cluster/stream_entries.hpp"

namespace parley::cluster {

std::vector<stream_entry> parse_stream(const redis_reply& reply) {
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
