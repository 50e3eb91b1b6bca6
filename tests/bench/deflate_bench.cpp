// permessage-deflate's cost per message (protocol/message_deflate.hpp), which a room pays once
// per broadcast when any member negotiated compression, and a worker once per compressed client
// message.
//
//   twin/<text bytes>     frame_for_deflate on a fresh `message` frame: compressing it and
//                         attaching the compressed twin (what the first compressed member pays;
//                         every later member only takes a reference)
//   shared/<text bytes>   frame_for_deflate on a frame whose twin exists: what every other
//                         compressed member pays
//   inflate/<text bytes>  inflate_message on a compressed `say` request of that text size
//
// Texts are chat-like words. Counters: frame_bytes and twin_bytes (payload sizes, plain and
// compressed); items_per_second is messages per second.

#include "protocol/frame_encoder.hpp"
#include "protocol/message_deflate.hpp"
#include "protocol/server_messages.hpp"
#include "tests/chat_like_text.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

namespace {

using parley::protocol::shared_frame;

std::string chat_text(std::size_t size) { return parley::tests::chat_like_text(size); }

void twin(benchmark::State& state) {
    const std::string text = chat_text(static_cast<std::size_t>(state.range(0)));
    std::int64_t seq = 1000;
    std::size_t plain_bytes = 0, twin_bytes = 0;
    for (auto _ : state) {
        shared_frame frame = parley::protocol::encode_message("general", "alice_w", text, ++seq, 1'764'460'800'123);
        shared_frame compressed = parley::protocol::frame_for_deflate(frame, 0, 15);
        plain_bytes = frame.size();
        twin_bytes = compressed.size();
        benchmark::DoNotOptimize(compressed.data());
    }
    state.counters["frame_bytes"] = static_cast<double>(plain_bytes);
    state.counters["twin_bytes"] = static_cast<double>(twin_bytes);
    state.SetItemsProcessed(state.iterations());
}

void shared(benchmark::State& state) {
    const std::string text = chat_text(static_cast<std::size_t>(state.range(0)));
    shared_frame frame = parley::protocol::encode_message("general", "alice_w", text, 1, 1'764'460'800'123);
    parley::protocol::frame_for_deflate(frame, 0, 15);
    for (auto _ : state) {
        shared_frame compressed = parley::protocol::frame_for_deflate(frame, 0, 15);
        benchmark::DoNotOptimize(compressed.data());
    }
    state.SetItemsProcessed(state.iterations());
}

void inflate(benchmark::State& state) {
    const std::string text = chat_text(static_cast<std::size_t>(state.range(0)));
    const std::string request = R"({"type":"say","room":"general","id":"42","text":")" + text + "\"}";
    std::string compressed;
    parley::protocol::deflate_message(request, compressed);
    for (auto _ : state) {
        std::string_view out;
        benchmark::DoNotOptimize(parley::protocol::inflate_message(compressed, 64 * 1024, out));
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["request_bytes"] = static_cast<double>(request.size());
    state.counters["compressed_bytes"] = static_cast<double>(compressed.size());
    state.SetItemsProcessed(state.iterations());
}

BENCHMARK(twin)->Arg(40)->Arg(200)->Arg(1000)->Arg(4000);
BENCHMARK(shared)->Arg(200);
BENCHMARK(inflate)->Arg(40)->Arg(200)->Arg(1000)->Arg(4000);

}  // namespace
