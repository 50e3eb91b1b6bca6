#pragma once

// Running parleyd by hand, for the commands that exit (--check-config, --cluster-rebalance) and
// start-up failures.

#include <chrono>
#include <string>
#include <vector>

namespace parley::integration {

struct run_result {
    bool exited = false;
    int code = -1;
    bool timed_out = false;
    std::string output;  // stdout and stderr together
};

// Runs the daemon with args and waits up to timeout for it to exit (then SIGKILL).
run_result run_parleyd(std::vector<std::string> args,
                       std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));

}  // namespace parley::integration
