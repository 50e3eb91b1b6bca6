#include "rooms/cluster/resp_protocol.hpp"

#include "rooms/cluster/number_text.hpp"

#include <charconv>
#include <optional>

namespace parley::cluster::resp {

namespace {

constexpr std::string_view crlf = "\r\n";

void append_number(std::string& out, std::size_t n) {
    char digits[24];
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, n);
    out.append(digits, end);
}

// The header line at `pos` (after its type byte, up to "\r\n"): its end, or npos while the
// line is not all there.
std::size_t line_end(std::string_view input, std::size_t pos) {
    const std::size_t cr = input.find('\r', pos);
    if (cr == std::string_view::npos || cr + 1 >= input.size()) {
        return std::string_view::npos;
    }
    return cr;
}

// A decimal header value; nothing when it is not one.
std::optional<long long> number(std::string_view text) {
    long long value = 0;
    if (!parse_number(text, value)) {
        return std::nullopt;
    }
    return value;
}

// A well-formed reply that scan() found complete, read from `pos`; pos moves past it.
redis_reply read_at(std::string_view in, std::size_t& pos) {
    redis_reply out;
    const char type = in[pos];
    const std::size_t end = in.find('\r', pos);
    const std::string_view head = in.substr(pos + 1, end - pos - 1);
    pos = end + 2;
    switch (type) {
    case '+':
        out.type = redis_reply::kind::status;
        out.text = head;
        break;
    case '-':
        out.type = redis_reply::kind::error;
        out.text = head;
        break;
    case ':':
        out.type = redis_reply::kind::integer;
        out.integer = number(head).value_or(0);
        break;
    case '$': {
        const long long n = number(head).value_or(-1);
        if (n >= 0) {
            out.type = redis_reply::kind::string;
            out.text = in.substr(pos, static_cast<std::size_t>(n));
            pos += static_cast<std::size_t>(n) + 2;
        }
        break;
    }
    default: {  // '*'
        const long long n = number(head).value_or(-1);
        if (n >= 0) {
            out.type = redis_reply::kind::array;
            out.elements.reserve(static_cast<std::size_t>(n));
            for (long long i = 0; i < n; ++i) {
                out.elements.push_back(read_at(in, pos));
            }
        }
        break;
    }
    }
    return out;
}

// A bulk string at pos of a complete reply, as a view; pos moves past it. Nothing when the
// element there is not a bulk string.
std::optional<std::string_view> bulk_at(std::string_view in, std::size_t& pos) {
    if (pos >= in.size() || in[pos] != '$') {
        return std::nullopt;
    }
    const std::size_t end = in.find('\r', pos);
    const auto n = number(in.substr(pos + 1, end - pos - 1));
    if (!n || *n < 0) {
        return std::nullopt;
    }
    const std::string_view text = in.substr(end + 2, static_cast<std::size_t>(*n));
    pos = end + 2 + static_cast<std::size_t>(*n) + 2;
    return text;
}

}  // namespace

void append_command(std::string& out, std::span<const std::string_view> argv) {
    out.push_back('*');
    append_number(out, argv.size());
    out.append(crlf);
    for (const std::string_view arg : argv) {
        out.push_back('$');
        append_number(out, arg.size());
        out.append(crlf);
        out.append(arg);
        out.append(crlf);
    }
}

reply_scanner::status reply_scanner::scan(std::string_view input, std::size_t& length) {
    while (true) {
        if (position_ >= input.size()) {
            return status::incomplete;
        }
        const char type = input[position_];
        const std::size_t end = line_end(input, position_ + 1);
        if (end == std::string_view::npos) {
            // Only a header can be missing its end here; a header longer than any valid one
            // means the bytes are not RESP.
            return input.size() - position_ > 64 && type != '+' && type != '-' ? status::malformed
                                                                                   : status::incomplete;
        }
        if (input[end + 1] != '\n') {
            return status::malformed;
        }
        const std::string_view head = input.substr(position_ + 1, end - position_ - 1);
        std::size_t next = end + 2;  // where the element after this one starts
        bool done = true;            // this element is whole once `next` is reached
        switch (type) {
        case '+':
        case '-':
            break;
        case ':':
            if (!number(head)) {
                return status::malformed;
            }
            break;
        case '$': {
            const auto n = number(head);
            if (!n || *n < -1 || *n > max_length) {
                return status::malformed;
            }
            if (*n >= 0) {
                next += static_cast<std::size_t>(*n) + 2;
                if (next > input.size()) {
                    return status::incomplete;  // scanned again from its header: one line
                }
                if (input.substr(next - 2, 2) != crlf) {
                    return status::malformed;
                }
            }
            break;
        }
        case '*': {
            const auto n = number(head);
            if (!n || *n < -1 || *n > max_length) {
                return status::malformed;
            }
            if (*n > 0) {
                if (remaining_.size() >= max_depth) {
                    return status::malformed;
                }
                remaining_.push_back(*n);
                done = false;
            }
            break;
        }
        default:
            return status::malformed;
        }
        position_ = next;
        if (done) {
            // Close every array this element completes.
            while (!remaining_.empty() && --remaining_.back() == 0) {
                remaining_.pop_back();
            }
        }
        if (remaining_.empty()) {
            length = position_;
            position_ = 0;
            return status::complete;
        }
    }
}

redis_reply parse_reply(std::string_view complete) {
    std::size_t pos = 0;
    return read_at(complete, pos);
}

bool as_message(std::string_view complete, pubsub_message& out) {
    // "*3\r\n" then three bulk strings.
    if (complete.substr(0, 4) != "*3\r\n") {
        return false;
    }
    std::size_t pos = 4;
    const auto kind = bulk_at(complete, pos);
    if (!kind || (*kind != "message" && *kind != "smessage")) {
        return false;
    }
    const auto channel = bulk_at(complete, pos);
    const auto payload = channel ? bulk_at(complete, pos) : std::nullopt;
    if (!payload) {
        return false;
    }
    out.sharded = *kind == "smessage";
    out.channel = *channel;
    out.payload = *payload;
    return true;
}

}  // namespace parley::cluster::resp
