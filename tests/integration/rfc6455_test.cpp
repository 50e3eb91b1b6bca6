// RFC 6455 framing over a real socket: each violation closes with its code, control frames
// work, and the daemon keeps serving new clients afterwards.
#include "conformance_support.hpp"

namespace parley::integration {
namespace {

// The raw-frame fixture and helpers live in conformance_support, shared with the conformance
// suites that extend these cases group by group.
class Rfc6455Test : public ws_conformance_test {};

const std::string users_request = R"({"type":"users","id":1})";

TEST_F(Rfc6455Test, UnmaskedFrameIs1002) {
    expect_violation("unmasked", 1002, [](ws_client& c) { c.send_frame(opcode::text, users_request, {.mask = false}); });
}

TEST_F(Rfc6455Test, ReservedBitIs1002) {
    for (std::uint8_t rsv : {4, 2, 1}) {
        expect_violation("rsv " + std::to_string(rsv), 1002,
                         [rsv](ws_client& c) { c.send_frame(opcode::text, users_request, {.rsv = rsv}); });
    }
}

TEST_F(Rfc6455Test, UnknownOpcodeIs1002) {
    for (std::uint8_t op : {0x3, 0x7, 0xB, 0xF}) {
        expect_violation("opcode " + std::to_string(op), 1002, [op](ws_client& c) { c.send_frame(op, "x"); });
    }
}

TEST_F(Rfc6455Test, FragmentedPingIs1002) {
    expect_violation("ping without fin", 1002, [](ws_client& c) { c.send_frame(opcode::ping, "x", {.fin = false}); });
}

TEST_F(Rfc6455Test, LongControlFrameIs1002) {
    expect_violation("ping of 126 bytes", 1002, [](ws_client& c) { c.send_frame(opcode::ping, std::string(126, 'p')); });
}

TEST_F(Rfc6455Test, ContinuationWithoutStartIs1002) {
    expect_violation("lone continuation", 1002, [](ws_client& c) { c.send_frame(opcode::continuation, users_request); });
}

TEST_F(Rfc6455Test, NewMessageInsideFragmentedMessageIs1002) {
    expect_violation("text inside text", 1002, [](ws_client& c) {
        c.send_frame(opcode::text, R"({"type":)", {.fin = false});
        c.send_frame(opcode::text, users_request);
    });
}

TEST_F(Rfc6455Test, BadCloseFramesAre1002) {
    // Codes that must not appear on the wire, out-of-range codes, and a one-byte payload.
    for (std::uint16_t code : {999, 1004, 1005, 1006, 1015, 1016, 2999, 5000}) {
        expect_violation("close code " + std::to_string(code), 1002,
                         [code](ws_client& c) { c.send_frame(opcode::close, close_payload(code)); });
    }
    expect_violation("one-byte close", 1002, [](ws_client& c) { c.send_frame(opcode::close, std::string(1, '\x03')); });
}

TEST_F(Rfc6455Test, InvalidUtf8Is1007) {
    // Invalid byte, bad continuation, overlong, surrogate, above U+10FFFF, truncated sequence.
    for (const std::string bad : {"\xff", "\xc3\x28", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}) {
        expect_violation("text bytes " + hex(bad), 1007, [&bad](ws_client& c) {
            c.send_frame(opcode::text, R"({"type":"users","x":")" + bad + R"("})");
        });
    }
}

TEST_F(Rfc6455Test, InvalidUtf8SplitAcrossFragmentsIs1007) {
    expect_violation("split invalid sequence", 1007, [](ws_client& c) {
        c.send_frame(opcode::text, "{\"type\":\"users\",\"x\":\"\xc3", {.fin = false});
        c.send_frame(opcode::continuation, "\x28\"}");
    });
}

TEST_F(Rfc6455Test, ValidUtf8SplitAcrossFragmentsIsAccepted) {
    ws_client alice = login("alice");
    join_room(alice, "r");
    alice.send_frame(opcode::text, "{\"type\":\"say\",\"room\":\"r\",\"text\":\"caf\xc3", {.fin = false});
    alice.send_frame(opcode::continuation, "\xa9\"}");
    EXPECT_EQ(wait_type(alice, "message").value("text", ""), "caf\xc3\xa9");
}

TEST_F(Rfc6455Test, BinaryFrameIs1003) {
    expect_violation("binary", 1003, [](ws_client& c) { c.send_frame(opcode::binary, users_request); });
}

TEST_F(Rfc6455Test, OversizedMessageIs1009FromItsHeader) {
    expect_violation("70000-byte header, no payload", 1009, [](ws_client& c) {
        // Only the header of a masked 70000-byte text frame: the server must refuse from the
        // announced length without waiting for the payload.
        std::string header = {static_cast<char>(0x81), static_cast<char>(0x80 | 127)};
        for (int shift = 56; shift >= 0; shift -= 8) {
            header.push_back(static_cast<char>((70000ULL >> shift) & 0xFF));
        }
        header += "mask";
        c.send_raw(header);
    });
}

TEST_F(Rfc6455Test, OversizedFragmentedMessageIs1009) {
    expect_violation("two fragments of 40000", 1009, [](ws_client& c) {
        c.send_frame(opcode::text, std::string(40000, ' '), {.fin = false});
        c.send_raw(c.encode_frame(opcode::continuation, std::string(40000, ' ')).substr(0, 8));
    });
}

TEST_F(Rfc6455Test, MessageOfExactly64KiBIsAccepted) {
    ws_client alice = login("alice");
    join_room(alice, "r");
    // Valid framing at the size limit; the text is over its own limit, so the reply is an error,
    // not a close.
    json request = {{"type", "say"}, {"room", "r"}, {"id", 1}, {"text", ""}};
    request["text"] = std::string(65536 - request.dump().size(), 'x');
    ASSERT_EQ(request.dump().size(), 65536u);
    alice.send_json(request, 16000);
    EXPECT_EQ(expect_error(alice, "too_large")["re"], 1);
}

TEST_F(Rfc6455Test, PingGetsPongWithSamePayload) {
    ws_client client = connect();
    for (const std::string& payload : {std::string("hello"), std::string(), std::string(125, 'p')}) {
        client.send_frame(opcode::ping, payload);
        const auto frame = client.recv_frame();
        ASSERT_TRUE(frame) << "no pong";
        EXPECT_EQ(frame->opcode, opcode::pong);
        EXPECT_TRUE(frame->fin);
        EXPECT_EQ(frame->payload, payload);
    }
}

TEST_F(Rfc6455Test, PingBetweenFragmentsIsAnsweredAndMessageCompletes) {
    ws_client client = connect();
    const std::string login = R"({"type":"login","user":"pinger","id":7})";
    std::string bytes = client.encode_frame(opcode::text, login.substr(0, 10), {.fin = false});
    bytes += client.encode_frame(opcode::ping, "mid");
    bytes += client.encode_frame(opcode::continuation, login.substr(10, 10), {.fin = false});
    bytes += client.encode_frame(opcode::pong, "unsolicited");  // allowed, and ignored
    bytes += client.encode_frame(opcode::continuation, login.substr(20));
    client.send_raw(bytes);

    const auto pong = client.recv_frame();
    ASSERT_TRUE(pong);
    EXPECT_EQ(pong->opcode, opcode::pong);
    EXPECT_EQ(pong->payload, "mid");
    EXPECT_EQ(expect_type(client, "welcome")["re"], 7);
}

TEST_F(Rfc6455Test, ClientCloseIsEchoedThenTcpCloses) {
    ws_client client = connect();
    client.send_close(1000, "bye");
    const auto frame = client.recv_frame();
    ASSERT_TRUE(frame) << "no close frame came back";
    EXPECT_EQ(frame->opcode, opcode::close);
    ASSERT_GE(frame->payload.size(), 2u);
    EXPECT_EQ(frame->payload.substr(0, 2), close_payload(1000));
    EXPECT_TRUE(client.wait_eof()) << "the server should close TCP after the close handshake";
}

TEST_F(Rfc6455Test, CloseWithApplicationCodeIsAccepted) {
    ws_client client = connect();
    client.send_close(4000);
    const auto code = client.expect_close();
    ASSERT_TRUE(code);
    EXPECT_TRUE(*code == 4000 || *code == 1000) << "4000 is a valid application code; got " << *code;
    EXPECT_TRUE(client.wait_eof());
    expect_still_serving();
}

TEST_F(Rfc6455Test, EmptyCloseIsAnsweredWithoutError) {
    ws_client client = connect();
    client.send_frame(opcode::close, "");
    const auto code = client.expect_close();
    ASSERT_TRUE(code);
    EXPECT_TRUE(*code == 1000 || *code == 1005) << "got " << *code;
    EXPECT_TRUE(client.wait_eof());
}

TEST_F(Rfc6455Test, ViolationAfterLoginFreesTheName) {
    {
        ws_client alice = login("alice");
        alice.send_frame(opcode::binary, "x");
        EXPECT_EQ(alice.expect_close(), 1003);
    }
    ws_client again = connect();
    EXPECT_EQ(login_retrying(again, "alice").value("type", ""), "welcome");
}

}  // namespace
}  // namespace parley::integration
