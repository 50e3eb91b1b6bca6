#include "soak_config.hpp"

#include <sstream>

namespace parley::soak {

std::string daemon_config(const soak_limits& l) {
    std::ostringstream out;
    out << "[server]\n"
        << "handshake_timeout_ms = " << l.handshake_timeout.count() << "\n"
        << "max_request_header_bytes = " << l.max_request_header_bytes << "\n"
        << "[limits]\n"
        << "max_connections = " << l.max_connections << "\n"
        << "max_connections_per_ip = " << l.max_connections_per_ip << "\n"
        << "max_message_bytes = " << l.max_message_bytes << "\n"
        << "max_text_bytes = " << l.max_text_bytes << "\n"
        << "write_queue_limit_bytes = " << l.write_queue_limit_bytes << "\n"
        << "rate_limit_per_second = " << l.rate_per_second << "\n"
        << "rate_limit_burst = " << l.rate_burst << "\n"
        << "rate_limit_strikes = " << l.rate_strikes << "\n"
        << "login_timeout_ms = " << l.login_timeout.count() << "\n"
        << "idle_timeout_ms = " << l.idle_timeout.count() << "\n"
        << "ping_interval_ms = " << l.ping_interval.count() << "\n"
        << "[rooms]\n"
        << "history_per_room = " << l.history_per_room << "\n"
        << "history_max_limit = " << l.history_max_limit << "\n"
        << "joined_history = 20\n"
        << "[log]\n"
        << "level = \"info\"\n";
    return out.str();
}

}  // namespace parley::soak
