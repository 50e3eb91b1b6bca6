// Encoding the frames a room broadcasts, with the encoders of protocol/server_messages.hpp: what
// one encode costs, which is what the room pays ONCE per broadcast (and what a design that
// encodes per member would pay per member, see design_bench.cpp).
//
//   message/short_line         a `message` frame for a typical chat line (about 40 bytes of text)
//   message/1KiB_escapes       a `message` frame for a 1,024-byte line in which about one byte in
//                              seven needs a JSON escape (quotes, backslashes, newlines, tabs, a
//                              control character) and some are multi-byte UTF-8
//   message/1KiB_plain         the same length with nothing to escape: the difference to the line
//                              above is the cost of the escapes alone
//   presence/join              a `presence` frame (a join announced to a room)
//
// Each iteration makes one complete frame (header and JSON payload, in its own shared buffer) and
// drops it. items_per_second is frames made per second; bytes_per_second counts the bytes of the
// frames made (output, header included). frame_bytes and text_bytes give the sizes.

#include "protocol/server_messages.hpp"
#include "tests/bench/bench_support.hpp"

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using parley::protocol::shared_frame;

constexpr std::string_view room_name = "general";
constexpr std::string_view sender = "alice_w";
constexpr std::int64_t first_seq = 123'456;
constexpr std::int64_t timestamp = 1'764'460'800'123;
constexpr std::size_t long_line_bytes = 1024;

// Repeats `pattern` and pads with spaces to exactly long_line_bytes, never cutting a multi-byte
// UTF-8 character (the encoder requires valid UTF-8, as the frame parser guarantees).
std::string line_of(std::string_view pattern) {
    std::string line;
    while (line.size() + pattern.size() <= long_line_bytes) {
        line.append(pattern);
    }
    line.append(long_line_bytes - line.size(), ' ');
    return line;
}

// 64 bytes (16 copies make the line), 9 of them escaped on the wire: 2 quotes, 2 backslashes, a
// tab, a newline, a carriage return, a 0x01 control character and a form feed; the two multi-byte
// characters (an accented letter and a check mark) are valid UTF-8 and need no escape.
const std::string& escaped_line() {
    static const std::string line =
        line_of("say \"hi\" to C:\\tmp\\log\tthen\nrun it\r\x01 caf\xc3\xa9 ok \xe2\x9c\x93\f all good, bye");
    return line;
}

const std::string& plain_line() {
    static const std::string line = line_of("the deploy finished and the error rate is back to normal now. ");
    return line;
}

std::size_t escaped_chars(std::string_view text) {
    std::size_t n = 0;
    for (char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        n += c < 0x20 || c == '"' || c == '\\';
    }
    return n;
}

void report(benchmark::State& state, std::size_t frame_bytes, std::size_t text_bytes) {
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * frame_bytes));
    state.counters["frame_bytes"] = static_cast<double>(frame_bytes);
    state.counters["text_bytes"] = static_cast<double>(text_bytes);
}

void encode_message(benchmark::State& state, std::string_view text) {
    std::int64_t seq = first_seq;
    std::size_t frame_bytes = 0;
    for (auto _ : state) {
        // A fresh seq each time, as a room's successive messages have.
        shared_frame frame = parley::protocol::encode_message(room_name, sender, text, ++seq, timestamp);
        frame_bytes = frame.size();
        benchmark::DoNotOptimize(frame.data());
    }
    report(state, frame_bytes, text.size());
    state.counters["escaped_chars"] = static_cast<double>(escaped_chars(text));
}

void message_short_line(benchmark::State& state) { encode_message(state, parley::bench::chat_lines[0]); }
void message_1kib_escapes(benchmark::State& state) { encode_message(state, escaped_line()); }
void message_1kib_plain(benchmark::State& state) { encode_message(state, plain_line()); }

void presence_join(benchmark::State& state) {
    std::size_t frame_bytes = 0;
    for (auto _ : state) {
        shared_frame frame = parley::protocol::encode_presence(room_name, sender, true);
        frame_bytes = frame.size();
        benchmark::DoNotOptimize(frame.data());
    }
    report(state, frame_bytes, sender.size());
}

BENCHMARK(message_short_line)->Name("message/short_line");
BENCHMARK(message_1kib_escapes)->Name("message/1KiB_escapes");
BENCHMARK(message_1kib_plain)->Name("message/1KiB_plain");
BENCHMARK(presence_join)->Name("presence/join");

}  // namespace
