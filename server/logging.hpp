#pragma once

#include "config/settings.hpp"

#include <boost/container/small_vector.hpp>
#include <spdlog/fmt/fmt.h>

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

namespace parley::server {

// Where and how parleyd writes its log.
struct log_options {
    std::string level = "info";   // trace, debug, info, warn, error, critical, off
    config::log_format format = config::log_format::text;
    std::string file;             // empty: stderr; otherwise appended to
};

// Installs the default spdlog logger, named "parley", over one sink (stderr without colours, or
// the file opened for appending) with parley's formatter, at the given level, flushing every line
// at info and above so journald, `tail -f` and tests see it at once. Call at start-up before
// other threads log (replacing the logger while another thread logs is not supported).
// Line formats, one record per line, control characters in messages escaped:
//   text  2026-11-30T20:15:03.123Z info parley: connection closed peer=1.2.3.4:5678 user=alice
//   json  {"ts":"2026-11-30T20:15:03.123Z","level":"info","logger":"parley","msg":"connection closed",
//          "peer":"1.2.3.4:5678","user":"alice"}
// Times are UTC with milliseconds. Levels print as trace, debug, info, warn, error, critical.
// Throws std::runtime_error with one plain sentence: "unknown log level 'x' (...)" or "cannot open
// log file PATH: reason". On a throw the previous logger stays in place.
void setup_logging(const log_options& options);

// Changes the level of every logger (a config reload). Any thread. Throws std::runtime_error on
// an unknown level name, leaving the level unchanged.
void set_log_level(std::string_view level);

// True for the level names setup_logging and set_log_level accept.
bool valid_log_level(std::string_view level);

// A log message with key=value fields, for lines a machine will read:
//
//   spdlog::info("{}", fields("connection closed").add("peer", peer).add("user", user)
//                          .add("duration_ms", ms).add("reason", "slow consumer"));
//
// text: `connection closed peer=1.2.3.4:5678 user=alice duration_ms=1234 reason="slow consumer"`
//       (logfmt: a value with a space, '=', '"', '\' or a control character, or an empty value,
//       is quoted, with \" \\ \n \r \t \xNN inside the quotes).
// json: "msg":"connection closed","peer":"1.2.3.4:5678","user":"alice","duration_ms":1234,...
//       as members of the line's object; numbers and booleans stay JSON numbers and booleans.
//       A key equal to ts, level, logger or msg is written with a leading '_'.
//
// How: the builder only stores its arguments; nothing is formatted unless the level is enabled
// (spdlog formats the message after its level check). When it is formatted, the message text is
// always the logfmt line above; in json mode the builder also leaves the same fields as JSON
// members in a thread-local note, which the json formatter takes when the line it is writing is
// exactly that text (spdlog formats the message and writes it on the calling thread). So a
// client cannot forge fields by putting `key=value` in logged text, and if fields is only part
// of a message ("x {} y") the json line still holds everything, as text in "msg".
//
// Lifetime: string_view, const char* and std::string lvalue values are referenced, not copied,
// so log in the same statement that builds it; a std::string rvalue is moved in. Keys should be
// literals of [a-z0-9_].
class fields {
public:
    explicit fields(std::string_view message) : message_(message) {}

    fields& add(std::string_view key, std::string_view value) {
        next(key, kind::text).text = value;
        return *this;
    }
    fields& add(std::string_view key, const char* value) { return add(key, std::string_view(value)); }
    fields& add(std::string_view key, const std::string& value) { return add(key, std::string_view(value)); }
    fields& add(std::string_view key, std::string&& value) {
        next(key, kind::owned).owned = std::move(value);
        return *this;
    }
    fields& add(std::string_view key, bool value) {
        next(key, kind::boolean).number.b = value;
        return *this;
    }
    fields& add(std::string_view key, double value) {
        next(key, kind::real).number.d = value;
        return *this;
    }
    template <std::integral T>
    fields& add(std::string_view key, T value) {
        if constexpr (std::signed_integral<T>) {
            next(key, kind::signed_number).number.i = value;
        } else {
            next(key, kind::unsigned_number).number.u = value;
        }
        return *this;
    }

    // The logfmt text: the message, then ` key=value` per field.
    std::string text() const;
    // The fields as JSON object members: `,"key":value` each (empty when there are none).
    std::string json_members() const;
    std::string_view message() const { return message_; }

private:
    enum class kind : unsigned char { text, owned, signed_number, unsigned_number, real, boolean };
    // A tagged value rather than a std::variant: GCC 12 warns (maybe-uninitialized, a false
    // positive) wherever a variant like this is moved, which would break -Werror builds of callers.
    struct field {
        std::string_view key;
        kind type = kind::text;
        std::string_view text;  // kind::text
        std::string owned;      // kind::owned
        union {
            std::int64_t i;
            std::uint64_t u;
            double d;
            bool b;
        } number{};  // the other kinds
    };

    field& next(std::string_view key, kind type) {
        fields_.emplace_back();
        field& f = fields_.back();
        f.key = key;
        f.type = type;
        return f;
    }

    std::string_view message_;
    boost::container::small_vector<field, 8> fields_;
};

// The line each WebSocket connection writes when it ends, at info (like an access log: who, how
// long, why). In json mode each value is a member of the line's object:
//   text  connection closed peer=203.0.113.5:40122 user=alice duration_ms=1234 close_code=1000
//         reason="closed by client" conn=c0.17
//   json  {...,"msg":"connection closed","peer":"203.0.113.5:40122","user":"alice",
//          "duration_ms":1234,"close_code":1000,"reason":"closed by client","conn":"c0.17"}
// user is "-" before a login; close_code is 0 when no close frame was sent (the peer vanished).
struct connection_end {
    std::string_view connection;  // "c<worker>.<session>", as the connection's other lines say
    std::string_view peer;
    std::string_view user;
    std::uint64_t duration_ms = 0;
    std::uint16_t close_code = 0;
    std::string_view reason;
};
void log_connection_closed(const connection_end& end);

namespace detail {
// What a fields prints as a log message: text(), plus the json-mode note described above.
std::string format_for_log(const fields& f);
}  // namespace detail

}  // namespace parley::server

template <>
struct fmt::formatter<parley::server::fields> {
    constexpr auto parse(fmt::format_parse_context& ctx) -> decltype(ctx.begin()) { return ctx.begin(); }

    template <typename FormatContext>
    auto format(const parley::server::fields& f, FormatContext& ctx) const -> decltype(ctx.out()) {
        std::string text = parley::server::detail::format_for_log(f);
        return std::copy(text.begin(), text.end(), ctx.out());
    }
};
