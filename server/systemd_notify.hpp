#pragma once

#include <string_view>

// Readiness and state notifications to the service manager (sd_notify, for a unit with
// Type=notify or Type=notify-reload). Each call sends one datagram to the socket named by
// NOTIFY_SOCKET and does nothing when that variable is unset (started by hand, in Docker, by
// the tests). Failures to send are ignored: the daemon runs the same with or without systemd.
namespace parley::server::systemd {

// The daemon listens and serves: READY=1, with a one-line STATUS. Also sent again once a
// reload has finished, which ends the RELOADING state.
void ready(std::string_view status);

// A reload (SIGHUP) has started: RELOADING=1 with MONOTONIC_USEC, the CLOCK_MONOTONIC time in
// microseconds that Type=notify-reload matches against its own reload request.
void reloading();

// A graceful shutdown has started: STOPPING=1.
void stopping();

// Free-form state shown by `systemctl status`: STATUS=<text>.
void status(std::string_view text);

}  // namespace parley::server::systemd
