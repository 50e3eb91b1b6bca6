#pragma once

#include <chrono>
#include <cstdint>

namespace parley::rooms {

// Wall-clock milliseconds since the Unix epoch: message timestamps, history epochs and the
// age cut-offs of retention all use this one clock.
inline std::int64_t unix_millis() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace parley::rooms
