#include "protocol/frame_encoder.hpp"
#include "protocol/utf8.hpp"

#include <gtest/gtest.h>

#include <string>

namespace parley::protocol {
namespace {

unsigned byte_at(std::string_view s, std::size_t i) {
    return static_cast<unsigned char>(s[i]);
}

// The reason part of an encoded close frame.
std::string close_reason(std::string_view reason) {
    const std::string f = encode_close(close_code::normal, reason);
    return std::string(frame_payload(f).substr(2));
}

TEST(FrameEncoder, HeaderSizes) {
    EXPECT_EQ(frame_header_size(0), 2u);
    EXPECT_EQ(frame_header_size(125), 2u);
    EXPECT_EQ(frame_header_size(126), 4u);
    EXPECT_EQ(frame_header_size(65535), 4u);
    EXPECT_EQ(frame_header_size(65536), 10u);
    EXPECT_EQ(frame_header_size(std::size_t{1} << 40), 10u);
}

TEST(FrameEncoder, SmallFrame) {
    const std::string f = encode_frame(opcode::text, "hello");
    ASSERT_EQ(f.size(), 7u);
    EXPECT_EQ(byte_at(f, 0), 0x81u);  // FIN + text
    EXPECT_EQ(byte_at(f, 1), 5u);     // not masked
    EXPECT_EQ(f.substr(2), "hello");
    EXPECT_EQ(frame_payload(f), "hello");
}

TEST(FrameEncoder, EmptyFrames) {
    const std::string f = encode_frame(opcode::pong, "");
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(byte_at(f, 0), 0x8Au);
    EXPECT_EQ(byte_at(f, 1), 0u);
    EXPECT_EQ(frame_payload(f), "");
}

TEST(FrameEncoder, SixteenBitLength) {
    for (std::size_t size : {126u, 300u, 65535u}) {
        const std::string payload(size, 'x');
        const std::string f = encode_frame(opcode::text, payload);
        ASSERT_EQ(f.size(), 4 + size);
        EXPECT_EQ(byte_at(f, 1), 126u);
        EXPECT_EQ(byte_at(f, 2) << 8 | byte_at(f, 3), size);
        EXPECT_EQ(frame_payload(f), payload);
    }
}

TEST(FrameEncoder, SixtyFourBitLength) {
    const std::string payload(65536 + 7, 'y');
    const std::string f = encode_frame(opcode::binary, payload);
    ASSERT_EQ(f.size(), 10 + payload.size());
    EXPECT_EQ(byte_at(f, 0), 0x82u);
    EXPECT_EQ(byte_at(f, 1), 127u);
    std::uint64_t length = 0;
    for (std::size_t i = 2; i < 10; ++i) {
        length = length << 8 | byte_at(f, i);
    }
    EXPECT_EQ(length, payload.size());
    EXPECT_EQ(frame_payload(f), payload);
}

TEST(FrameEncoder, WriteHeaderMatchesEncodeFrame) {
    for (std::size_t size : {0u, 1u, 125u, 126u, 65535u, 65536u, 100000u}) {
        char header[10];
        const std::size_t n = frame_header_size(size);
        write_frame_header(header, opcode::ping, size);
        const std::string f = encode_frame(opcode::ping, std::string(size, 'z'));
        EXPECT_EQ(std::string_view(header, n), std::string_view(f).substr(0, n)) << size;
    }
}

TEST(FrameEncoder, CloseFrame) {
    const std::string f = encode_close(close_code::going_away, "shutting down");
    EXPECT_EQ(byte_at(f, 0), 0x88u);
    const std::string_view payload = frame_payload(f);
    ASSERT_EQ(payload.size(), 2u + 13u);
    EXPECT_EQ(byte_at(payload, 0) << 8 | byte_at(payload, 1), 1001u);
    EXPECT_EQ(payload.substr(2), "shutting down");
}

TEST(FrameEncoder, CloseWithoutReason) {
    const std::string f = encode_close(close_code::message_too_big);
    ASSERT_EQ(f.size(), 4u);
    EXPECT_EQ(byte_at(f, 1), 2u);
    EXPECT_EQ(byte_at(f, 2) << 8 | byte_at(f, 3), 1009u);
}

TEST(FrameEncoder, CloseReasonIsTruncatedTo125BytePayload) {
    const std::string f = encode_close(close_code::policy_violation, std::string(300, 'r'));
    ASSERT_EQ(f.size(), 127u);
    const std::string_view payload = frame_payload(f);
    EXPECT_EQ(payload.size(), 125u);
    EXPECT_EQ(byte_at(f, 1), 125u);
    EXPECT_EQ(payload.substr(2), std::string(123, 'r'));
    // Exactly 123 bytes of reason fit unchanged.
    EXPECT_EQ(close_reason(std::string(123, 'k')), std::string(123, 'k'));
}

TEST(FrameEncoder, CloseReasonIsNotCutInsideACharacter) {
    // 122 ASCII bytes then a 2-byte character: byte 123 would be its lead alone.
    EXPECT_EQ(close_reason(std::string(122, 'a') + "\xC3\xA9" + "tail"), std::string(122, 'a'));
    // 121 + a 4-byte character: both lead and first continuation would be left dangling.
    EXPECT_EQ(close_reason(std::string(121, 'a') + "\xF0\x9F\x98\x80"), std::string(121, 'a'));
    // A character ending exactly at byte 123 is kept.
    EXPECT_EQ(close_reason(std::string(120, 'a') + "\xE2\x82\xAC" + "more"), std::string(120, 'a') + "\xE2\x82\xAC");
    // Every cut of a long multi-byte reason stays valid UTF-8.
    std::string euros;
    for (int i = 0; i < 60; ++i) {
        euros += "\xE2\x82\xAC";
    }
    for (std::size_t prefix = 0; prefix < 4; ++prefix) {
        const std::string cut = close_reason(std::string(prefix, 'p') + euros);
        EXPECT_LE(cut.size(), 123u);
        EXPECT_GE(cut.size(), 121u);
        EXPECT_TRUE(is_valid_utf8(cut)) << prefix;
    }
}

}  // namespace
}  // namespace parley::protocol
