#include "server/systemd_notify.hpp"

#include <systemd/sd-daemon.h>

#include <ctime>
#include <string>

namespace parley::server::systemd {
namespace {

// The protocol is newline-separated assignments, so a status must stay on one line.
std::string one_line(std::string_view text) {
    std::string line(text);
    for (char& c : line) {
        if (c == '\n' || c == '\r') {
            c = ' ';
        }
    }
    return line;
}

void send(const std::string& message) {
    // 0: keep NOTIFY_SOCKET in the environment, later calls need it too.
    (void)sd_notify(0, message.c_str());
}

}  // namespace

void ready(std::string_view status) {
    std::string message = "READY=1";
    if (!status.empty()) {
        message += "\nSTATUS=" + one_line(status);
    }
    send(message);
}

void reloading() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    auto usec = static_cast<unsigned long long>(now.tv_sec) * 1000000ULL +
                static_cast<unsigned long long>(now.tv_nsec) / 1000ULL;
    send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

void stopping() { send("STOPPING=1"); }

void status(std::string_view text) { send("STATUS=" + one_line(text)); }

}  // namespace parley::server::systemd
