// Conformance groups 3 and 4, what was never negotiated (after the Autobahn server cases 3.x and
// 4.x): a frame with an RSV bit set or with a reserved opcode fails the connection with 1002.
// Everything before it is still carried out; nothing after it is (RFC 6455 sections 5.2, 7.1.7).
#include "conformance_support.hpp"

namespace parley::integration {
namespace {

class ConformanceReservedTest : public ws_conformance_test {};

TEST_F(ConformanceReservedTest, ReservedBitsOnTextAre1002) {
    // Every non-zero combination of RSV1..RSV3, alone on a fresh connection.
    for (std::uint8_t rsv = 1; rsv <= 7; ++rsv) {
        expect_violation("text with rsv " + std::to_string(rsv), 1002, [rsv](ws_client& c) {
            c.send_frame(opcode::text, R"({"type":"users","id":1})", {.rsv = rsv});
        });
    }
}

TEST_F(ConformanceReservedTest, ReservedBitsAfterAValidMessageAnswerItThenClose) {
    for (std::uint8_t rsv = 1; rsv <= 7; ++rsv) {
        SCOPED_TRACE("rsv " + std::to_string(rsv));
        ws_client client = member();
        expect_answered_then_closed(client, client.encode_frame(opcode::text, "{}", {.rsv = rsv}), 1002);
    }
}

TEST_F(ConformanceReservedTest, ReservedBitsWrittenInPiecesAnswerTheMessageThenClose) {
    ws_client client = member();
    expect_answered_then_closed(client, client.encode_frame(opcode::text, "{}", {.rsv = 2}), 1002, 5);
}

TEST_F(ConformanceReservedTest, ReservedBitsOnOtherOpcodesAre1002) {
    // On binary it is 1002, not binary's 1003: the frame is malformed before its type matters.
    // On a ping no pong comes back, on a close no echo of its code.
    expect_violation("binary with rsv 5", 1002,
                     [](ws_client& c) { c.send_frame(opcode::binary, "\x00\xff", {.rsv = 5}); });
    expect_violation("ping with rsv 6", 1002,
                     [](ws_client& c) { c.send_frame(opcode::ping, "ping", {.rsv = 6}); });
    expect_violation("pong with rsv 3", 1002,
                     [](ws_client& c) { c.send_frame(opcode::pong, "pong", {.rsv = 3}); });
    expect_violation("close with rsv 7", 1002,
                     [](ws_client& c) { c.send_frame(opcode::close, close_payload(1000), {.rsv = 7}); });
    expect_violation("continuation with rsv 1", 1002, [](ws_client& c) {
        c.send_frame(opcode::text, R"({"type":)", {.fin = false});
        c.send_frame(opcode::continuation, R"("users"})", {.rsv = 4});
    });
}

// Non-control opcodes 3-7 and control opcodes 11-15 are reserved (RFC 6455 section 5.2).
const std::uint8_t reserved_opcodes[] = {3, 4, 5, 6, 7, 11, 12, 13, 14, 15};

TEST_F(ConformanceReservedTest, ReservedOpcodesAre1002WithAndWithoutPayload) {
    for (std::uint8_t op : reserved_opcodes) {
        expect_violation("empty frame with opcode " + std::to_string(op), 1002,
                         [op](ws_client& c) { c.send_frame(op, ""); });
        expect_violation("frame with opcode " + std::to_string(op) + " and a payload", 1002,
                         [op](ws_client& c) { c.send_frame(op, "reserved payload"); });
    }
}

TEST_F(ConformanceReservedTest, ReservedOpcodeAfterAValidMessageAnswersItThenCloses) {
    for (std::uint8_t op : reserved_opcodes) {
        SCOPED_TRACE("opcode " + std::to_string(op));
        ws_client client = member();
        expect_answered_then_closed(client, client.encode_frame(op, "reserved payload"), 1002);
    }
}

TEST_F(ConformanceReservedTest, ReservedOpcodeInsideAFragmentedMessageIs1002) {
    for (std::uint8_t op : {std::uint8_t{3}, std::uint8_t{11}}) {
        expect_violation("opcode " + std::to_string(op) + " between fragments", 1002, [op](ws_client& c) {
            c.send_frame(opcode::text, R"({"type":)", {.fin = false});
            c.send_frame(op, "x");
        });
    }
}

}  // namespace
}  // namespace parley::integration
