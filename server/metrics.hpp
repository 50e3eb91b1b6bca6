#pragma once

#include "rooms/cluster_link.hpp"
#include "rooms/history/history_store.hpp"
#include "rooms/worker_counters.hpp"
#include "server/http_counters.hpp"
#include "server/process_stats.hpp"
#include "server/webhooks/webhook_counters.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::server {

// What one /metrics scrape reports besides the process itself.
struct metrics_input {
    std::vector<const rooms::worker_counters*> workers;  // summed field by field
    std::vector<const http_counters*> http;              // the same workers' HTTP counters, summed
    std::uint64_t users = 0;                             // logged-in users (registry size)
    std::uint64_t rooms = 0;                             // rooms that exist
    rooms::history_stats history;                        // the history store's writing
    std::optional<rooms::cluster_health> cluster;        // none on a single node
    bool ready = true;                                   // false during shutdown
    std::string_view version;                            // parley_build_info{version=...}
    const process_stats* process = nullptr;              // null: read_process_stats() now
    const webhook_counters* webhooks = nullptr;          // null: all zero
};

// Renders every metric in the Prometheus text exposition format 0.0.4 (serve it as
// `text/plain; version=0.0.4; charset=utf-8`). The metrics are declared once, in a table in
// metrics.cpp; this walks it. Labelled families print every label value, zeros included, so
// rate() works from the first scrape. Any thread: it only loads the workers' counters (relaxed),
// which keep counting meanwhile, so families read a moment apart may disagree by a few events.
// A process value that cannot be read is left out. Never throws except std::bad_alloc.
std::string render_metrics(const metrics_input& in);

// The label values used for parley_connections_rejected_total{reason=...} and
// parley_handshake_failures_total{reason=...}; also fine in log lines.
std::string_view label(reject_reason reason);
std::string_view label(handshake_failure failure);

}  // namespace parley::server
