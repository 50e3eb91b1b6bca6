// Fuzz target: protocol::frame_parser on arbitrary client bytes.
//
// The input is the byte stream a client sends after the handshake. It is parsed several times:
// in one piece, one byte at a time and in pseudo-random pieces (seeded from the input), each with
// the production limit of 64 KiB and with a small one. Checked:
// - what the sink receives obeys the parser's contract: text is valid UTF-8 (by a validator
//   independent of protocol/utf8) and within the limit; control payloads are at most 125 bytes;
//   a close carries 1005 with no reason or a code a peer may send with a UTF-8 reason; nothing
//   follows a close;
// - the split does not matter: every way of cutting the stream yields the same events and the
//   same result;
// - the small limit changes nothing but where the stream ends: its events are a prefix of the
//   large limit's, and only a 1009 (message too big) may cut them short;
// - after an error or a close, further bytes deliver nothing and the result stays the same;
// - with the limit switched between pieces (a reload), the sink's checks still hold;
// - all of the above once more with compressed messages allowed (permessage-deflate): RSV1
//   messages are inflated, within the limit, and still yield valid UTF-8 however split.
// Not covered here: what the connection does with the events (the connection target).

#include "protocol/frame_parser.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace parley::fuzz {
namespace {

using protocol::frame_parser;
using protocol::parse_result;

constexpr std::size_t large_limit = 64 * 1024;  // the default max_message_bytes
constexpr std::size_t small_limit = 40;         // small enough for short inputs to cross it

struct event {
    char kind;  // 't' text, 'i' ping, 'o' pong, 'c' close
    std::uint16_t code;
    std::string bytes;
    bool operator==(const event&) const = default;
};

// A peer may put these codes in a close frame (RFC 6455 section 7.4).
bool sendable_close_code(std::uint16_t code) {
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
}

class checking_sink final : public protocol::frame_sink {
public:
    explicit checking_sink(std::size_t limit) : limit_(limit) {}

    void on_text(std::string_view message) override {
        require(!closed_, "text delivered after a close");
        require(message.size() <= limit_, "text message over the limit");
        require(is_utf8(message), "text message is not valid UTF-8");
        events.push_back({'t', 0, std::string(message)});
    }
    void on_ping(std::string_view payload) override {
        require(!closed_, "ping delivered after a close");
        require(payload.size() <= 125, "ping payload over 125 bytes");
        events.push_back({'i', 0, std::string(payload)});
    }
    void on_pong(std::string_view payload) override {
        require(!closed_, "pong delivered after a close");
        require(payload.size() <= 125, "pong payload over 125 bytes");
        events.push_back({'o', 0, std::string(payload)});
    }
    void on_close(std::uint16_t code, std::string_view reason) override {
        require(!closed_, "second close delivered");
        if (code == 1005) {
            require(reason.empty(), "close without a code but with a reason");
        } else {
            require(sendable_close_code(code), "close code a peer may not send was accepted");
        }
        require(reason.size() <= 123, "close reason over 123 bytes");
        require(is_utf8(reason), "close reason is not valid UTF-8");
        closed_ = true;
        events.push_back({'c', code, std::string(reason)});
    }

    std::vector<event> events;

private:
    std::size_t limit_;
    bool closed_ = false;
};

struct outcome {
    std::vector<event> events;
    parse_result result;
    bool closed = false;
};

bool same_result(const parse_result& a, const parse_result& b) {
    return a.ok == b.ok && a.code == b.code && std::string_view(a.reason) == std::string_view(b.reason);
}

// Feeds the stream in the given pieces (copied: the parser unmasks in place), stopping once the
// parser has failed, then checks that the parser stays where it stopped.
outcome parse(std::string_view stream, const std::vector<std::size_t>& pieces, std::size_t limit, bool compressed) {
    frame_parser parser(limit);
    if (compressed) {
        parser.allow_compressed();
    }
    checking_sink sink(limit);
    std::string bytes(stream);
    parse_result result;
    std::size_t offset = 0;
    for (std::size_t piece : pieces) {
        result = parser.feed(bytes.data() + offset, piece, sink);
        offset += piece;
        if (!result.ok) {
            break;
        }
    }
    if (pieces.empty()) {
        result = parser.feed(bytes.data(), 0, sink);
    }
    require(result.ok || !parser.closed(), "a parser that failed also reports a close frame");
    if (!result.ok || parser.closed()) {
        const std::size_t delivered = sink.events.size();
        std::string more("\x81\x80\0\0\0\0", 6);  // an empty, masked text frame: valid on its own
        const parse_result again = parser.feed(more.data(), more.size(), sink);
        require(sink.events.size() == delivered, "a stopped parser delivered more");
        require(same_result(again, result), "a stopped parser changed its result");
    }
    return {std::move(sink.events), result, parser.closed()};
}

void require_same(const outcome& a, const outcome& b, std::string_view what) {
    require(a.events == b.events, what, "events differ");
    require(same_result(a.result, b.result), what, "results differ");
    require(a.closed == b.closed, what, "closed() differs");
}

// A reload may change the limit between any two reads (ws_connection sets it before each feed).
// Which messages then pass depends on when, so only the sink's own checks apply, against the
// larger limit.
void parse_with_reloads(std::string_view stream, bool compressed) {
    frame_parser parser(large_limit);
    if (compressed) {
        parser.allow_compressed();
    }
    checking_sink sink(large_limit);
    std::string bytes(stream);
    split_rng rng(hash_bytes(stream) + 1);
    std::size_t offset = 0;
    for (std::size_t piece : random_splits(stream.size(), rng)) {
        parser.set_max_message(rng.below(2) == 0 ? small_limit : large_limit);
        if (!parser.feed(bytes.data() + offset, piece, sink).ok) {
            return;
        }
        offset += piece;
    }
}

outcome parse_every_way(std::string_view stream, std::size_t limit, bool compressed) {
    const outcome whole =
        parse(stream, stream.empty() ? std::vector<std::size_t>{} : std::vector{stream.size()}, limit, compressed);
    const outcome bytewise = parse(stream, std::vector<std::size_t>(stream.size(), 1), limit, compressed);
    require_same(whole, bytewise, "one piece and one byte at a time disagree");
    split_rng rng(hash_bytes(stream) ^ limit);
    const outcome random = parse(stream, random_splits(stream.size(), rng), limit, compressed);
    require_same(whole, random, "one piece and random pieces disagree");
    return whole;
}

}  // namespace
}  // namespace parley::fuzz

namespace parley::fuzz {
namespace {

void check_limits(std::string_view stream, bool compressed) {
    const outcome large = parse_every_way(stream, large_limit, compressed);
    const outcome small = parse_every_way(stream, small_limit, compressed);
    parse_with_reloads(stream, compressed);

    require(small.events.size() <= large.events.size(), "the small limit delivered more events");
    for (std::size_t i = 0; i < small.events.size(); ++i) {
        require(small.events[i] == large.events[i], "the small limit changed an event");
    }
    const bool cut_short = !small.result.ok && small.result.code == parley::protocol::close_code::message_too_big;
    if (!cut_short) {
        require(small.events.size() == large.events.size(), "the limits disagree without a 1009");
        require(same_result(small.result, large.result), "the limits disagree on the result without a 1009");
    }
}

}  // namespace
}  // namespace parley::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace parley::fuzz;
    const std::string_view stream(reinterpret_cast<const char*>(data), size);
    check_limits(stream, false);
    check_limits(stream, true);
    return 0;
}
