// Fuzz target: a whole client connection, from the HTTP upgrade request through WebSocket frames
// to the chat logic, with the socket replaced by buffers. What runs, what is checked and what is
// left out: connection_harness.hpp.

#include "tests/fuzz/connection_harness.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    parley::fuzz::run_connection({reinterpret_cast<const char*>(data), size});
    return 0;
}
