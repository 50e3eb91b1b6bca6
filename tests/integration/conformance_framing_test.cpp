// Conformance group 1, framing (after the Autobahn server cases 1.1 and 1.2): text messages of
// every payload-length class arrive intact, also when written in pieces; binary messages, which
// parley does not accept, are refused with 1003 at every length.
#include "conformance_support.hpp"

namespace parley::integration {
namespace {

class ConformanceFramingTest : public ws_conformance_test {};

// The boundaries of the 7-bit, 16-bit and 64-bit length encodings (RFC 6455 section 5.2), up to
// the daemon's default message limit of 64 KiB.
const std::size_t length_classes[] = {125, 126, 127, 128, 65535, 65536};

TEST_F(ConformanceFramingTest, TextOfEveryLengthClassInOneFrameIsRead) {
    ws_client client = member();
    for (std::size_t size : length_classes) {
        SCOPED_TRACE("message of " + std::to_string(size) + " bytes");
        const std::string id = "len" + std::to_string(size);
        const std::string text = "text of a message of " + std::to_string(size) + " bytes";
        client.send_frame(opcode::text, sized_say(id, text, size));
        expect_said(client, id, text);
    }
}

TEST_F(ConformanceFramingTest, EmptyTextMessageIsAnErrorNotAClose) {
    // An empty text frame is valid WebSocket; as a request it is not JSON.
    ws_client client = member();
    client.send_frame(opcode::text, "");
    expect_error(client, "bad_json");
    client.send_frame(opcode::text, sized_say("after", "after the empty one", 200));
    expect_said(client, "after", "after the empty one");
}

TEST_F(ConformanceFramingTest, TextWrittenInChunksIsRead) {
    ws_client client = member();
    // 997 bytes per write (a prime, so the pieces fall at every offset of the 4-byte mask) for a
    // message in the 16-bit length class, then one at the limit written byte by byte through its
    // header and in 4 KiB pieces after that.
    send_in_chunks(client, client.encode_frame(opcode::text, sized_say("a", "in chunks of 997", 65535)), 997,
                   milliseconds(1));
    expect_said(client, "a", "in chunks of 997");

    const std::string frame = client.encode_frame(opcode::text, sized_say("b", "header byte by byte", 65536));
    send_in_chunks(client, std::string_view(frame).substr(0, 14), 1, milliseconds(1));
    send_in_chunks(client, std::string_view(frame).substr(14), 4096, milliseconds(1));
    expect_said(client, "b", "header byte by byte");
}

TEST_F(ConformanceFramingTest, SmallMessageWrittenByteByByteIsRead) {
    ws_client client = member();
    send_in_chunks(client, client.encode_frame(opcode::text, sized_say("s", "one byte per write", 128)), 1,
                   milliseconds(1));
    expect_said(client, "s", "one byte per write");
}

TEST_F(ConformanceFramingTest, BinaryOfEveryLengthClassIs1003) {
    // parley's messages are JSON text (docs/protocol.md); 1003 is RFC 6455's code for a data type
    // the endpoint cannot accept (section 7.4.1).
    for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{125}, std::size_t{126},
                             std::size_t{127}, std::size_t{128}, std::size_t{65535}, std::size_t{65536}}) {
        expect_violation("binary of " + std::to_string(size) + " bytes", 1003,
                         [size](ws_client& c) { c.send_frame(opcode::binary, std::string(size, '\xfe')); });
    }
}

TEST_F(ConformanceFramingTest, BinaryAfterAValidMessageIs1003AndTheMessageIsAnswered) {
    ws_client client = member();
    std::string bytes = client.encode_frame(opcode::text, sized_say("first", "before the binary", 150));
    bytes += client.encode_frame(opcode::binary, "\x01\x02\x03");
    client.send_raw(bytes);
    const close_outcome outcome = read_to_close(client);
    EXPECT_EQ(outcome.code, 1003);
    EXPECT_EQ(count_if(outcome.messages, is_chat("before the binary")), 1u);
    EXPECT_EQ(count_if(outcome.messages, [](const json& m) { return m.value("type", "") == "ack"; }), 1u);
}

TEST_F(ConformanceFramingTest, LengthWithTheMostSignificantBitSetIs1002) {
    // RFC 6455 section 5.2: in the 64-bit length form the most significant bit must be 0.
    expect_violation("64-bit length 2^63 + 5", 1002, [](ws_client& c) {
        std::string header = {static_cast<char>(0x81), static_cast<char>(0x80 | 127), static_cast<char>(0x80)};
        header.append(6, '\0');
        header.push_back('\x05');
        header.append("mask");
        header.append("abcde");
        c.send_raw(header);
    });
}

}  // namespace
}  // namespace parley::integration
