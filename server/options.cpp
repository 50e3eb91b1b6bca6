#include "server/options.hpp"

#include <array>
#include <charconv>
#include <functional>
#include <limits>
#include <string_view>

namespace parley::server {
namespace {

using config::settings;

template <typename T>
bool parse_number(std::string_view text, T& out, T min, T max) {
    T value{};
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || value < min || value > max) {
        return false;
    }
    out = value;
    return true;
}

struct option {
    std::string_view name;
    std::string_view value_name;
    std::string_view help;
    // Applies the value; returns an error sentence, or empty when accepted.
    std::function<std::string(settings&, std::string_view)> apply;
};

template <typename T>
std::function<std::string(settings&, std::string_view)> number_into(T settings::*field, T min, T max) {
    return [field, min, max](settings& s, std::string_view v) -> std::string {
        if (!parse_number(v, s.*field, min, max)) {
            return "expects a whole number from " + std::to_string(min) + " to " + std::to_string(max);
        }
        return {};
    };
}

std::function<std::string(settings&, std::string_view)> double_into(double settings::*field) {
    return [field](settings& s, std::string_view v) -> std::string {
        unsigned long long whole = 0;
        if (!parse_number(v, whole, 1ULL, 10'000'000ULL)) {
            return "expects a whole number from 1 to 10000000";
        }
        s.*field = static_cast<double>(whole);
        return {};
    };
}

const std::array<option, 11>& options() {
    static const std::array<option, 11> table{{
        {"--bind", "ADDR", "IPv4 or IPv6 address to listen on (default 0.0.0.0)",
         [](settings& s, std::string_view v) -> std::string {
             if (v.empty()) {
                 return "expects an address";
             }
             s.bind = std::string(v);
             return {};
         }},
        {"--port", "N", "TCP port for HTTP and WebSocket; 0 picks a free one (default 8080)",
         number_into<std::uint16_t>(&settings::port, 0, 65535)},
        {"--threads", "T", "worker threads, each with its own event loop (default: number of cores)",
         number_into<unsigned>(&settings::threads, 1, 256)},
        {"--ws-path", "PATH", "path that upgrades to WebSocket (default /ws)",
         [](settings& s, std::string_view v) -> std::string {
             if (v.empty() || v.front() != '/') {
                 return "expects a path starting with '/'";
             }
             s.ws_path = std::string(v);
             return {};
         }},
        {"--max-room-members", "N", "members one room may hold; more get room_full (default 100000)",
         number_into<std::size_t>(&settings::max_room_members, 1, std::numeric_limits<std::uint32_t>::max())},
        {"--rate-limit", "N", "requests per second per connection; more get rate_limited (default 200)",
         double_into(&settings::rate_limit_per_second)},
        {"--rate-burst", "N", "requests a connection may send at once before the rate applies (default 400)",
         double_into(&settings::rate_limit_burst)},
        {"--write-queue-limit", "BYTES",
         "bytes queued for one client before it is closed as a slow consumer with 1008 (default 4194304)",
         number_into<std::size_t>(&settings::write_queue_limit_bytes, 1024, std::size_t{1} << 34)},
        {"--history", "N", "messages kept per room in memory (default 1000)",
         number_into<std::size_t>(&settings::history_per_room, 50, 10'000'000)},
        {"--max-message", "BYTES", "largest WebSocket message accepted; larger are closed with 1009 (default 65536)",
         number_into<std::size_t>(&settings::max_message_bytes, 125, std::size_t{64} << 20)},
        {"--log-level", "LEVEL", "trace, debug, info, warn, error or off (default info)",
         [](settings& s, std::string_view v) -> std::string {
             s.log_level = std::string(v);
             return {};
         }},
    }};
    return table;
}

}  // namespace

std::string usage_text() {
    std::string text =
        "Usage: parleyd [options]\n"
        "parley chat server: WebSocket at the ws path, GET /healthz for health checks.\n\n"
        "Options:\n";
    for (const auto& o : options()) {
        std::string left = "  " + std::string(o.name) + " " + std::string(o.value_name);
        left.resize(std::max<std::size_t>(left.size() + 1, 30), ' ');
        text += left + std::string(o.help) + "\n";
    }
    text += "  --version                   print the version and exit\n";
    text += "  --help                      print this help and exit\n";
    return text;
}

command_line parse_command_line(int argc, char** argv) {
    command_line result;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            result.show_help = true;
            continue;
        }
        if (arg == "--version") {
            result.show_version = true;
            continue;
        }
        std::string_view value;
        bool inline_value = false;
        if (auto eq = arg.find('='); eq != std::string_view::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            inline_value = true;
        }
        const option* match = nullptr;
        for (const auto& o : options()) {
            if (o.name == arg) {
                match = &o;
            }
        }
        if (!match) {
            result.error = "unknown option '" + std::string(arg) + "'";
            return result;
        }
        if (!inline_value) {
            if (i + 1 >= argc) {
                result.error = "option " + std::string(arg) + " needs a value";
                return result;
            }
            value = argv[++i];
        }
        if (std::string why = match->apply(result.settings, value); !why.empty()) {
            result.error = "option " + std::string(arg) + " " + why + " (got '" + std::string(value) + "')";
            return result;
        }
    }
    if (result.error.empty()) {
        if (std::string why = config::validate(result.settings); !why.empty()) {
            result.error = why;
        }
    }
    return result;
}

}  // namespace parley::server
