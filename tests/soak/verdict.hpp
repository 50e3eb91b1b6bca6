#pragma once

#include <cstdio>
#include <string>

namespace parley::soak {

// The soak's assertions: each is printed as it is checked, and the run fails if any failed.
// Thread: the main thread only.
class verdict {
public:
    // Records one assertion; returns ok so callers can add detail on failure.
    bool require(bool ok, const std::string& what) {
        std::printf("  %s  %s\n", ok ? "ok  " : "FAIL", what.c_str());
        std::fflush(stdout);
        if (!ok) {
            ++failures_;
        }
        return ok;
    }
    int failures() const { return failures_; }

private:
    int failures_ = 0;
};

}  // namespace parley::soak
