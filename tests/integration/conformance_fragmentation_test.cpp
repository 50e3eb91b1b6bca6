// Conformance group 5, fragmentation (after the Autobahn server cases 5.x): a text message in any
// number of fragments, with pings between them, is read as one; fragmented control frames and
// continuation frames out of place fail the connection with 1002 (RFC 6455 section 5.4).
#include "conformance_support.hpp"

namespace parley::integration {
namespace {

class ConformanceFragmentationTest : public ws_conformance_test {};

// A say split into fragments at the given offsets, each frame encoded separately; with pings
// true a ping "ping N" goes before every continuation frame.
std::vector<std::string> fragment_frames(ws_client& client, const std::string& message,
                                         const std::vector<std::size_t>& cuts, bool pings) {
    std::vector<std::string> frames;
    std::size_t from = 0;
    for (std::size_t i = 0; i <= cuts.size(); ++i) {
        const std::size_t to = i < cuts.size() ? cuts[i] : message.size();
        if (i > 0 && pings) {
            frames.push_back(client.encode_frame(opcode::ping, "ping " + std::to_string(i)));
        }
        frames.push_back(client.encode_frame(i == 0 ? opcode::text : opcode::continuation,
                                             std::string_view(message).substr(from, to - from),
                                             {.fin = i == cuts.size()}));
        from = to;
    }
    return frames;
}

std::string joined(const std::vector<std::string>& frames) {
    std::string bytes;
    for (const std::string& frame : frames) {
        bytes += frame;
    }
    return bytes;
}

TEST_F(ConformanceFragmentationTest, TwoFragmentsAreOneMessageHoweverWritten) {
    ws_client client = member();
    const std::string say = sized_say("one", "in two fragments", 100);
    const std::vector<std::string> frames = fragment_frames(client, say, {50}, false);
    // In one write.
    client.send_raw(joined(frames));
    expect_said(client, "one", "in two fragments");
    // In pieces of 3 bytes.
    const std::string say2 = sized_say("two", "in two fragments, 3 bytes per write", 100);
    send_in_chunks(client, joined(fragment_frames(client, say2, {50}, false)), 3, milliseconds(1));
    expect_said(client, "two", "in two fragments, 3 bytes per write");
    // One frame per write, with a pause between them.
    const std::string say3 = sized_say("three", "in two fragments, a pause between", 100);
    for (const std::string& frame : fragment_frames(client, say3, {50}, false)) {
        client.send_raw(frame);
        std::this_thread::sleep_for(milliseconds(20));
    }
    expect_said(client, "three", "in two fragments, a pause between");
}

TEST_F(ConformanceFragmentationTest, PingsBetweenFragmentsAreAnsweredFirst) {
    ws_client client = member();
    const std::string say = sized_say("p", "with pings between fragments", 200);
    // One write, then pieces of 5 bytes, then one frame per write with pauses: the pongs come
    // back in order, each before the message completes.
    const std::vector<std::size_t> cuts = {20, 60, 61, 150};
    for (int way = 0; way < 3; ++way) {
        SCOPED_TRACE("way of writing " + std::to_string(way));
        const std::vector<std::string> frames = fragment_frames(client, say, cuts, true);
        if (way == 0) {
            client.send_raw(joined(frames));
        } else if (way == 1) {
            send_in_chunks(client, joined(frames), 5, milliseconds(1));
        } else {
            for (const std::string& frame : frames) {
                client.send_raw(frame);
                std::this_thread::sleep_for(milliseconds(10));
            }
        }
        for (std::size_t i = 1; i <= cuts.size(); ++i) {
            expect_pong(client, "ping " + std::to_string(i));
        }
        expect_said(client, "p", "with pings between fragments");
    }
}

TEST_F(ConformanceFragmentationTest, OneByteFragmentsAndEmptyFragmentsMakeOneMessage) {
    ws_client client = member();
    const std::string say = sized_say("bytes", "one byte per fragment", 80);
    client.send_text(say, 1);
    expect_said(client, "bytes", "one byte per fragment");

    // Empty fragments at the start, in the middle and at the end change nothing.
    const std::string say2 = sized_say("empty", "with empty fragments", 80);
    std::string bytes = client.encode_frame(opcode::text, "", {.fin = false});
    bytes += client.encode_frame(opcode::continuation, say2.substr(0, 40), {.fin = false});
    bytes += client.encode_frame(opcode::continuation, "", {.fin = false});
    bytes += client.encode_frame(opcode::continuation, say2.substr(40), {.fin = false});
    bytes += client.encode_frame(opcode::continuation, "");
    client.send_raw(bytes);
    expect_said(client, "empty", "with empty fragments");

    // All fragments empty: an empty message, which is not a request.
    bytes = client.encode_frame(opcode::text, "", {.fin = false});
    bytes += client.encode_frame(opcode::continuation, "", {.fin = false});
    bytes += client.encode_frame(opcode::continuation, "");
    client.send_raw(bytes);
    expect_error(client, "bad_json");
}

TEST_F(ConformanceFragmentationTest, FragmentedControlFramesAre1002) {
    // RFC 6455 section 5.5: control frames must not be fragmented.
    for (std::uint8_t op : {opcode::ping, opcode::pong, opcode::close}) {
        const std::string payload = op == opcode::close ? close_payload(1000) : std::string("frag");
        expect_violation("opcode " + std::to_string(op) + " in two fragments", 1002, [op, payload](ws_client& c) {
            std::string bytes = c.encode_frame(op, payload.substr(0, 1), {.fin = false});
            bytes += c.encode_frame(opcode::continuation, payload.substr(1));
            c.send_raw(bytes);
        });
    }
    expect_violation("unfinished ping between text fragments", 1002, [](ws_client& c) {
        std::string bytes = c.encode_frame(opcode::text, R"({"type":)", {.fin = false});
        bytes += c.encode_frame(opcode::ping, "p", {.fin = false});
        c.send_raw(bytes);
    });
}

TEST_F(ConformanceFragmentationTest, ContinuationWithoutAMessageIs1002HoweverWritten) {
    const std::string request = R"({"type":"users","id":1})";
    for (bool fin : {true, false}) {
        const std::string what = fin ? "final continuation" : "unfinished continuation";
        expect_violation(what + " in one write", 1002,
                         [&](ws_client& c) { c.send_frame(opcode::continuation, request, {.fin = fin}); });
        expect_violation(what + " byte by byte", 1002, [&](ws_client& c) {
            send_in_chunks(c, c.encode_frame(opcode::continuation, request, {.fin = fin}), 1, milliseconds(1));
        });
        expect_violation(what + " and the rest of a message", 1002, [&](ws_client& c) {
            std::string bytes = c.encode_frame(opcode::continuation, request.substr(0, 10), {.fin = fin});
            bytes += c.encode_frame(opcode::text, request.substr(10));
            c.send_raw(bytes);
        });
    }
}

TEST_F(ConformanceFragmentationTest, ContinuationAfterACompleteMessageAnswersItThenCloses) {
    // Text (not final), continuation (final): a complete message, which is answered. Then a
    // continuation with no message in progress: 1002, and the final text after it is not read.
    ws_client client = member();
    const std::string say = sized_say("before", "before the violation", 120);
    std::string bytes = client.encode_frame(opcode::text, say.substr(0, 60), {.fin = false});
    bytes += client.encode_frame(opcode::continuation, say.substr(60));
    bytes += client.encode_frame(opcode::continuation, "orphan", {.fin = false});
    bytes += client.encode_frame(opcode::text, sized_say("after", "after the violation", 120));
    client.send_raw(bytes);
    const close_outcome outcome = read_to_close(client);
    EXPECT_EQ(outcome.code, 1002);
    EXPECT_EQ(count_if(outcome.messages, is_chat("before the violation")), 1u);
    EXPECT_EQ(count_if(outcome.messages, is_chat("after the violation")), 0u);
}

TEST_F(ConformanceFragmentationTest, OrphanContinuationAfterAValidMessageAnswersItThenCloses) {
    ws_client client = member();
    expect_answered_then_closed(client, client.encode_frame(opcode::continuation, "orphan"), 1002);
}

TEST_F(ConformanceFragmentationTest, NewDataFrameInsideAFragmentedMessageIs1002) {
    // A text or binary frame while a message is unfinished (text and continuation are covered by
    // the RFC 6455 suite; here the message in progress is preceded by a valid one).
    ws_client client = member();
    std::string bad = client.encode_frame(opcode::text, R"({"type":)", {.fin = false});
    bad += client.encode_frame(opcode::text, R"("users","id":2})");
    expect_answered_then_closed(client, bad, 1002);

    ws_client second = member();
    std::string binary = second.encode_frame(opcode::text, R"({"type":)", {.fin = false});
    binary += second.encode_frame(opcode::binary, "\x01");
    expect_answered_then_closed(second, binary, 1002);
}

}  // namespace
}  // namespace parley::integration
