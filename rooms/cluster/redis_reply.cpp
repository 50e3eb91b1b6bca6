#include "rooms/cluster/redis_reply.hpp"

#include <cstdio>

namespace parley::cluster {

namespace {

void append_quoted(std::string& out, const std::string& text) {
    out.push_back('"');
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(c);
        } else if (byte >= 0x20 && byte < 0x7f) {
            out.push_back(c);
        } else {
            char escaped[5];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
            out.append(escaped);
        }
    }
    out.push_back('"');
}

void append(std::string& out, const redis_reply& reply) {
    switch (reply.type) {
    case redis_reply::kind::nil:
        out.append("nil");
        break;
    case redis_reply::kind::integer:
        out.append(std::to_string(reply.integer));
        break;
    case redis_reply::kind::string:
        append_quoted(out, reply.text);
        break;
    case redis_reply::kind::status:
        out.push_back('+');
        out.append(reply.text);
        break;
    case redis_reply::kind::error:
        out.push_back('-');
        out.append(reply.text);
        break;
    case redis_reply::kind::array:
        out.push_back('[');
        for (std::size_t i = 0; i < reply.elements.size(); ++i) {
            if (i > 0) {
                out.append(", ");
            }
            append(out, reply.elements[i]);
        }
        out.push_back(']');
        break;
    }
}

}  // namespace

std::string redis_reply::describe() const {
    std::string out;
    append(out, *this);
    return out;
}

}  // namespace parley::cluster
