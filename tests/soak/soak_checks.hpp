#pragma once

// The soak's assertions about the hostile phase: that each hostile behaviour met the server
// action it provokes, and that the daemon's own counters agree with what the clients saw.

#include "metrics_scrape.hpp"
#include "tally.hpp"
#include "verdict.hpp"

#include <cstddef>

namespace parley::soak {

// What the hostile clients saw: each behaviour reached the limit it aims at at least once,
// and no answer was wrong (a wrong status or close code, a connection the server never closed).
void check_hostile_outcomes(const tally& counts, verdict& v);

// The daemon's counters after the run: at least what the hostile clients saw of each action.
void check_server_counters(const metrics_snapshot& m, const tally& counts, verdict& v);

// The daemon once the hostile clients are gone: only the well-behaved clients remain.
void check_settled(const metrics_snapshot& m, std::size_t good_clients, std::size_t rooms, verdict& v);

}  // namespace parley::soak
