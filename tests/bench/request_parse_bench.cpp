// Parsing one client request: parse_request (the hand-written reader of protocol/json_reader.hpp)
// against the nlohmann::json implementation it replaced (kept in tests/unit/protocol as the
// differential test's reference), on the messages a chat mostly carries.
//
//   say/new, say/reference       {"type":"say","room":"r42","text":"hello world t=1234567890123","id":17}
//   login/new, login/reference   {"type":"login","user":"user_1234","token":"s3cr3t-t0k3n","id":"l1"}
//   say_escaped/...              a say whose text has escapes and multi-byte UTF-8 (the slower path)
//
// Each iteration parses one message into a complete result (request strings included) and drops
// it. items_per_second is messages parsed per second.

#include "protocol/request.hpp"
#include "tests/unit/protocol/request_reference.hpp"

#include <benchmark/benchmark.h>

#include <string_view>

namespace {

constexpr std::string_view say_message = R"({"type":"say","room":"r42","text":"hello world t=1234567890123","id":17})";
constexpr std::string_view login_message = R"({"type":"login","user":"user_1234","token":"s3cr3t-t0k3n","id":"l1"})";
constexpr std::string_view say_escaped_message =
    R"({"type":"say","room":"r42","text":"caf\u00e9 \"quoted\"\n\u2192 d\u00e9j\u00e0 vu \ud83d\ude00 fin","id":18})";

template <typename Parse>
void run(benchmark::State& state, std::string_view message, Parse parse) {
    if (!parse(message).value) {
        state.SkipWithError("the message does not parse");
        return;
    }
    for (auto _ : state) {
        auto result = parse(message);
        benchmark::DoNotOptimize(result);
    }
    state.SetItemsProcessed(state.iterations());
}

const auto parse_new = [](std::string_view text) { return parley::protocol::parse_request(text); };
const auto parse_reference = [](std::string_view text) {
    return parley::protocol::reference::parse_request_reference(text);
};

void say_new(benchmark::State& state) { run(state, say_message, parse_new); }
void say_reference(benchmark::State& state) { run(state, say_message, parse_reference); }
void login_new(benchmark::State& state) { run(state, login_message, parse_new); }
void login_reference(benchmark::State& state) { run(state, login_message, parse_reference); }
void say_escaped_new(benchmark::State& state) { run(state, say_escaped_message, parse_new); }
void say_escaped_reference(benchmark::State& state) { run(state, say_escaped_message, parse_reference); }

BENCHMARK(say_new)->Name("say/new");
BENCHMARK(say_reference)->Name("say/reference");
BENCHMARK(login_new)->Name("login/new");
BENCHMARK(login_reference)->Name("login/reference");
BENCHMARK(say_escaped_new)->Name("say_escaped/new");
BENCHMARK(say_escaped_reference)->Name("say_escaped/reference");

}  // namespace
