#include "protocol/frame_parser.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <ostream>
#include <random>
#include <string>
#include <vector>

// Counts live heap blocks in this test binary, so a test can prove that a parser gives its
// memory back once idle.
namespace {
std::atomic<long> live_blocks{0};
std::atomic<long> blocks_allocated{0};
}

void* operator new(std::size_t size) {
    void* p = std::malloc(size == 0 ? 1 : size);
    if (p == nullptr) {
        throw std::bad_alloc{};
    }
    live_blocks.fetch_add(1, std::memory_order_relaxed);
    blocks_allocated.fetch_add(1, std::memory_order_relaxed);
    return p;
}

void operator delete(void* p) noexcept {
    if (p != nullptr) {
        live_blocks.fetch_sub(1, std::memory_order_relaxed);
        std::free(p);
    }
}

void operator delete(void* p, std::size_t) noexcept {
    ::operator delete(p);
}

namespace parley::protocol {
namespace {

using namespace std::string_literals;

constexpr std::uint8_t fin = 0x80;
constexpr std::uint8_t op_cont = 0x0;
constexpr std::uint8_t op_text = 0x1;
constexpr std::uint8_t op_binary = 0x2;
constexpr std::uint8_t op_close = 0x8;
constexpr std::uint8_t op_ping = 0x9;
constexpr std::uint8_t op_pong = 0xA;

enum class length_form { minimal, bits16, bits64 };

// Every frame gets a different mask key, high bits included, so a key applied out of step
// garbles the payload.
std::uint32_t next_key() {
    static std::uint32_t state = 0x9E3779B9u;
    state = state * 1664525u + 1013904223u;
    return state;
}

std::string header(std::uint8_t byte0, std::uint64_t length, length_form form = length_form::minimal,
                   bool masked = true, std::uint32_t key = 0) {
    std::string h;
    h.push_back(static_cast<char>(byte0));
    const char mask = masked ? '\x80' : '\0';
    if (form == length_form::minimal && length < 126) {
        h.push_back(static_cast<char>(mask | static_cast<char>(length)));
    } else if (form != length_form::bits64 && length <= 0xFFFF) {
        h.push_back(static_cast<char>(mask | 126));
        h.push_back(static_cast<char>(length >> 8));
        h.push_back(static_cast<char>(length & 0xFF));
    } else {
        h.push_back(static_cast<char>(mask | 127));
        for (int i = 7; i >= 0; --i) {
            h.push_back(static_cast<char>((length >> (8 * i)) & 0xFF));
        }
    }
    if (masked) {
        for (int i = 0; i < 4; ++i) {
            h.push_back(static_cast<char>((key >> (8 * i)) & 0xFF));
        }
    }
    return h;
}

// A client frame: header, then the payload masked with a fresh key.
std::string frame(std::uint8_t byte0, std::string_view payload, length_form form = length_form::minimal,
                  bool masked = true) {
    const std::uint32_t key = next_key();
    std::string f = header(byte0, payload.size(), form, masked, key);
    for (std::size_t i = 0; i < payload.size(); ++i) {
        const auto k = masked ? static_cast<char>((key >> (8 * (i % 4))) & 0xFF) : '\0';
        f.push_back(static_cast<char>(payload[i] ^ k));
    }
    return f;
}

std::string text(std::string_view payload) { return frame(fin | op_text, payload); }
std::string text_start(std::string_view payload) { return frame(op_text, payload); }
std::string more(std::string_view payload) { return frame(op_cont, payload); }
std::string last(std::string_view payload) { return frame(fin | op_cont, payload); }
std::string ping(std::string_view payload) { return frame(fin | op_ping, payload); }
std::string pong(std::string_view payload) { return frame(fin | op_pong, payload); }

std::string close_payload(std::uint16_t code, std::string_view reason = {}) {
    std::string p;
    p.push_back(static_cast<char>(code >> 8));
    p.push_back(static_cast<char>(code & 0xFF));
    p.append(reason);
    return p;
}

std::string close_frame(std::uint16_t code, std::string_view reason = {}) {
    return frame(fin | op_close, close_payload(code, reason));
}

struct event {
    char kind;  // 't'ext, 'i' ping, 'o' pong, 'c'lose
    std::string data;
    std::uint16_t code = 0;
    bool operator==(const event&) const = default;
};

void PrintTo(const event& e, std::ostream* os) {
    *os << e.kind << '(' << e.data.size() << " bytes";
    if (e.data.size() <= 40) {
        *os << " \"" << e.data << '"';
    }
    if (e.kind == 'c') {
        *os << ", code " << e.code;
    }
    *os << ')';
}

event text_event(std::string s) { return {'t', std::move(s)}; }
event ping_event(std::string s) { return {'i', std::move(s)}; }
event pong_event(std::string s) { return {'o', std::move(s)}; }
event close_event(std::uint16_t code, std::string reason = {}) { return {'c', std::move(reason), code}; }

struct recorder : frame_sink {
    std::vector<event> events;
    void on_text(std::string_view m) override { events.push_back(text_event(std::string{m})); }
    void on_ping(std::string_view p) override { events.push_back(ping_event(std::string{p})); }
    void on_pong(std::string_view p) override { events.push_back(pong_event(std::string{p})); }
    void on_close(std::uint16_t code, std::string_view reason) override {
        events.push_back(close_event(code, std::string{reason}));
    }
};

struct outcome {
    std::vector<event> events;
    bool ok = true;
    close_code code = close_code::normal;
    bool closed = false;
    std::string reason;  // compared between runs, not against expectations
    bool sticky = true;  // after an error or a close: same result, nothing delivered

    bool same_verdict(const outcome& o) const {
        return events == o.events && ok == o.ok && code == o.code && closed == o.closed && sticky == o.sticky;
    }
};

void PrintTo(const outcome& o, std::ostream* os) {
    *os << (o.ok ? "ok" : "error ");
    if (!o.ok) {
        *os << static_cast<int>(o.code) << " (" << o.reason << ")";
    }
    *os << (o.closed ? ", closed" : "") << (o.sticky ? "" : ", NOT STICKY") << ", events:";
    for (const auto& e : o.events) {
        *os << ' ';
        PrintTo(e, os);
    }
}

outcome ok_with(std::vector<event> events, bool closed = false) {
    outcome o;
    o.events = std::move(events);
    o.closed = closed;
    return o;
}

outcome error_with(close_code code, std::vector<event> events = {}) {
    outcome o;
    o.events = std::move(events);
    o.ok = false;
    o.code = code;
    return o;
}

// Feeds bytes in chunks of the given sizes, each chunk in a heap block of exactly its size so
// that a read past a chunk is an out-of-bounds access a checked build reports.
outcome run(const std::string& bytes, std::size_t max_message, const std::vector<std::size_t>& chunks) {
    frame_parser parser{max_message};
    recorder sink;
    outcome o;
    std::size_t offset = 0;
    bool stopped = false;
    parse_result stop_result;
    std::size_t events_at_stop = 0;
    for (std::size_t size : chunks) {
        std::unique_ptr<char[]> chunk{size == 0 ? nullptr : new char[size]};
        if (size != 0) {
            std::memcpy(chunk.get(), bytes.data() + offset, size);
        }
        offset += size;
        const parse_result r = parser.feed(chunk.get(), size, sink);
        if (stopped) {
            if (r.ok != stop_result.ok || r.code != stop_result.code ||
                std::strcmp(r.reason, stop_result.reason) != 0 || sink.events.size() != events_at_stop) {
                o.sticky = false;
            }
            continue;
        }
        o.ok = r.ok;
        o.code = r.code;
        o.reason = r.reason;
        if (!r.ok || parser.closed()) {
            stopped = true;
            stop_result = r;
            events_at_stop = sink.events.size();
        }
    }
    // Whatever comes after the end must change nothing once the parser stopped.
    if (stopped) {
        std::string extra = text("after");
        const parse_result r = parser.feed(extra.data(), extra.size(), sink);
        if (r.ok != stop_result.ok || r.code != stop_result.code || sink.events.size() != events_at_stop) {
            o.sticky = false;
        }
    }
    o.events = std::move(sink.events);
    o.closed = parser.closed();
    return o;
}

std::vector<std::size_t> whole(const std::string& bytes) { return {bytes.size()}; }

std::vector<std::size_t> byte_by_byte(const std::string& bytes) {
    return std::vector<std::size_t>(bytes.size(), 1);
}

std::vector<std::size_t> random_split(const std::string& bytes, std::uint32_t seed) {
    std::mt19937 rng{seed};
    std::vector<std::size_t> chunks;
    std::size_t left = bytes.size();
    while (left > 0) {
        std::size_t size;
        switch (rng() % 4) {
        case 0: size = rng() % 4; break;  // includes empty feeds
        case 1: size = rng() % 16; break;
        case 2: size = rng() % 300; break;
        default: size = rng() % (left + 1); break;
        }
        size = std::min(size, left);
        chunks.push_back(size);
        left -= size;
    }
    return chunks;
}

// Runs a case in one piece, byte by byte and with random splits; every way must give the
// expected verdict and exactly the same outcome as the others.
void expect_outcome(const std::string& bytes, const outcome& expected, std::size_t max_message = 1 << 20) {
    const outcome one_piece = run(bytes, max_message, whole(bytes));
    EXPECT_TRUE(one_piece.same_verdict(expected)) << "one piece:\n  got      " << testing::PrintToString(one_piece)
                                                  << "\n  expected " << testing::PrintToString(expected);
    const outcome bytewise = run(bytes, max_message, byte_by_byte(bytes));
    EXPECT_TRUE(bytewise.same_verdict(one_piece)) << "byte by byte:\n  got      " << testing::PrintToString(bytewise)
                                                  << "\n  one piece " << testing::PrintToString(one_piece);
    EXPECT_EQ(bytewise.reason, one_piece.reason);
    for (std::uint32_t seed = 1; seed <= 6; ++seed) {
        const outcome split = run(bytes, max_message, random_split(bytes, seed));
        EXPECT_TRUE(split.same_verdict(one_piece)) << "random split, seed " << seed << ":\n  got      "
                                                   << testing::PrintToString(split);
        EXPECT_EQ(split.reason, one_piece.reason) << "seed " << seed;
    }
    if (!one_piece.ok) {
        EXPECT_STRNE(one_piece.reason.c_str(), "");
    }
}

void expect_error(const std::string& bytes, close_code code, std::vector<event> before = {},
                  std::size_t max_message = 1 << 20) {
    expect_outcome(bytes, error_with(code, std::move(before)), max_message);
}

// Feeds byte by byte and returns the index of the byte whose feed() first failed, or npos.
std::size_t failing_byte(std::string bytes, std::size_t max_message = 1 << 20) {
    frame_parser parser{max_message};
    recorder sink;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (!parser.feed(&bytes[i], 1, sink).ok) {
            return i;
        }
    }
    return std::string::npos;
}

// --- well-formed traffic --------------------------------------------------------------------

TEST(FrameParser, SmallTextFrame) {
    expect_outcome(text("hello"), ok_with({text_event("hello")}));
}

TEST(FrameParser, EmptyTextFrame) {
    expect_outcome(text(""), ok_with({text_event("")}));
}

TEST(FrameParser, PayloadSizesAroundLengthEncodings) {
    for (std::size_t size : {125u, 126u, 127u, 65535u, 65536u, 70000u}) {
        SCOPED_TRACE(size);
        std::string payload(size, 'x');
        for (std::size_t i = 0; i < size; ++i) {
            payload[i] = static_cast<char>('a' + i % 26);
        }
        expect_outcome(text(payload), ok_with({text_event(payload)}));
    }
}

TEST(FrameParser, EveryPayloadLengthAtEverySplitPoint) {
    for (std::size_t size = 0; size <= 40; ++size) {
        std::string payload;
        for (std::size_t i = 0; i < size; ++i) {
            payload.push_back(static_cast<char>('A' + i % 26));
        }
        const std::string f = text(payload) + ping(payload.substr(0, size % 11));
        for (std::size_t cut = 0; cut <= f.size(); ++cut) {
            const outcome o = run(f, 1024, {cut, f.size() - cut});
            ASSERT_TRUE(o.same_verdict(ok_with({text_event(payload), ping_event(payload.substr(0, size % 11))})))
                << "size " << size << " cut " << cut << ": " << testing::PrintToString(o);
        }
    }
}

TEST(FrameParser, NonMinimalLengthEncodingsAreAccepted) {
    expect_outcome(frame(fin | op_text, "short", length_form::bits16), ok_with({text_event("short")}));
    expect_outcome(frame(fin | op_text, "short", length_form::bits64), ok_with({text_event("short")}));
    expect_outcome(frame(fin | op_text, std::string(300, 'q'), length_form::bits64),
                   ok_with({text_event(std::string(300, 'q'))}));
}

TEST(FrameParser, MultipleFramesInOneFeed) {
    const std::string bytes = text("one") + ping("p") + text("two") + pong("") + text("") + text("three");
    expect_outcome(bytes, ok_with({text_event("one"), ping_event("p"), text_event("two"), pong_event(""),
                                   text_event(""), text_event("three")}));
}

TEST(FrameParser, FragmentedMessageIsReassembled) {
    expect_outcome(text_start("Hel") + more("lo, ") + last("world"), ok_with({text_event("Hello, world")}));
}

TEST(FrameParser, FragmentsMayBeEmpty) {
    expect_outcome(text_start("") + more("") + last(""), ok_with({text_event("")}));
    expect_outcome(text_start("") + more("ab") + last(""), ok_with({text_event("ab")}));
}

TEST(FrameParser, ControlFramesBetweenFragments) {
    const std::string big_ping(125, 'P');
    const std::string bytes = text_start("first ") + ping("are you there") + more("second ") + pong("yes") +
                              ping(big_ping) + last("third") + text("next");
    expect_outcome(bytes, ok_with({ping_event("are you there"), pong_event("yes"), ping_event(big_ping),
                                   text_event("first second third"), text_event("next")}));
}

TEST(FrameParser, LargeFragmentedMessageWithPings) {
    std::string expected;
    std::string bytes;
    std::vector<event> events;
    for (int i = 0; i < 5; ++i) {
        const std::string part(1000 + i * 3000, static_cast<char>('a' + i));
        expected += part;
        bytes += (i == 0 ? text_start(part) : i == 4 ? last(part) : more(part));
        if (i < 4) {
            bytes += ping(std::to_string(i));
            events.push_back(ping_event(std::to_string(i)));
        }
    }
    events.push_back(text_event(expected));
    expect_outcome(bytes, ok_with(events));
}

TEST(FrameParser, HandsOutTextUnmaskedInPlaceWithoutCopy) {
    std::string bytes = text("first message") + text("second");
    struct where : frame_sink {
        std::vector<std::string_view> views;
        void on_text(std::string_view m) override { views.push_back(m); }
        void on_ping(std::string_view) override {}
        void on_pong(std::string_view) override {}
        void on_close(std::uint16_t, std::string_view) override {}
    } sink;
    frame_parser parser;
    ASSERT_TRUE(parser.feed(bytes.data(), bytes.size(), sink).ok);
    ASSERT_EQ(sink.views.size(), 2u);
    // Both views lie in the caller's buffer right after their headers, which now holds the
    // unmasked text.
    EXPECT_EQ(sink.views[0].data(), bytes.data() + 6);
    EXPECT_EQ(sink.views[1].data(), bytes.data() + 6 + 13 + 6);
    EXPECT_EQ(bytes.substr(6, 13), "first message");
    EXPECT_EQ(bytes.substr(25, 6), "second");
}

TEST(FrameParser, ZeroCopyAlsoWhenOnlyTheHeaderSpannedFeeds) {
    std::string bytes = text("payload here");
    struct where : frame_sink {
        std::string_view view;
        void on_text(std::string_view m) override { view = m; }
        void on_ping(std::string_view) override {}
        void on_pong(std::string_view) override {}
        void on_close(std::uint16_t, std::string_view) override {}
    } sink;
    frame_parser parser;
    ASSERT_TRUE(parser.feed(bytes.data(), 3, sink).ok);
    ASSERT_TRUE(parser.feed(bytes.data() + 3, bytes.size() - 3, sink).ok);
    EXPECT_EQ(sink.view, "payload here");
    EXPECT_EQ(sink.view.data(), bytes.data() + 6);
}

// --- close frames -----------------------------------------------------------------------------

TEST(FrameParser, EmptyCloseReportsNoStatus) {
    expect_outcome(frame(fin | op_close, ""), ok_with({close_event(1005)}, true));
}

TEST(FrameParser, CloseWithCodeAndReason) {
    expect_outcome(close_frame(1000, "bye"), ok_with({close_event(1000, "bye")}, true));
    expect_outcome(close_frame(1001, "κόσμε"), ok_with({close_event(1001, "κόσμε")}, true));
    const std::string reason(123, 'r');
    expect_outcome(close_frame(4000, reason), ok_with({close_event(4000, reason)}, true));
}

TEST(FrameParser, ValidCloseCodes) {
    for (std::uint16_t code : {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000,
                               3999, 4000, 4999}) {
        SCOPED_TRACE(code);
        expect_outcome(close_frame(code), ok_with({close_event(code)}, true));
    }
}

TEST(FrameParser, CloseCodesInvalidOnTheWire) {
    for (std::uint16_t code : {0, 1, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535}) {
        SCOPED_TRACE(code);
        expect_error(close_frame(code, "x"), close_code::protocol_error);
    }
}

TEST(FrameParser, CloseWithOneBytePayload) {
    expect_error(frame(fin | op_close, "\x03"), close_code::protocol_error);
}

TEST(FrameParser, CloseReasonMustBeUtf8) {
    expect_error(close_frame(1000, "bad \xC3\x28 reason"), close_code::invalid_payload);
    expect_error(close_frame(1000, "cut \xE2\x82"), close_code::invalid_payload);
}

TEST(FrameParser, CloseStopsTheParser) {
    // Frames after the close, in the same feed or later ones, are never delivered.
    expect_outcome(text("before") + frame(fin | op_close, "") + text("after") + ping("x"),
                   ok_with({text_event("before"), close_event(1005)}, true));
}

TEST(FrameParser, CloseInsideFragmentedMessage) {
    expect_outcome(text_start("partial") + close_frame(1001, "going"), ok_with({close_event(1001, "going")}, true));
}

// --- protocol errors --------------------------------------------------------------------------

TEST(FrameParser, UnmaskedFrameIsRejected) {
    expect_error(frame(fin | op_text, "hello", length_form::minimal, false), close_code::protocol_error);
    expect_error(frame(fin | op_ping, "", length_form::minimal, false), close_code::protocol_error);
}

TEST(FrameParser, ReservedBitsAreRejected) {
    for (std::uint8_t rsv : {0x40, 0x20, 0x10, 0x70}) {
        SCOPED_TRACE(rsv);
        expect_error(frame(static_cast<std::uint8_t>(fin | rsv | op_text), "hi"), close_code::protocol_error);
        expect_error(frame(static_cast<std::uint8_t>(fin | rsv | op_ping), ""), close_code::protocol_error);
    }
}

TEST(FrameParser, UnknownOpcodesAreRejected) {
    for (std::uint8_t op : {3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF}) {
        SCOPED_TRACE(op);
        expect_error(frame(static_cast<std::uint8_t>(fin | op), ""), close_code::protocol_error);
        expect_error(text("ok") + frame(static_cast<std::uint8_t>(fin | op), "payload"),
                     close_code::protocol_error, {text_event("ok")});
    }
}

TEST(FrameParser, FragmentedControlFramesAreRejected) {
    expect_error(frame(op_ping, "x"), close_code::protocol_error);
    expect_error(frame(op_pong, ""), close_code::protocol_error);
    expect_error(frame(op_close, close_payload(1000)), close_code::protocol_error);
    expect_error(text_start("a") + frame(op_ping, "x"), close_code::protocol_error);
}

TEST(FrameParser, ControlFramePayloadOver125) {
    expect_outcome(ping(std::string(125, 'p')), ok_with({ping_event(std::string(125, 'p'))}));
    expect_error(ping(std::string(126, 'p')), close_code::protocol_error);
    expect_error(pong(std::string(200, 'p')), close_code::protocol_error);
    expect_error(close_frame(1000, std::string(124, 'r')), close_code::protocol_error);
    // Decided from the header: no payload needed.
    expect_error(header(fin | op_ping, 126, length_form::minimal, true, next_key()), close_code::protocol_error);
}

TEST(FrameParser, ContinuationWithoutStart) {
    expect_error(last("x"), close_code::protocol_error);
    expect_error(more("x"), close_code::protocol_error);
    expect_error(text("done") + last("x"), close_code::protocol_error, {text_event("done")});
    expect_error(text_start("a") + last("b") + last("c"), close_code::protocol_error, {text_event("ab")});
}

TEST(FrameParser, NewDataFrameInsideFragmentedMessage) {
    expect_error(text_start("a") + text("b"), close_code::protocol_error);
    expect_error(text_start("a") + more("b") + text_start("c"), close_code::protocol_error);
    expect_error(text_start("a") + frame(fin | op_binary, "b"), close_code::protocol_error);
}

TEST(FrameParser, BinaryIsRefusedAtItsHeader) {
    expect_error(frame(fin | op_binary, "\x01\x02"), close_code::unsupported_data);
    expect_error(frame(op_binary, "\x01\x02") + last("x"), close_code::unsupported_data);
    expect_error(text("t") + frame(fin | op_binary, ""), close_code::unsupported_data, {text_event("t")});
    // Two header bytes are enough to decide, even for a huge binary frame.
    frame_parser parser;
    recorder sink;
    char start[2] = {static_cast<char>(fin | op_binary), static_cast<char>(0x80 | 127)};
    const parse_result r = parser.feed(start, sizeof start, sink);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.code, close_code::unsupported_data);
}

TEST(FrameParser, LengthWithTopBitSet) {
    expect_error(header(fin | op_text, std::uint64_t{1} << 63, length_form::bits64, true, next_key()),
                 close_code::protocol_error, {}, SIZE_MAX);
    expect_error(header(fin | op_text, ~std::uint64_t{0}, length_form::bits64, true, next_key()),
                 close_code::protocol_error, {}, SIZE_MAX);
}

TEST(FrameParser, ErrorIsStickyAndStopsDelivery) {
    frame_parser parser;
    recorder sink;
    std::string bad = frame(fin | op_text, "x", length_form::minimal, false);
    const parse_result first = parser.feed(bad.data(), bad.size(), sink);
    ASSERT_FALSE(first.ok);
    for (int i = 0; i < 3; ++i) {
        std::string good = text("fine") + ping("p");
        const parse_result again = parser.feed(good.data(), good.size(), sink);
        EXPECT_FALSE(again.ok);
        EXPECT_EQ(again.code, first.code);
        EXPECT_STREQ(again.reason, first.reason);
    }
    EXPECT_TRUE(sink.events.empty());
    EXPECT_FALSE(parser.closed());
}

TEST(FrameParser, FramesBeforeAnErrorAreDelivered) {
    expect_error(text("a") + ping("b") + frame(fin | op_text, "c", length_form::minimal, false) + text("d"),
                 close_code::protocol_error, {text_event("a"), ping_event("b")});
}

TEST(FrameParser, IncompleteFrameDeliversNothingYet) {
    const std::string f = text("complete later");
    expect_outcome(f.substr(0, f.size() - 1), ok_with({}));
    expect_outcome(text_start("abc") + more("def"), ok_with({}));
}

// --- message size -----------------------------------------------------------------------------

TEST(FrameParser, SingleFrameAtAndOverTheLimit) {
    expect_outcome(text(std::string(100, 'm')), ok_with({text_event(std::string(100, 'm'))}), 100);
    expect_error(text(std::string(101, 'm')), close_code::message_too_big, {}, 100);
    expect_outcome(text(std::string(70000, 'm')), ok_with({text_event(std::string(70000, 'm'))}), 70000);
    expect_error(text(std::string(70001, 'm')), close_code::message_too_big, {}, 70000);
}

TEST(FrameParser, FragmentsAtAndOverTheLimit) {
    const std::string fifty(50, 'f');
    expect_outcome(text_start(fifty) + last(fifty), ok_with({text_event(fifty + fifty)}), 100);
    expect_outcome(text_start(fifty) + more("") + last(fifty), ok_with({text_event(fifty + fifty)}), 100);
    expect_error(text_start(fifty) + last(fifty + "!"), close_code::message_too_big, {}, 100);
    expect_error(text_start(fifty) + more(fifty) + last("!"), close_code::message_too_big, {}, 100);
    // Control frames in between do not count towards the message.
    expect_outcome(text_start(fifty) + ping(std::string(125, 'p')) + last(fifty),
                   ok_with({ping_event(std::string(125, 'p')), text_event(fifty + fifty)}), 100);
    // The limit is per message: the next one starts from zero.
    expect_outcome(text_start(fifty) + last(fifty) + text(std::string(100, 'n')),
                   ok_with({text_event(fifty + fifty), text_event(std::string(100, 'n'))}), 100);
}

TEST(FrameParser, TooBigIsDecidedFromTheHeaderAlone) {
    for (auto [length, form] : {std::pair{std::uint64_t{1} << 40, length_form::bits64},
                                std::pair{std::uint64_t{2000}, length_form::minimal},
                                std::pair{std::uint64_t{1025}, length_form::bits64}}) {
        SCOPED_TRACE(length);
        // Only the header is fed; the payload never arrives.
        const std::string only_header = header(fin | op_text, length, form, true, next_key());
        expect_error(only_header, close_code::message_too_big, {}, 1024);
    }
    // Same for a continuation that would push the message over.
    const std::string start = text_start(std::string(1000, 's'));
    expect_error(start + header(op_cont, 25, length_form::minimal, true, next_key()), close_code::message_too_big,
                 {}, 1024);
}

TEST(FrameParser, SetMaxMessageApplies) {
    frame_parser parser{10};
    recorder sink;
    std::string small = text(std::string(20, 'x'));
    parser.set_max_message(20);
    EXPECT_TRUE(parser.feed(small.data(), small.size(), sink).ok);
    parser.set_max_message(19);
    std::string again = text(std::string(20, 'x'));
    const parse_result r = parser.feed(again.data(), again.size(), sink);
    EXPECT_EQ(r.code, close_code::message_too_big);
    EXPECT_EQ(sink.events.size(), 1u);
}

// --- UTF-8 in text ----------------------------------------------------------------------------

TEST(FrameParser, ValidUtf8Text) {
    for (std::string s : {"κόσμε"s, "\xF0\x9F\x98\x80"s, "\xF4\x8F\xBF\xBF"s, "\xEF\xBF\xBF"s, "\xED\x9F\xBF"s,
                          "\xEE\x80\x80"s, "a\0b"s}) {
        expect_outcome(text(s), ok_with({text_event(s)}));
    }
}

TEST(FrameParser, InvalidUtf8TextIs1007) {
    const std::string cases[] = {
        "\x80",             // lone continuation
        "ab\xBF",           //
        "\xC0\xAF",         // overlong '/'
        "\xC1\xBF",         // overlong
        "\xE0\x80\xAF",     // overlong
        "\xE0\x9F\xBF",     // overlong
        "\xF0\x80\x80\xAF", // overlong
        "\xF0\x8F\xBF\xBF", // overlong
        "\xED\xA0\x80",     // U+D800
        "\xED\xBF\xBF",     // U+DFFF
        "\xED\xA0\x80\xED\xB0\x80",  // surrogate pair
        "\xF4\x90\x80\x80", // U+110000
        "\xF7\xBF\xBF\xBF", //
        "\xF8\x88\x80\x80\x80",
        "\xFE",
        "\xFF",
        "\xC2",             // truncated at the end of the message
        "\xE0\xA0",
        "\xF0\x90\x80",
        "\xCE\xBA\xE1\xBD\xB9\xCF\x83\xCE\xBC\xCE\xB5\xED\xA0\x80\x65\x64\x69\x74\x65\x64",
    };
    for (const std::string& s : cases) {
        SCOPED_TRACE(testing::PrintToString(s));
        expect_error(text(s), close_code::invalid_payload);
        expect_error(text_start("ok ") + last(s), close_code::invalid_payload);
    }
}

TEST(FrameParser, ValidCharacterSplitAcrossFragments) {
    const std::string smiley = "\xF0\x9F\x98\x80";
    for (std::size_t cut = 1; cut < 4; ++cut) {
        expect_outcome(text_start("x" + smiley.substr(0, cut)) + last(smiley.substr(cut) + "y"),
                       ok_with({text_event("x" + smiley + "y")}));
    }
    // One byte per fragment, with a ping in the middle.
    expect_outcome(text_start("\xF0") + more("\x9F") + ping("") + more("\x98") + last("\x80"),
                   ok_with({ping_event(""), text_event(smiley)}));
}

TEST(FrameParser, InvalidUtf8SplitAcrossFragments) {
    expect_error(text_start("\xED") + last("\xA0\x80"), close_code::invalid_payload);
    expect_error(text_start("\xF0\x9F") + last("\x98"), close_code::invalid_payload);  // cut at the end
    expect_error(text_start("\xF4") + more("\x90") + last("\x80\x80"), close_code::invalid_payload);
}

TEST(FrameParser, InvalidUtf8FailsAtTheFirstImpossibleByte) {
    struct case_t {
        std::string payload;
        std::size_t bad;  // index of the first byte that cannot be valid
    };
    const case_t cases[] = {
        {"abc\xC0\xAF", 3}, {"\xE0\x80\xAF", 1}, {"\xED\xA0\x80zzz", 1}, {"\xF4\x90\x80\x80", 1},
        {"xyz\xF5", 3},     {"\xC3\x28", 1},     {"12345678\x80", 8},     {"\xF0\x9F\x98\x41", 3},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(testing::PrintToString(c.payload));
        // A single frame with a long tail: the error comes at the bad byte, not at the end.
        const std::string padded = c.payload + std::string(50, 'z');
        EXPECT_EQ(failing_byte(text(padded)), 6 + c.bad);
        // The same inside a fragmented message whose end never arrives.
        const std::string first = text_start("ok");
        EXPECT_EQ(failing_byte(first + more(padded)), first.size() + 6 + c.bad);
    }
    // A sequence cut off by the end of the message fails on its last byte.
    const std::string cut = text("ab\xE2\x82");
    EXPECT_EQ(failing_byte(cut), cut.size() - 1);
}

// --- memory -----------------------------------------------------------------------------------

TEST(FrameParser, IsSmall) {
    EXPECT_LE(sizeof(frame_parser), 64u);
}

struct counting_sink : frame_sink {
    std::size_t texts = 0;
    std::size_t bytes = 0;
    std::size_t controls = 0;
    void on_text(std::string_view m) override {
        ++texts;
        bytes += m.size();
    }
    void on_ping(std::string_view) override { ++controls; }
    void on_pong(std::string_view) override { ++controls; }
    void on_close(std::uint16_t, std::string_view) override { ++controls; }
};

TEST(FrameParser, IdleParserOwnsNoHeapMemory) {
    const std::string big(10000, 'b');
    std::string bytes = text(big) + text_start(big) + ping(std::string(125, 'p')) + last("end") + text("tiny");
    std::vector<std::size_t> cuts;
    for (std::size_t i = 0; i < bytes.size(); i += 997) {
        cuts.push_back(i);
    }
    frame_parser parser;
    counting_sink sink;
    const long before = live_blocks.load();
    long peak = before;
    for (std::size_t i = 0; i < cuts.size(); ++i) {
        const std::size_t end = i + 1 < cuts.size() ? cuts[i + 1] : bytes.size();
        ASSERT_TRUE(parser.feed(bytes.data() + cuts[i], end - cuts[i], sink).ok);
        peak = std::max(peak, live_blocks.load());
    }
    const long after = live_blocks.load();
    EXPECT_EQ(sink.texts, 3u);
    EXPECT_EQ(sink.bytes, 2 * big.size() + 3 + 4);
    EXPECT_EQ(sink.controls, 1u);
    EXPECT_GT(peak, before);  // messages spanning feeds were buffered on the heap...
    EXPECT_EQ(after, before);  // ...and nothing is left once the parser is idle
}

TEST(FrameParser, ControlFrameSpanningFeedsLeavesNoHeapMemory) {
    std::string bytes = ping(std::string(125, 'p'));
    frame_parser parser;
    counting_sink sink;
    const long before = live_blocks.load();
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        ASSERT_TRUE(parser.feed(&bytes[i], 1, sink).ok);
    }
    EXPECT_EQ(sink.controls, 1u);
    EXPECT_EQ(live_blocks.load(), before);
}

TEST(FrameParser, WholeFramesNeedNoHeapMemory) {
    std::string bytes;
    for (int i = 0; i < 50; ++i) {
        bytes += text(std::string(1000, 'w')) + ping("p");
    }
    frame_parser parser;
    counting_sink sink;
    const long before = blocks_allocated.load();
    ASSERT_TRUE(parser.feed(bytes.data(), bytes.size(), sink).ok);
    const long allocated = blocks_allocated.load() - before;
    EXPECT_EQ(sink.texts, 50u);
    EXPECT_EQ(sink.controls, 50u);
    EXPECT_EQ(allocated, 0);
}

}  // namespace
}  // namespace parley::protocol
