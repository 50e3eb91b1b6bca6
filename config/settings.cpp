#include "config/settings.hpp"

namespace parley::config {

std::string validate(const settings& s) {
    if (s.ws_path.empty() || s.ws_path.front() != '/') {
        return "ws_path must start with '/'";
    }
    if (s.max_message_bytes < 125 || s.max_message_bytes > (64u << 20)) {
        return "max_message_bytes must be between 125 and 67108864";
    }
    if (s.max_text_bytes == 0 || s.max_text_bytes > s.max_message_bytes) {
        return "max_text_bytes must be between 1 and max_message_bytes";
    }
    if (s.max_rooms_per_connection == 0) {
        return "max_rooms_per_connection must be at least 1";
    }
    if (s.max_room_members == 0) {
        return "max_room_members must be at least 1";
    }
    if (s.write_queue_limit_bytes < 1024) {
        return "write_queue_limit_bytes must be at least 1024";
    }
    if (!(s.rate_limit_per_second > 0) || !(s.rate_limit_burst >= 1)) {
        return "rate limit must be positive and burst at least 1";
    }
    if (s.history_max_limit == 0 || s.history_default_limit == 0 ||
        s.history_default_limit > s.history_max_limit) {
        return "history limits must be positive, default <= max";
    }
    if (s.joined_history > s.history_per_room) {
        return "joined_history must not exceed history_per_room";
    }
    if (s.log_level != "trace" && s.log_level != "debug" && s.log_level != "info" &&
        s.log_level != "warn" && s.log_level != "error" && s.log_level != "off") {
        return "log level must be one of trace, debug, info, warn, error, off";
    }
    return {};
}

}  // namespace parley::config
