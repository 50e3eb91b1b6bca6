#include "server/logging.hpp"

#include "protocol/json_text.hpp"
#include "protocol/utf8.hpp"

#include <spdlog/formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <stdexcept>
#include <system_error>

namespace parley::server {
namespace {

constexpr std::array<std::string_view, 7> level_names = {"trace", "debug", "info", "warn", "error", "critical", "off"};

std::optional<spdlog::level::level_enum> parse_level(std::string_view name) {
    for (std::size_t i = 0; i < level_names.size(); ++i) {
        if (level_names[i] == name) {
            return static_cast<spdlog::level::level_enum>(i);
        }
    }
    return std::nullopt;
}

std::runtime_error unknown_level(std::string_view name) {
    return std::runtime_error(
        fmt::format("unknown log level '{}' (trace, debug, info, warn, error, critical or off)", name));
}

std::string_view level_name(spdlog::level::level_enum level) {
    auto i = static_cast<std::size_t>(level);
    return i < level_names.size() ? level_names[i] : "unknown";
}

// Read by fields formatting on any logging thread; written by setup_logging before the threads
// start logging.
std::atomic<bool> json_mode{false};

// The json-mode note a fields leaves for the json formatter (see logging.hpp). Both run on the
// thread that logs, one right after the other.
struct fields_note {
    bool armed = false;
    std::string text;  // the message text the fields produced
    std::size_t message_size = 0;
    std::string members;  // `,"key":value...`
};
thread_local fields_note note;

void append_hex(std::string& out, unsigned char c, std::string_view prefix, int width) {
    static constexpr char digits[] = "0123456789abcdef";
    out += prefix;
    for (int shift = (width - 1) * 4; shift >= 0; shift -= 4) {
        out += digits[(c >> shift) & 0xf];
    }
}

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

// One log record per line: control characters in free text become escapes.
void append_text_escaped(std::string& out, std::string_view s) {
    for (char ch : s) {
        auto c = static_cast<unsigned char>(ch);
        switch (ch) {
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (is_control(c)) {
                append_hex(out, c, "\\x", 2);
            } else {
                out += ch;
            }
        }
    }
}

// A JSON string literal of log text, which need not be valid UTF-8 (it may hold what a client
// sent): ill-formed parts become U+FFFD, so that every line is valid JSON.
void append_json_text(std::string& out, std::string_view s) {
    if (protocol::is_valid_utf8(s)) {
        protocol::append_json_string(out, s);
    } else {
        protocol::append_json_string(out, protocol::replace_invalid_utf8(s));
    }
}

// "2026-11-30T20:15:03.123Z". The formatting of the seconds is cached: a sink formats one
// record at a time under its lock, and most records share their second with the one before.
class timestamp_cache {
public:
    void append(std::string& out, spdlog::log_clock::time_point t) {
        auto since = t.time_since_epoch();
        auto secs = std::chrono::duration_cast<std::chrono::seconds>(since);
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(since - secs).count();
        if (ms < 0) {  // before 1970: floor, not truncation
            secs -= std::chrono::seconds(1);
            ms += 1000;
        }
        if (secs.count() != cached_second_ || cached_.empty()) {
            std::time_t tt = static_cast<std::time_t>(secs.count());
            std::tm tm{};
            ::gmtime_r(&tt, &tm);
            char buf[32];
            std::size_t len = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
            cached_.assign(buf, len);
            cached_second_ = secs.count();
        }
        out += cached_;
        out += '.';
        out += static_cast<char>('0' + ms / 100);
        out += static_cast<char>('0' + ms / 10 % 10);
        out += static_cast<char>('0' + ms % 10);
        out += 'Z';
    }

private:
    std::int64_t cached_second_ = 0;
    std::string cached_;
};

std::string_view view(spdlog::string_view_t s) { return {s.data(), s.size()}; }

void append_to(spdlog::memory_buf_t& dest, const std::string& line) {
    dest.append(line.data(), line.data() + line.size());
}

class text_formatter final : public spdlog::formatter {
public:
    void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
        line_.clear();
        time_.append(line_, msg.time);
        line_ += ' ';
        line_ += level_name(msg.level);
        line_ += ' ';
        line_ += view(msg.logger_name);
        line_ += ": ";
        append_text_escaped(line_, view(msg.payload));
        line_ += '\n';
        append_to(dest, line_);
    }
    std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<text_formatter>(); }

private:
    timestamp_cache time_;
    std::string line_;
};

class json_formatter final : public spdlog::formatter {
public:
    void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
        std::string_view payload = view(msg.payload);
        bool with_fields = note.armed && payload == note.text;
        note.armed = false;

        line_.clear();
        line_ += "{\"ts\":\"";
        time_.append(line_, msg.time);
        line_ += "\",\"level\":\"";
        line_ += level_name(msg.level);
        line_ += "\",\"logger\":";
        append_json_text(line_, view(msg.logger_name));
        line_ += ",\"msg\":";
        append_json_text(line_, with_fields ? payload.substr(0, note.message_size) : payload);
        if (with_fields) {
            line_ += note.members;
        }
        line_ += "}\n";
        append_to(dest, line_);
    }
    std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<json_formatter>(); }

private:
    timestamp_cache time_;
    std::string line_;
};

bool needs_quotes(std::string_view v) {
    if (v.empty()) {
        return true;
    }
    for (char ch : v) {
        auto c = static_cast<unsigned char>(ch);
        if (c == ' ' || c == '"' || c == '=' || c == '\\' || is_control(c)) {
            return true;
        }
    }
    return false;
}

void append_logfmt_value(std::string& out, std::string_view v) {
    if (!needs_quotes(v)) {
        out += v;
        return;
    }
    out += '"';
    for (char ch : v) {
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        } else {
            append_text_escaped(out, std::string_view(&ch, 1));
        }
    }
    out += '"';
}

template <typename T>
void append_number(std::string& out, T v) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    (void)ec;
    out.append(buf, end);
}

bool reserved_key(std::string_view key) { return key == "ts" || key == "level" || key == "logger" || key == "msg"; }

}  // namespace

std::string fields::text() const {
    std::string out;
    out.reserve(message_.size() + fields_.size() * 24);
    out += message_;
    for (const field& f : fields_) {
        out += ' ';
        out += f.key;
        out += '=';
        switch (f.type) {
        case kind::text:
            append_logfmt_value(out, f.text);
            break;
        case kind::owned:
            append_logfmt_value(out, f.owned);
            break;
        case kind::signed_number:
            append_number(out, f.number.i);
            break;
        case kind::unsigned_number:
            append_number(out, f.number.u);
            break;
        case kind::real:
            append_number(out, f.number.d);
            break;
        case kind::boolean:
            out += f.number.b ? "true" : "false";
            break;
        }
    }
    return out;
}

std::string fields::json_members() const {
    std::string out;
    for (const field& f : fields_) {
        out += ',';
        if (reserved_key(f.key)) {
            append_json_text(out, "_" + std::string(f.key));
        } else {
            append_json_text(out, f.key);
        }
        out += ':';
        switch (f.type) {
        case kind::text:
        case kind::owned:
            append_json_text(out, f.type == kind::text ? f.text : std::string_view(f.owned));
            break;
        case kind::signed_number:
            append_number(out, f.number.i);
            break;
        case kind::unsigned_number:
            append_number(out, f.number.u);
            break;
        case kind::real:
            if (std::isfinite(f.number.d)) {
                append_number(out, f.number.d);
            } else {
                out += "null";  // JSON has no NaN or infinity
            }
            break;
        case kind::boolean:
            out += f.number.b ? "true" : "false";
            break;
        }
    }
    return out;
}

namespace detail {

std::string format_for_log(const fields& f) {
    std::string text = f.text();
    if (json_mode.load(std::memory_order_relaxed)) {
        note.armed = true;
        note.text = text;
        note.message_size = f.message().size();
        note.members = f.json_members();
    }
    return text;
}

}  // namespace detail

void log_connection_closed(const connection_end& end) {
    spdlog::info("{}", fields("connection closed")
                           .add("peer", end.peer)
                           .add("user", end.user.empty() ? std::string_view("-") : end.user)
                           .add("duration_ms", end.duration_ms)
                           .add("close_code", end.close_code)
                           .add("reason", end.reason)
                           .add("conn", end.connection));
}

bool valid_log_level(std::string_view level) { return parse_level(level).has_value(); }

void setup_logging(const log_options& options) {
    auto level = parse_level(options.level);
    if (!level) {
        throw unknown_level(options.level);
    }
    const bool json = options.format == config::log_format::json;

    spdlog::sink_ptr sink;
    if (options.file.empty()) {
        sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    } else {
        // Open it once ourselves for a plain reason (spdlog would also create missing
        // directories, which hides a mistyped path).
        std::FILE* probe = std::fopen(options.file.c_str(), "ab");
        if (probe == nullptr) {
            throw std::runtime_error(fmt::format("cannot open log file {}: {}", options.file,
                                                 std::error_code(errno, std::generic_category()).message()));
        }
        std::fclose(probe);
        try {
            sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(options.file, false);
        } catch (const spdlog::spdlog_ex& e) {
            throw std::runtime_error(fmt::format("cannot open log file {}: {}", options.file, e.what()));
        }
    }
    if (json) {
        sink->set_formatter(std::make_unique<json_formatter>());
    } else {
        sink->set_formatter(std::make_unique<text_formatter>());
    }

    auto logger = std::make_shared<spdlog::logger>("parley", std::move(sink));
    logger->set_level(*level);
    logger->flush_on(spdlog::level::info);
    json_mode.store(json, std::memory_order_relaxed);
    spdlog::set_default_logger(std::move(logger));
    spdlog::set_level(*level);
}

void set_log_level(std::string_view level) {
    auto parsed = parse_level(level);
    if (!parsed) {
        throw unknown_level(level);
    }
    spdlog::set_level(*parsed);
}

}  // namespace parley::server
