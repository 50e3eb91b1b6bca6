#pragma once

#include <atomic>
#include <cstdint>

namespace parley::server {

// The webhook sender's figures for /metrics. Written by the sender (and by workers queueing
// events), read by any scrape.
struct webhook_counters {
    std::atomic<std::uint64_t> queued{0};     // events waiting for a receiver now (a gauge)
    std::atomic<std::uint64_t> delivered{0};  // events in batches a receiver accepted (2xx)
    std::atomic<std::uint64_t> batches{0};    // batches a receiver accepted
    std::atomic<std::uint64_t> retries{0};    // batch sends that failed (error, timeout, non-2xx) and are sent again
    std::atomic<std::uint64_t> dropped{0};    // events lost: a full queue, a receiver a reload removed, shutdown
};

}  // namespace parley::server
