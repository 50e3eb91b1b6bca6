// Conformance group 7, close handling (after the Autobahn server cases 7.x): the server answers a
// close frame by echoing its code and then ends TCP, acts on nothing the client sends after its
// close, and fails the connection for close frames that are malformed (1002) or whose reason is
// not UTF-8 (1007) (RFC 6455 sections 5.5.1, 7.1, 7.4).
#include "conformance_support.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace parley::integration {
namespace {

class ConformanceCloseTest : public ws_conformance_test {};

std::uint16_t code_of(const ws_frame& frame) {
    if (frame.payload.size() < 2) {
        return 1005;  // no status code (RFC 6455 section 7.1.5)
    }
    return static_cast<std::uint16_t>(static_cast<unsigned char>(frame.payload[0]) << 8 |
                                      static_cast<unsigned char>(frame.payload[1]));
}

// The frames until the end of TCP must be exactly one close frame, with code.
void expect_only_close(const std::vector<ws_frame>& frames, std::uint16_t code) {
    ASSERT_EQ(frames.size(), 1u) << "expected only the close frame, got " << frames.size() << " frames";
    EXPECT_EQ(frames[0].opcode, opcode::close);
    EXPECT_EQ(code_of(frames[0]), code);
}

TEST_F(ConformanceCloseTest, MessageThenCloseIsAnsweredThenEchoed) {
    ws_client client = member();
    std::string bytes = client.encode_frame(opcode::text, sized_say("m", "before the close", 100));
    bytes += client.encode_frame(opcode::close, close_payload(1000));
    client.send_raw(bytes);
    const close_outcome outcome = read_to_close(client);
    EXPECT_EQ(outcome.code, 1000);
    EXPECT_EQ(count_if(outcome.messages, is_chat("before the close")), 1u);
}

TEST_F(ConformanceCloseTest, NothingAfterTheCloseIsActedOn) {
    // A second close, a ping, a request, an invalid frame: all ignored; the only frame back is the
    // one close. An observer in the room shows that the say after the close was not carried out
    // (its sender could not tell: nothing is sent to it after its close).
    ws_client observer = member();
    const std::vector<std::pair<std::string, std::function<std::string(ws_client&)>>> afters = {
        {"second close", [](ws_client& c) { return c.encode_frame(opcode::close, close_payload(1001)); }},
        {"ping", [](ws_client& c) { return c.encode_frame(opcode::ping, "after close"); }},
        {"say", [](ws_client& c) { return c.encode_frame(opcode::text, sized_say("late", "after close", 100)); }},
        {"invalid frame", [](ws_client& c) { return c.encode_frame(opcode::text, "\xff", {.rsv = 4}); }},
    };
    for (const auto& [what, after] : afters) {
        SCOPED_TRACE(what);
        ws_client client = member();
        std::string bytes = client.encode_frame(opcode::close, close_payload(1000));
        bytes += after(client);
        client.send_raw(bytes);
        expect_only_close(frames_to_eof(client), 1000);
        // Its leave reaches the room before the next member joins: else the next one could get
        // that presence event between its joined and its close.
        read_until(observer, [](const json& e) {
            return e.value("type", "") == "presence" && e.value("event", "") != "join";
        });
    }
    // The room's order puts anything said before this line ahead of it.
    observer.send_text(sized_say("sync", "observer sync", 100));
    const std::vector<json> seen = read_until(observer, is_chat("observer sync"));
    EXPECT_EQ(count_if(seen, is_chat("after close")), 0u);
}

TEST_F(ConformanceCloseTest, CloseInsideAFragmentedMessageIsEchoed) {
    // A close frame is a control frame: it may come between fragments, and it ends the connection
    // normally; the message's continuation after it is ignored.
    ws_client client = member();
    const std::string say = sized_say("f", "never completed", 100);
    std::string bytes = client.encode_frame(opcode::text, say.substr(0, 40), {.fin = false});
    bytes += client.encode_frame(opcode::close, close_payload(1000));
    bytes += client.encode_frame(opcode::continuation, say.substr(40));
    client.send_raw(bytes);
    expect_only_close(frames_to_eof(client), 1000);
}

TEST_F(ConformanceCloseTest, SeveralMessagesThenCloseThenPing) {
    // Everything before the close is answered first; the ping after it is not.
    ws_client client = member();
    std::string bytes;
    for (int i = 0; i < 20; ++i) {
        bytes += client.encode_frame(opcode::text, sized_say("m" + std::to_string(i), "message " + std::to_string(i), 2000));
    }
    bytes += client.encode_frame(opcode::close, close_payload(1000));
    bytes += client.encode_frame(opcode::ping, "after close");
    client.send_raw(bytes);
    const std::vector<ws_frame> frames = frames_to_eof(client);
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(frames.back().opcode, opcode::close);
    EXPECT_EQ(code_of(frames.back()), 1000);
    std::vector<json> messages;
    for (std::size_t i = 0; i + 1 < frames.size(); ++i) {
        ASSERT_EQ(frames[i].opcode, opcode::text) << "frame " << i;
        messages.push_back(json::parse(frames[i].payload));
    }
    for (int i = 0; i < 20; ++i) {
        EXPECT_EQ(count_if(messages, is_chat("message " + std::to_string(i))), 1u) << i;
    }
}

TEST_F(ConformanceCloseTest, CloseWithoutPayloadIsAnsweredWithoutCode) {
    // No status in the client's close: the server's close carries none either (reported as 1005).
    ws_client client = member();
    client.send_frame(opcode::close, "");
    expect_only_close(frames_to_eof(client), 1005);
}

TEST_F(ConformanceCloseTest, CloseReasonsUpToTheControlFrameLimitAreEchoed) {
    for (const std::string& reason : {std::string(), std::string("Hello World!"),
                                     std::string("\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5 reason"),
                                     std::string(123, 'r')}) {
        SCOPED_TRACE("reason of " + std::to_string(reason.size()) + " bytes");
        ws_client client = connect();
        client.send_frame(opcode::close, close_payload(1000, reason));
        expect_only_close(frames_to_eof(client), 1000);
    }
}

TEST_F(ConformanceCloseTest, CloseOver125BytesIs1002) {
    // A 124-byte reason makes a 126-byte control frame (RFC 6455 section 5.5).
    expect_violation("close with a 124-byte reason", 1002,
                     [](ws_client& c) { c.send_frame(opcode::close, close_payload(1000, std::string(124, 'r'))); });
}

TEST_F(ConformanceCloseTest, CloseWithOneBytePayloadIs1002) {
    for (const char byte : {'\x00', '\x03', '\xe8'}) {
        expect_violation("one-byte close " + hex(std::string(1, byte)), 1002,
                         [byte](ws_client& c) { c.send_frame(opcode::close, std::string(1, byte)); });
    }
}

TEST_F(ConformanceCloseTest, ReasonThatIsNotUtf8Is1007) {
    for (const std::string bad : {"\xff", "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80" "edited",
                                  "\xc0\xaf", "ok\xe2\x82"}) {
        expect_violation("close reason " + hex(bad), 1007,
                         [&bad](ws_client& c) { c.send_frame(opcode::close, close_payload(1000, bad)); });
    }
}

TEST_F(ConformanceCloseTest, ValidCodesAreEchoed) {
    // Defined codes a peer may send (1000-1003, 1007-1011, and 1012-1014 registered with IANA
    // since), and the ranges for libraries (3000-3999) and applications (4000-4999).
    for (std::uint16_t code : {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999,
                               4000, 4999}) {
        SCOPED_TRACE("code " + std::to_string(code));
        ws_client client = connect();
        client.send_frame(opcode::close, close_payload(code, "reason"));
        expect_only_close(frames_to_eof(client), code);
    }
}

TEST_F(ConformanceCloseTest, CodesThatMayNotBeSentAre1002) {
    // 0-999 are unused, 1004 reserved, 1005, 1006 and 1015 are for local reporting only,
    // 1016-2999 unassigned, 5000 and up undefined (RFC 6455 section 7.4).
    for (std::uint16_t code : {0, 1, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535}) {
        expect_violation("close code " + std::to_string(code), 1002,
                         [code](ws_client& c) { c.send_frame(opcode::close, close_payload(code)); });
    }
}

TEST_F(ConformanceCloseTest, CloseWrittenByteByByteIsEchoed) {
    ws_client client = member();
    send_in_chunks(client, client.encode_frame(opcode::close, close_payload(4321, "slowly")), 1, milliseconds(1));
    expect_only_close(frames_to_eof(client), 4321);
}

TEST_F(ConformanceCloseTest, LoggedInUserIsGoneAfterTheCloseHandshake) {
    // The handshake ends the session: the name is free again for a new connection.
    {
        ws_client alice = login("alice");
        alice.send_close(1000);
        expect_only_close(frames_to_eof(alice), 1000);
    }
    ws_client again = connect();
    EXPECT_EQ(login_retrying(again, "alice").value("type", ""), "welcome");
}

TEST_F(ConformanceCloseTest, LastMessageArrivingWithTheFinEndsTheSessionAtOnce) {
    // A client may end TCP without a close frame (RFC 6455 section 7.1.5, 1006 "abnormal
    // closure"). TCP_CORK holds the say back until shutdown() puts the FIN on the same segment,
    // so the server learns of the data and of the end of the stream from one readiness event.
    ws_client observer = member();
    ws_client alice = login("alice");
    join_room(alice, "r");
    const int on = 1;
    ASSERT_EQ(::setsockopt(alice.fd(), IPPROTO_TCP, TCP_CORK, &on, sizeof on), 0);
    alice.send_frame(opcode::text, sized_say("last", "last words", 100));
    ASSERT_EQ(::shutdown(alice.fd(), SHUT_WR), 0);
    // Alice's socket stays open on this side, so only the server can end her session: it must do
    // so at once, not when the idle timeout (60 s) runs out.
    read_until(observer, is_chat("last words"));
    read_until(observer, [](const json& m) {
        return m.value("type", "") == "system" && m.value("text", "") == "alice disconnected";
    }, milliseconds(2000));
    EXPECT_TRUE(alice.wait_eof(milliseconds(2000))) << "the server did not close its side";
}

}  // namespace
}  // namespace parley::integration
