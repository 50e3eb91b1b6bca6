// permessage-deflate's single-message compression, checked against zlib used directly as any
// other endpoint would (raw DEFLATE, the 00 00 ff ff tail removed and appended), and the frame
// parser's handling of compressed client messages.
#include "protocol/frame_encoder.hpp"
#include "protocol/frame_parser.hpp"
#include "protocol/message_deflate.hpp"
#include "tests/peer_deflate.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace parley::protocol {
namespace {

// What a peer does to inflate one message compressed without context takeover.
std::string peer_inflate(std::string_view compressed, int window_bits = 15) {
    return tests::client_inflate(compressed, window_bits);
}

// What a peer does to compress one message: raw DEFLATE, sync flush, tail removed; with
// `final`, the last block marked BFINAL instead (RFC 7692 section 7.2.3.3 allows both).
std::string peer_deflate(std::string_view message, bool final = false) {
    z_stream z{};
    deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, static_cast<uLong>(message.size())) + 16, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(message.data()));
    z.avail_in = static_cast<uInt>(message.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, final ? Z_FINISH : Z_SYNC_FLUSH);
    out.resize(out.size() - z.avail_out);
    deflateEnd(&z);
    if (!final) {
        EXPECT_EQ(out.substr(out.size() - 4), std::string("\x00\x00\xff\xff", 4));
        out.resize(out.size() - 4);
    }
    return out;
}

const std::string chat_message =
    R"({"type":"message","room":"lobby","from":"alice","text":"good morning everyone, the build is green again","seq":1042,"ts":1764000000000})";

std::string random_bytes(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::string s(n, '\0');
    for (char& c : s) {
        c = static_cast<char>(rng());
    }
    return s;
}

TEST(MessageDeflateTest, WhatWeCompressAPeerInflates) {
    for (const std::string& message : {chat_message, std::string(), std::string(100000, 'x'), random_bytes(3000, 1)}) {
        std::string compressed;
        deflate_message(message, compressed);
        ASSERT_GE(compressed.size(), 1u);
        EXPECT_NE(compressed.substr(compressed.size() >= 4 ? compressed.size() - 4 : 0), std::string("\x00\x00\xff\xff", 4));
        EXPECT_EQ(peer_inflate(compressed), message);
    }
    std::string compressed;
    deflate_message(chat_message, compressed);
    EXPECT_LT(compressed.size(), chat_message.size());
}

TEST(MessageDeflateTest, WhatAPeerCompressesWeInflate) {
    for (bool final : {false, true}) {
        for (const std::string& message : {chat_message, std::string(), std::string(60000, 'y'), random_bytes(5000, 2)}) {
            std::string_view out;
            ASSERT_EQ(inflate_message(peer_deflate(message, final), 64 * 1024, out), inflate_status::ok);
            EXPECT_EQ(out, message);
        }
    }
}

TEST(MessageDeflateTest, InflatingStopsAtTheLimit) {
    const std::string message(1000, 'z');
    const std::string compressed = peer_deflate(message);
    std::string_view out;
    EXPECT_EQ(inflate_message(compressed, 1000, out), inflate_status::ok);
    EXPECT_EQ(out.size(), 1000u);
    EXPECT_EQ(inflate_message(compressed, 999, out), inflate_status::too_large);
    // A bomb: 50 MB of zeros is about 50 KB compressed; stopped after the limit, not inflated.
    const std::string bomb = peer_deflate(std::string(50 * 1000 * 1000, '\0'));
    ASSERT_LT(bomb.size(), 64u * 1024);
    EXPECT_EQ(inflate_message(bomb, 64 * 1024, out), inflate_status::too_large);
    // The stream is reset for the next message.
    ASSERT_EQ(inflate_message(peer_deflate(chat_message), 64 * 1024, out), inflate_status::ok);
    EXPECT_EQ(out, chat_message);
}

TEST(MessageDeflateTest, DataThatIsNotDeflateIsCorrupt) {
    std::string_view out;
    EXPECT_EQ(inflate_message("\xff\xff\xff\xff\xff", 1024, out), inflate_status::corrupt);
    // A valid final block followed by more bytes.
    EXPECT_EQ(inflate_message(peer_deflate("hello", true) + "extra", 1024, out), inflate_status::corrupt);
    ASSERT_EQ(inflate_message(peer_deflate("after"), 1024, out), inflate_status::ok);
    EXPECT_EQ(out, "after");
}

shared_frame text_frame(std::string_view payload) { return shared_frame::copy_of(encode_frame(opcode::text, payload)); }

TEST(MessageDeflateTest, ATextFrameGetsOneSharedCompressedTwin) {
    const shared_frame plain = text_frame(chat_message);
    const shared_frame twin = frame_for_deflate(plain, 64, 15);
    ASSERT_NE(twin.identity(), plain.identity());
    EXPECT_EQ(static_cast<unsigned char>(twin.data()[0]), 0xC1);  // FIN, RSV1, text
    EXPECT_LT(twin.size(), plain.size());
    EXPECT_EQ(peer_inflate(frame_payload(twin.view())), chat_message);
    // Every later sender gets the same bytes; the twin lives as long as the plain frame.
    EXPECT_EQ(frame_for_deflate(plain, 64, 15).identity(), twin.identity());
    EXPECT_EQ(frame_for_deflate(plain, 64, 9).identity(), twin.identity());  // fits 512 bytes
}

TEST(MessageDeflateTest, SomeFramesGoAsTheyAre) {
    const shared_frame small = text_frame(R"({"type":"ack","id":1})");
    EXPECT_EQ(frame_for_deflate(small, 64, 15).identity(), small.identity());
    EXPECT_FALSE(small.has_twin());
    const shared_frame pong = shared_frame::copy_of(encode_frame(opcode::pong, std::string(100, 'p')));
    EXPECT_EQ(frame_for_deflate(pong, 0, 15).identity(), pong.identity());
    // Compressing would not make it smaller: the frame is its own twin, and stays so.
    const shared_frame noise = text_frame(random_bytes(2000, 3));
    EXPECT_EQ(frame_for_deflate(noise, 64, 15).identity(), noise.identity());
    EXPECT_TRUE(noise.has_twin());
    EXPECT_EQ(frame_for_deflate(noise, 64, 15).identity(), noise.identity());
    // Longer than a client's window of 2^9 bytes: plain for it, compressed for others.
    const shared_frame long_text = text_frame(std::string(600, 'a'));
    EXPECT_EQ(frame_for_deflate(long_text, 64, 9).identity(), long_text.identity());
    const shared_frame twin = frame_for_deflate(long_text, 64, 15);
    EXPECT_NE(twin.identity(), long_text.identity());
    EXPECT_EQ(peer_inflate(frame_payload(twin.view()), 15), std::string(600, 'a'));
}

TEST(MessageDeflateTest, WorkersRacingForATwinAllSendAValidOne) {
    std::vector<shared_frame> frames;
    for (int i = 0; i < 200; ++i) {
        frames.push_back(text_frame(chat_message + std::to_string(i)));
    }
    std::vector<std::vector<shared_frame>> seen(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (const shared_frame& f : frames) {
                seen[t].push_back(frame_for_deflate(f, 64, 15));
            }
        });
    }
    for (std::thread& t : threads) {
        t.join();
    }
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const shared_frame kept = frames[i].twin();
        for (int t = 0; t < 4; ++t) {
            EXPECT_EQ(peer_inflate(frame_payload(seen[t][i].view())), chat_message + std::to_string(i));
        }
        EXPECT_EQ(peer_inflate(frame_payload(kept.view())), chat_message + std::to_string(i));
    }
}

// ---- the parser ----

std::string client_frame(std::uint8_t byte0, std::string_view payload) {
    std::string f;
    f.push_back(static_cast<char>(byte0));
    const char key[4] = {0x12, 0x34, 0x56, 0x78};
    if (payload.size() < 126) {
        f.push_back(static_cast<char>(0x80 | payload.size()));
    } else {
        f.push_back(static_cast<char>(0x80 | 126));
        f.push_back(static_cast<char>(payload.size() >> 8));
        f.push_back(static_cast<char>(payload.size() & 0xFF));
    }
    f.append(key, 4);
    for (std::size_t i = 0; i < payload.size(); ++i) {
        f.push_back(static_cast<char>(payload[i] ^ key[i % 4]));
    }
    return f;
}

struct texts : frame_sink {
    std::vector<std::string> got;
    int pings = 0;
    void on_text(std::string_view m) override { got.emplace_back(m); }
    void on_ping(std::string_view) override { ++pings; }
    void on_pong(std::string_view) override {}
    void on_close(std::uint16_t, std::string_view) override {}
};

// Feeds bytes in pieces of `step` bytes (0: at once) to a parser that allows compression.
parse_result feed(const std::string& bytes, texts& sink, std::size_t step = 0, bool allow = true,
                  std::size_t max_message = 64 * 1024) {
    frame_parser parser{max_message};
    if (allow) {
        parser.allow_compressed();
    }
    std::string copy = bytes;
    const std::size_t n = step == 0 ? copy.size() : step;
    parse_result r;
    for (std::size_t at = 0; at < copy.size() && r.ok; at += n) {
        r = parser.feed(copy.data() + at, std::min(n, copy.size() - at), sink);
    }
    return r;
}

TEST(CompressedFramesTest, ACompressedMessageIsDeliveredInflated) {
    for (std::size_t step : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
        SCOPED_TRACE(step);
        texts sink;
        const std::string bytes = client_frame(0xC1, peer_deflate(chat_message)) + client_frame(0x81, "plain");
        EXPECT_TRUE(feed(bytes, sink, step).ok);
        EXPECT_EQ(sink.got, (std::vector<std::string>{chat_message, "plain"}));
    }
}

TEST(CompressedFramesTest, AFragmentedCompressedMessageWithAPingBetween) {
    const std::string compressed = peer_deflate(chat_message);
    const std::string bytes = client_frame(0x41, compressed.substr(0, 10)) + client_frame(0x89, "p") +
                              client_frame(0x00, compressed.substr(10, 5)) + client_frame(0x80, compressed.substr(15));
    for (std::size_t step : {std::size_t{0}, std::size_t{1}}) {
        texts sink;
        EXPECT_TRUE(feed(bytes, sink, step).ok);
        EXPECT_EQ(sink.got, std::vector<std::string>{chat_message});
        EXPECT_EQ(sink.pings, 1);
    }
}

TEST(CompressedFramesTest, RsvOneIsRefusedWhereItDoesNotBelong) {
    const std::string compressed = peer_deflate(chat_message);
    struct bad_case {
        const char* what;
        std::string bytes;
        bool allow;
    };
    const bad_case cases[] = {
        {"not negotiated", client_frame(0xC1, compressed), false},
        {"on a continuation", client_frame(0x41, compressed.substr(0, 4)) + client_frame(0xC0, compressed.substr(4)), true},
        {"on a ping", client_frame(0xC9, "x"), true},
        {"on a close", client_frame(0xC8, std::string("\x03\xe8", 2)), true},
        {"rsv2", client_frame(0xA1, compressed), true},
        {"rsv1 and rsv3", client_frame(0xD1, compressed), true},
    };
    for (const bad_case& c : cases) {
        SCOPED_TRACE(c.what);
        texts sink;
        parse_result r = feed(c.bytes, sink, 0, c.allow);
        EXPECT_FALSE(r.ok);
        EXPECT_EQ(r.code, close_code::protocol_error);
        EXPECT_TRUE(sink.got.empty());
    }
}

TEST(CompressedFramesTest, BombsCorruptDataAndBadUtf8CloseTheConnection) {
    texts sink;
    parse_result r = feed(client_frame(0xC1, peer_deflate(std::string(200 * 1000, 'a'))), sink);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.code, close_code::message_too_big);
    r = feed(client_frame(0xC1, "\xff\xff\xff\xff"), sink);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.code, close_code::invalid_payload);
    r = feed(client_frame(0xC1, peer_deflate("caf\xc3")), sink);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.code, close_code::invalid_payload);
    // The limit applies to the inflated size: 1,000 bytes allowed, 1,001 not.
    r = feed(client_frame(0xC1, peer_deflate(std::string(1000, 'b'))), sink, 0, true, 1000);
    EXPECT_TRUE(r.ok);
    r = feed(client_frame(0xC1, peer_deflate(std::string(1001, 'b'))), sink, 0, true, 1000);
    EXPECT_EQ(r.code, close_code::message_too_big);
    EXPECT_EQ(sink.got, std::vector<std::string>{std::string(1000, 'b')});
}

}  // namespace
}  // namespace parley::protocol
