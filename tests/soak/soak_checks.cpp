#include "soak_checks.hpp"

#include <string>
#include <utility>

namespace parley::soak {

namespace {

std::string described(std::string_view behaviour, std::string_view outcome, std::uint64_t value) {
    std::string text(behaviour);
    text.append(": ");
    text.append(outcome);
    text.append(" = ");
    text.append(std::to_string(value));
    return text;
}

void at_least_once(const tally& t, verdict& v, std::string_view behaviour, std::string_view outcome) {
    const std::uint64_t n = t.get(behaviour, outcome);
    v.require(n > 0, described(behaviour, outcome, n) + " (expected at least once)");
}

void never(const tally& t, verdict& v, std::string_view behaviour, std::string_view outcome) {
    const std::uint64_t n = t.get(behaviour, outcome);
    v.require(n == 0, described(behaviour, outcome, n) + " (expected never)");
}

// The server's count of an action must cover every instance a client saw of it.
void server_covers(verdict& v, const std::string& series, double server, std::uint64_t seen) {
    std::string text = series;
    text.append(" = ");
    text.append(std::to_string(static_cast<std::uint64_t>(server)));
    text.append(", clients saw ");
    text.append(std::to_string(seen));
    text.append(" (expected at least that, and at least 1)");
    v.require(seen > 0 && server >= static_cast<double>(seen), text);
}

}  // namespace

void check_hostile_outcomes(const tally& t, verdict& v) {
    for (std::string_view stall : {"stall_before_request", "stall_mid_request", "drip_request"}) {
        at_least_once(t, v, stall, "closed_by_server");
        never(t, v, stall, "still_open");
        never(t, v, stall, "closed_early");
    }
    at_least_once(t, v, "garbage_http", "http_400");
    never(t, v, "garbage_http", "still_open");

    at_least_once(t, v, "bad_upgrade", "version_12 http_426");
    at_least_once(t, v, "bad_upgrade", "no_key http_400");
    at_least_once(t, v, "bad_upgrade", "huge_header http_431");
    never(t, v, "bad_upgrade", "wrong_status");

    at_least_once(t, v, "per_ip_hog", "http_101");
    at_least_once(t, v, "per_ip_hog", "http_503");
    at_least_once(t, v, "per_ip_hog", "upgraded close_1008");
    never(t, v, "per_ip_hog", "upgraded close_none");

    at_least_once(t, v, "bad_frames", "unmasked close_1002");
    at_least_once(t, v, "bad_frames", "binary close_1003");
    at_least_once(t, v, "bad_frames", "invalid_utf8 close_1007");
    at_least_once(t, v, "bad_frames", "invalid_utf8_split close_1007");
    at_least_once(t, v, "bad_frames", "oversize_header close_1009");
    at_least_once(t, v, "bad_frames", "oversize_fragments close_1009");
    never(t, v, "bad_frames", "wrong_close_code");

    at_least_once(t, v, "bad_requests", "error_bad_json");
    at_least_once(t, v, "bad_requests", "error_bad_request");
    at_least_once(t, v, "bad_requests", "error_unknown_type");
    at_least_once(t, v, "bad_requests", "still_usable");
    at_least_once(t, v, "bad_requests", "goodbye close_1000");
    never(t, v, "bad_requests", "unusable");
    never(t, v, "bad_requests", "no_reply");

    at_least_once(t, v, "flood", "rate_limited_replies");
    at_least_once(t, v, "flood", "close_1008");
    never(t, v, "flood", "close_none");

    at_least_once(t, v, "slow_consumer", "server_hung_up");
    never(t, v, "slow_consumer", "still_open");

    at_least_once(t, v, "silent", "never_logged_in close_1008");
    at_least_once(t, v, "silent", "logged_in_then_silent close_1001");
    never(t, v, "silent", "never_logged_in close_none");
    never(t, v, "silent", "logged_in_then_silent close_none");

    for (std::string_view variant : {"mid_request", "after_upgrade", "mid_frame", "mid_fragmented_message",
                                     "mid_reply", "after_say"}) {
        at_least_once(t, v, "reset", variant);
    }
    at_least_once(t, v, "connect_close", "reset");
    at_least_once(t, v, "connect_close", "closed");
}

void check_server_counters(const metrics_snapshot& m, const tally& t, verdict& v) {
    const std::uint64_t stalled = t.get("stall_before_request", "closed_by_server") +
                                  t.get("stall_mid_request", "closed_by_server") +
                                  t.get("drip_request", "closed_by_server");
    server_covers(v, "parley_handshake_failures_total{reason=\"timeout\"}",
                  m.get("parley_handshake_failures_total", "reason", "timeout"), stalled);
    server_covers(v, "parley_handshake_failures_total{reason=\"bad_request\"}",
                  m.get("parley_handshake_failures_total", "reason", "bad_request"),
                  t.get("garbage_http", "http_400") + t.sum("bad_upgrade", "no_key http_400") +
                      t.sum("bad_upgrade", "short_key http_400") + t.sum("bad_upgrade", "post http_400") +
                      t.sum("bad_upgrade", "http_1_0 http_400"));
    server_covers(v, "parley_handshake_failures_total{reason=\"upgrade_required\"}",
                  m.get("parley_handshake_failures_total", "reason", "upgrade_required"),
                  t.get("bad_upgrade", "version_12 http_426"));
    server_covers(v, "parley_handshake_failures_total{reason=\"header_too_large\"}",
                  m.get("parley_handshake_failures_total", "reason", "header_too_large"),
                  t.get("bad_upgrade", "huge_header http_431"));
    // Exactly the hog's refusals: every other behaviour stays far below the per-address limit
    // unless the server holds on to connections their clients already closed.
    const double per_ip = m.get("parley_connections_rejected_total", "reason", "max_connections_per_ip");
    const std::uint64_t hog_refused = t.get("per_ip_hog", "http_503");
    v.require(hog_refused > 0 && per_ip == static_cast<double>(hog_refused),
              "parley_connections_rejected_total{reason=\"max_connections_per_ip\"} = " +
                  std::to_string(static_cast<std::uint64_t>(per_ip)) + ", per_ip_hog saw " +
                  std::to_string(hog_refused) + " (expected exactly that: nobody else passes the limit)");
    server_covers(v, "parley_slow_consumer_closes_total", m.get("parley_slow_consumer_closes_total"),
                  t.get("slow_consumer", "server_hung_up"));
    server_covers(v, "parley_idle_closes_total", m.get("parley_idle_closes_total"),
                  t.get("silent", "never_logged_in close_1008") + t.get("silent", "logged_in_then_silent close_1001") +
                      t.get("per_ip_hog", "upgraded close_1008"));
    server_covers(v, "parley_errors_total{code=\"rate_limited\"}", m.get("parley_errors_total", "code", "rate_limited"),
                  t.get("flood", "rate_limited_replies"));
    server_covers(v, "parley_errors_total{code=\"bad_json\"}", m.get("parley_errors_total", "code", "bad_json"),
                  t.get("bad_requests", "error_bad_json"));
}

void check_settled(const metrics_snapshot& m, std::size_t good_clients, std::size_t rooms, verdict& v) {
    const auto good = static_cast<double>(good_clients);
    v.require(m.get("parley_connections") == good,
              "parley_connections = " + std::to_string(static_cast<long>(m.get("parley_connections"))) +
                  " (expected the " + std::to_string(good_clients) + " well-behaved clients)");
    v.require(m.get("parley_users") == good,
              "parley_users = " + std::to_string(static_cast<long>(m.get("parley_users"))) + " (expected " +
                  std::to_string(good_clients) + ")");
    v.require(m.get("parley_rooms") == static_cast<double>(rooms),
              "parley_rooms = " + std::to_string(static_cast<long>(m.get("parley_rooms"))) + " (expected " +
                  std::to_string(rooms) + ")");
    // The gauge rises by what is queued and falls by what is written or dropped; a drop that
    // forgot to subtract (a reset mid-reply, a slow consumer's discarded queue) would leave a
    // residue here. The good clients' own traffic keeps a few frames in flight at most.
    const double queued = m.get("parley_write_queue_bytes");
    v.require(queued < 65536, "parley_write_queue_bytes = " + std::to_string(static_cast<long>(queued)) +
                                  " (expected below 64 KiB: only the good clients' frames in flight)");
}

}  // namespace parley::soak
