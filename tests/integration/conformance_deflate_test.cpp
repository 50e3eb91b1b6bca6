// Conformance groups 12 and 13, permessage-deflate (after the Autobahn server cases 12.x and
// 13.x, RFC 7692): the offers a client may make and what parley answers, compressed messages
// of many sizes both ways (whole and fragmented), and what a compressed message may not do.
// The client compresses and inflates with zlib of its own (tests/peer_deflate.hpp).
#include "conformance_support.hpp"
#include "tests/chat_like_text.hpp"
#include "tests/peer_deflate.hpp"

#include <algorithm>

namespace parley::integration {
namespace {

constexpr std::string_view always = "permessage-deflate; server_no_context_takeover; client_no_context_takeover";

class ConformanceDeflateTest : public ws_conformance_test {
protected:
    // Every message compressed, however short, as the Autobahn cases do.
    std::string daemon_config() const override { return "[server]\ncompression = \"on\"\ncompression_min_bytes = 0\n"; }

    // A member of room "r" whose upgrade offered `offer`.
    ws_client deflate_member(const std::string& offer = "permessage-deflate; client_max_window_bits") {
        ws_client client = login(fresh_user(), {.extensions = offer});
        join_room(client, "r");
        return client;
    }
};

using tests::client_deflate;
using tests::client_inflate;

std::string chat_text(std::size_t size, unsigned seed) { return tests::chat_like_text(size, seed); }

// Says texts of each size compressed (in fragments of `fragment` compressed bytes when > 0) and
// expects each acked and delivered back, as the Autobahn 12.x/13.x echo cases do.
void converse(ws_client& client, std::size_t fragment, unsigned seed) {
    for (std::size_t size : {16, 64, 256, 1024, 4096}) {
        SCOPED_TRACE("text of " + std::to_string(size) + " bytes");
        for (int i = 0; i < 3; ++i) {
            const std::string id = "m" + std::to_string(size) + "-" + std::to_string(i);
            const std::string text = chat_text(size, seed + static_cast<unsigned>(i));
            client.send_compressed(json{{"type", "say"}, {"room", "r"}, {"id", id}, {"text", text}}.dump(), fragment);
            expect_said(client, id, text);
        }
    }
}

TEST_F(ConformanceDeflateTest, EachOfferIsAnsweredAndCarriesAConversation) {
    // 13.1-13.6 and what browsers send: the response never names the client's window, always
    // asks for no context takeover both ways, and names the server's window when it was limited.
    struct offer_case {
        std::string offer;
        std::string expected;
    };
    const offer_case cases[] = {
        {"permessage-deflate", std::string(always)},
        {"permessage-deflate; client_max_window_bits", std::string(always)},
        {"permessage-deflate; client_no_context_takeover", std::string(always)},
        {"permessage-deflate; server_no_context_takeover", std::string(always)},
        {"permessage-deflate; client_max_window_bits=8", std::string(always)},
        {"permessage-deflate; client_max_window_bits=15", std::string(always)},
        {"permessage-deflate; server_max_window_bits=8", std::string(always) + "; server_max_window_bits=8"},
        {"permessage-deflate; server_max_window_bits=15", std::string(always) + "; server_max_window_bits=15"},
        {"permessage-deflate; server_no_context_takeover; server_max_window_bits=9",
         std::string(always) + "; server_max_window_bits=9"},
    };
    unsigned seed = 1;
    for (const offer_case& c : cases) {
        SCOPED_TRACE(c.offer);
        ws_client client = deflate_member(c.offer);
        EXPECT_EQ(client.agreed_extensions(), c.expected);
        converse(client, 0, seed++);
        // Every message came back compressed unless it was longer than a limited window, or
        // a reply of a few dozen bytes that compression would not shrink (it goes as it is).
        EXPECT_GT(client.compressed_received(), 0u);
        if (c.offer.find("server_max_window_bits=") == std::string::npos) {
            EXPECT_GE(client.compressed_received() + 2, client.messages_received());
        } else {
            EXPECT_LT(client.compressed_received(), client.messages_received());
        }
    }
}

TEST_F(ConformanceDeflateTest, SeveralOffersTheFirstAcceptableOneIsTaken) {
    // 13.7: offers in order of preference; one with an unknown parameter is skipped.
    ws_client client = deflate_member(
        "permessage-deflate; x_unknown=1, permessage-deflate; server_max_window_bits=10, permessage-deflate");
    EXPECT_EQ(client.agreed_extensions(), std::string(always) + "; server_max_window_bits=10");
    converse(client, 0, 50);
}

TEST_F(ConformanceDeflateTest, NoAcceptableOfferMeansAPlainConnection) {
    ws_client client = deflate_member("permessage-deflate; server_max_window_bits=7, x-webkit-deflate-frame");
    EXPECT_EQ(client.agreed_extensions(), "");
    client.send_json({{"type", "say"}, {"room", "r"}, {"id", "p"}, {"text", chat_text(500, 3)}});
    expect_said(client, "p", chat_text(500, 3));
    EXPECT_EQ(client.compressed_received(), 0u);
}

TEST_F(ConformanceDeflateTest, FragmentedCompressedMessagesAreReassembledThenInflated) {
    // 12.x with fragmentation: the compressed bytes in frames of 1, 7 and 100 bytes.
    ws_client client = deflate_member();
    for (std::size_t fragment : {std::size_t{1}, std::size_t{7}, std::size_t{100}}) {
        SCOPED_TRACE(fragment);
        const std::string text = chat_text(700, static_cast<unsigned>(fragment));
        const std::string id = "f" + std::to_string(fragment);
        client.send_compressed(json{{"type", "say"}, {"room", "r"}, {"id", id}, {"text", text}}.dump(), fragment);
        expect_said(client, id, text);
    }
}

TEST_F(ConformanceDeflateTest, LargeCompressedRequestsUpToTheMessageLimit) {
    // 12.x up to 64 KiB: the size is in a filler field the server reads past (sized_say).
    ws_client client = deflate_member();
    for (std::size_t size : {std::size_t{8 * 1024}, std::size_t{32 * 1024}, std::size_t{64 * 1024}}) {
        SCOPED_TRACE(size);
        const std::string id = "big" + std::to_string(size);
        client.send_compressed(sized_say(id, "large " + std::to_string(size), size), 4096);
        expect_said(client, id, "large " + std::to_string(size));
    }
}

TEST_F(ConformanceDeflateTest, CompressedAndPlainMembersGetTheSameMessages) {
    // One room, two members that negotiated and one that did not: the compressed members get
    // byte-identical frames (one compressed twin, shared), the plain one the plain frame.
    ws_client a = deflate_member();
    ws_client b = deflate_member("permessage-deflate");
    ws_client plain = member();
    const std::string text = chat_text(300, 9);
    plain.send_json({{"type", "say"}, {"room", "r"}, {"id", "s"}, {"text", text}});
    expect_said(plain, "s", text);
    std::vector<std::string> raw;
    for (ws_client* c : {&a, &b}) {
        for (;;) {
            auto frame = c->recv_frame();
            ASSERT_TRUE(frame);
            if (frame->opcode != opcode::text) {
                continue;
            }
            ASSERT_EQ(frame->rsv, 4) << "every message to a compressed member is compressed here";
            const json message = json::parse(client_inflate(frame->payload));
            if (message.value("type", "") == "message" && message.value("text", "") == text) {
                raw.push_back(frame->payload);
                break;
            }
        }
    }
    EXPECT_EQ(raw[0], raw[1]);
    EXPECT_EQ(plain.compressed_received(), 0u);
}

TEST_F(ConformanceDeflateTest, ADecompressionBombIs1009) {
    // 1 MiB of one letter is about a kilobyte compressed: far under the 64 KiB message limit
    // on the wire, far over it inflated.
    ws_client client = deflate_member();
    client.send_frame(opcode::text, client_deflate(std::string(1 << 20, 'a')), {.rsv = 4});
    EXPECT_EQ(read_to_close(client).code, 1009);
}

TEST_F(ConformanceDeflateTest, WhatIsNotDeflateDataIs1007) {
    ws_client client = deflate_member();
    client.send_frame(opcode::text, "\xff\xff\xff\xff\xff\xff", {.rsv = 4});
    EXPECT_EQ(read_to_close(client).code, 1007);
}

TEST_F(ConformanceDeflateTest, InvalidUtf8InsideACompressedMessageIs1007) {
    ws_client client = deflate_member();
    client.send_frame(opcode::text, client_deflate("{\"type\":\"say\",\"room\":\"r\",\"text\":\"\xc3\x28\"}"), {.rsv = 4});
    EXPECT_EQ(read_to_close(client).code, 1007);
}

TEST_F(ConformanceDeflateTest, RsvOneOnAContinuationOrAControlFrameIs1002) {
    {
        ws_client client = deflate_member();
        const std::string compressed = client_deflate(R"({"type":"users","id":"1"})");
        client.send_frame(opcode::text, compressed.substr(0, 3), {.fin = false, .rsv = 4});
        client.send_frame(opcode::continuation, compressed.substr(3), {.rsv = 4});
        EXPECT_EQ(read_to_close(client).code, 1002);
    }
    {
        ws_client client = deflate_member();
        client.send_frame(opcode::ping, "p", {.rsv = 4});
        EXPECT_EQ(read_to_close(client).code, 1002);
    }
    {
        ws_client client = deflate_member();
        client.send_frame(opcode::text, R"({"type":"users","id":"1"})", {.rsv = 2});
        EXPECT_EQ(read_to_close(client).code, 1002);
    }
}

TEST_F(ConformanceDeflateTest, UncompressedMessagesStillWorkOnACompressedConnection) {
    // Compression is per message: a client may send any message as it is.
    ws_client client = deflate_member();
    client.send_json({{"type", "say"}, {"room", "r"}, {"id", "u"}, {"text", "as it is"}});
    expect_said(client, "u", "as it is");
}

// The default configuration: compression off, so an offer is simply not taken up.
class ConformanceDeflateOffTest : public ws_conformance_test {};

TEST_F(ConformanceDeflateOffTest, AnOfferToADaemonWithCompressionOffIsIgnored) {
    ws_client client = login("offered", {.extensions = "permessage-deflate; client_max_window_bits"});
    EXPECT_EQ(client.agreed_extensions(), "");
    join_room(client, "r");
    client.send_json({{"type", "say"}, {"room", "r"}, {"id", "x"}, {"text", chat_text(1000, 4)}});
    expect_said(client, "x", chat_text(1000, 4));
    EXPECT_EQ(client.compressed_received(), 0u);
    // And RSV1 is then the violation it always was.
    client.send_frame(opcode::text, client_deflate(R"({"type":"users","id":"1"})"), {.rsv = 4});
    EXPECT_EQ(read_to_close(client).code, 1002);
}

// The shipped threshold: short replies go as they are, longer messages compressed.
class ConformanceDeflateThresholdTest : public ws_conformance_test {
protected:
    std::string daemon_config() const override { return "[server]\ncompression = \"on\"\n"; }
};

TEST_F(ConformanceDeflateThresholdTest, OnlyMessagesOfAtLeastTheMinimumAreCompressed) {
    ws_client client = login("t1", {.extensions = "permessage-deflate"});
    join_room(client, "r");
    client.send_json({{"type", "say"}, {"room", "r"}, {"id", "short"}, {"text", "hi"}});
    expect_said(client, "short", "hi");
    EXPECT_EQ(client.compressed_received(), 0u) << "an ack and a message of ~100 bytes stay plain";
    const std::string text = chat_text(600, 5);
    client.send_json({{"type", "say"}, {"room", "r"}, {"id", "long"}, {"text", text}});
    expect_said(client, "long", text);
    EXPECT_EQ(client.compressed_received(), 1u) << "the 600-byte message, not its ack";
}

}  // namespace
}  // namespace parley::integration
