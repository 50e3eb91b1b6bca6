#include "server/heap_return.hpp"

#include <malloc.h>

namespace parley::server {

bool heap_return::tick(std::uint64_t evicted_bytes, std::chrono::steady_clock::time_point now) {
    const std::uint64_t freed = evicted_bytes - trimmed_at_;
    const bool quiet = evicted_bytes == previous_tick_;
    previous_tick_ = evicted_bytes;
    if ((freed < min_freed_bytes && !(quiet && freed >= quiet_freed_bytes)) || now - last_ < min_interval) {
        return false;
    }
    ::malloc_trim(0);
    trimmed_at_ = evicted_bytes;
    last_ = now;
    return true;
}

}  // namespace parley::server
