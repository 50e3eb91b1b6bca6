// Conformance group 2, pings and pongs (after the Autobahn server cases 2.x): every ping of up to
// 125 bytes is answered by a pong with the same payload, in order, however it was written; a
// longer ping is a protocol error; pongs nobody asked for are ignored.
#include "conformance_support.hpp"

namespace parley::integration {
namespace {

class ConformancePingTest : public ws_conformance_test {};

// n bytes that cover the whole byte range over the lengths, zero and 0xFF included.
std::string payload_of(std::size_t n) {
    std::string payload(n, '\0');
    for (std::size_t i = 0; i < n; ++i) {
        payload[i] = static_cast<char>((n * 31 + i * 7) & 0xFF);
    }
    return payload;
}

TEST_F(ConformancePingTest, PingOfEveryLengthUpTo125IsAnsweredWithItsPayload) {
    ws_client client = connect();
    for (std::size_t n = 0; n <= 125; ++n) {
        SCOPED_TRACE("ping of " + std::to_string(n) + " bytes");
        const std::string payload = payload_of(n);
        client.send_frame(opcode::ping, payload);
        expect_pong(client, payload);
    }
}

TEST_F(ConformancePingTest, PingOver125BytesIs1002WithoutPong) {
    // RFC 6455 section 5.5: control frames carry at most 125 bytes. 126 needs the 16-bit length
    // form, 65536 the 64-bit one.
    for (std::size_t n : {126, 127, 65536}) {
        SCOPED_TRACE("ping of " + std::to_string(n) + " bytes");
        ws_client client = connect();
        client.send_frame(opcode::ping, std::string(n, 'p'));
        const std::vector<ws_frame> frames = frames_to_eof(client);
        ASSERT_EQ(frames.size(), 1u) << "expected only the close frame";
        EXPECT_EQ(frames[0].opcode, opcode::close);
        EXPECT_EQ(frames[0].payload.substr(0, 2), close_payload(1002));
    }
}

TEST_F(ConformancePingTest, PingWrittenByteByByteIsAnswered) {
    ws_client client = connect();
    const std::string payload = payload_of(125);
    send_in_chunks(client, client.encode_frame(opcode::ping, payload), 1, milliseconds(1));
    expect_pong(client, payload);
}

TEST_F(ConformancePingTest, UnsolicitedPongsAreIgnored) {
    ws_client client = connect();
    std::string bytes = client.encode_frame(opcode::pong, "");
    bytes += client.encode_frame(opcode::pong, "unsolicited pong payload");
    bytes += client.encode_frame(opcode::text, R"({"type":"users","id":"after"})");
    client.send_raw(bytes);
    // The first frame back answers the request: the pongs produced nothing.
    const auto frame = client.recv_frame();
    ASSERT_TRUE(frame);
    ASSERT_EQ(frame->opcode, opcode::text);
    const json reply = json::parse(frame->payload);
    EXPECT_EQ(reply.value("re", ""), "after") << reply;
    EXPECT_EQ(reply.value("code", ""), "not_logged_in") << reply;
}

TEST_F(ConformancePingTest, PongThenPingOnlyThePingIsAnswered) {
    ws_client client = connect();
    std::string bytes = client.encode_frame(opcode::pong, "unsolicited");
    bytes += client.encode_frame(opcode::ping, "the ping");
    client.send_raw(bytes);
    expect_pong(client, "the ping");
    EXPECT_FALSE(client.recv_frame(milliseconds(100))) << "a second frame came back for one ping";
}

// Ten pings written at once, or piece by piece: ten pongs, in the order of the pings.
void expect_ten_pongs_in_order(ws_client& client, std::size_t chunk) {
    std::string bytes;
    for (int i = 0; i < 10; ++i) {
        bytes += client.encode_frame(opcode::ping, "ping number " + std::to_string(i));
    }
    if (chunk == 0) {
        client.send_raw(bytes);
    } else {
        send_in_chunks(client, bytes, chunk, milliseconds(1));
    }
    for (int i = 0; i < 10; ++i) {
        expect_pong(client, "ping number " + std::to_string(i));
    }
}

TEST_F(ConformancePingTest, TenPingsAreAnsweredInOrder) {
    ws_client client = connect();
    expect_ten_pongs_in_order(client, 0);
}

TEST_F(ConformancePingTest, TenPingsWrittenInPiecesAreAnsweredInOrder) {
    ws_client client = connect();
    // 7 bytes per write: pieces end inside headers, masks and payloads.
    expect_ten_pongs_in_order(client, 7);
}

TEST_F(ConformancePingTest, PingsOfALoggedInMemberAreAnsweredBetweenRequests) {
    ws_client client = member();
    std::string bytes = client.encode_frame(opcode::ping, "one");
    bytes += client.encode_frame(opcode::text, sized_say("s", "between pings", 100));
    bytes += client.encode_frame(opcode::ping, "two");
    client.send_raw(bytes);
    // The pongs come back in order and the say is carried out; the order between pongs and chat
    // messages is not part of the contract.
    std::vector<std::string> pongs;
    bool acked = false;
    bool delivered = false;
    while (pongs.size() < 2 || !acked || !delivered) {
        const auto frame = client.recv_frame();
        ASSERT_TRUE(frame) << "missing: " << (2 - pongs.size()) << " pongs, ack " << acked << ", message "
                           << delivered;
        if (frame->opcode == opcode::pong) {
            pongs.push_back(frame->payload);
            continue;
        }
        ASSERT_EQ(frame->opcode, opcode::text);
        const json message = json::parse(frame->payload);
        acked = acked || (message.value("type", "") == "ack" && message.value("re", "") == "s");
        delivered = delivered || is_chat("between pings")(message);
    }
    EXPECT_EQ(pongs, (std::vector<std::string>{"one", "two"}));
}

}  // namespace
}  // namespace parley::integration
