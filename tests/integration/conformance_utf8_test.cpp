// Conformance group 6, UTF-8 (after the Autobahn server cases 6.x, which follow Markus Kuhn's
// UTF-8 decoder test): valid text arrives unchanged however it is fragmented; invalid text
// (RFC 3629: bad bytes, overlong forms, surrogates, code points above U+10FFFF, cut-off
// sequences) fails the connection with 1007, also split across fragments, and as soon as the
// bad bytes arrive (RFC 6455 sections 5.6 and 8.1).
#include "conformance_support.hpp"

namespace parley::integration {
namespace {

class ConformanceUtf8Test : public ws_conformance_test {};

struct sequence {
    const char* what;
    std::string bytes;
};

const sequence valid_sequences[] = {
    {"greek kosme", "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5"},
    {"U+0080, first of 2 bytes", "\xc2\x80"},
    {"U+0800, first of 3 bytes", "\xe0\xa0\x80"},
    {"U+10000, first of 4 bytes", "\xf0\x90\x80\x80"},
    {"U+007F, last of 1 byte", "\x7f"},
    {"U+07FF, last of 2 bytes", "\xdf\xbf"},
    {"U+FFFF, last of 3 bytes", "\xef\xbf\xbf"},
    {"U+10FFFF, the last code point", "\xf4\x8f\xbf\xbf"},
    {"U+D7FF, before the surrogates", "\xed\x9f\xbf"},
    {"U+E000, after the surrogates", "\xee\x80\x80"},
    {"U+FFFD, replacement character", "\xef\xbf\xbd"},
    {"U+FEFF, byte order mark", "\xef\xbb\xbf"},
    // Noncharacters are valid UTF-8 (Unicode corrigendum 9).
    {"U+FDD0, noncharacter", "\xef\xb7\x90"},
    {"U+FFFE, noncharacter", "\xef\xbf\xbe"},
    {"U+1FFFF, noncharacter", "\xf0\x9f\xbf\xbf"},
    {"U+10FFFE, noncharacter", "\xf4\x8f\xbf\xbe"},
    {"every length in a row", "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z"},
};

const sequence invalid_sequences[] = {
    {"lone continuation 80", "\x80"},
    {"lone continuation bf", "\xbf"},
    {"continuations 80 bf 80", "\x80\xbf\x80"},
    {"2-byte lead then space", "\xc2\x20"},
    {"3-byte lead then space", "\xe0\x20"},
    {"4-byte lead then space", "\xf0\x20"},
    {"2-byte lead, bad continuation", "\xc3\x28"},
    {"3-byte, bad second continuation", "\xe2\x82\x28"},
    {"4-byte, bad third continuation", "\xf0\x90\x80\x28"},
    {"5-byte form", "\xf8\x88\x80\x80\x80"},
    {"6-byte form", "\xfc\x84\x80\x80\x80\x80"},
    {"byte fe", "\xfe"},
    {"byte ff", "\xff"},
    {"fe fe ff ff", "\xfe\xfe\xff\xff"},
    {"overlong '/' in 2 bytes", "\xc0\xaf"},
    {"overlong '/' in 3 bytes", "\xe0\x80\xaf"},
    {"overlong '/' in 4 bytes", "\xf0\x80\x80\xaf"},
    {"largest overlong in 2 bytes", "\xc1\xbf"},
    {"largest overlong in 3 bytes", "\xe0\x9f\xbf"},
    {"largest overlong in 4 bytes", "\xf0\x8f\xbf\xbf"},
    {"overlong NUL in 2 bytes", "\xc0\x80"},
    {"overlong NUL in 3 bytes", "\xe0\x80\x80"},
    {"surrogate U+D800", "\xed\xa0\x80"},
    {"surrogate U+DB7F", "\xed\xad\xbf"},
    {"surrogate U+DBFF", "\xed\xaf\xbf"},
    {"surrogate U+DC00", "\xed\xb0\x80"},
    {"surrogate U+DFFF", "\xed\xbf\xbf"},
    {"surrogate pair U+D800 U+DC00", "\xed\xa0\x80\xed\xb0\x80"},
    {"U+110000", "\xf4\x90\x80\x80"},
    {"lead f5", "\xf5\x80\x80\x80"},
    {"lead f7, old U+1FFFFF", "\xf7\xbf\xbf\xbf"},
    {"kosme, then a surrogate", "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80" "edited"},
};

// A request with bytes inside a JSON string; the bytes decide whether the text is valid UTF-8.
std::string say_with(std::string_view id, std::string_view bytes) {
    std::string text = "<";
    text.append(bytes).append(">");
    return sized_say(id, text, sized_say_minimum(id, text));
}

TEST_F(ConformanceUtf8Test, ValidTextArrivesUnchangedInOneFrameAndByteByByte) {
    ws_client client = member();
    int n = 0;
    for (const sequence& s : valid_sequences) {
        SCOPED_TRACE(s.what);
        std::string expected = "<";
        expected.append(s.bytes).append(">");
        const std::string whole = "w" + std::to_string(++n);
        client.send_text(say_with(whole, s.bytes));
        expect_said(client, whole, expected);
        const std::string bytes = "b" + std::to_string(n);
        client.send_text(say_with(bytes, s.bytes), 1);
        expect_said(client, bytes, expected);
    }
}

TEST_F(ConformanceUtf8Test, ValidTextSplitInsideACharacterIsAccepted) {
    // Two fragments cut at every byte of the sequence, so each multi-byte character is split at
    // each of its inner boundaries once.
    ws_client client = member();
    int n = 0;
    for (const sequence& s : valid_sequences) {
        SCOPED_TRACE(s.what);
        std::string expected = "<";
        expected.append(s.bytes).append(">");
        const std::string prefix = "s" + std::to_string(++n) + "-";
        std::string frames;
        for (std::size_t cut = 0; cut <= s.bytes.size(); ++cut) {
            const std::string request = say_with(prefix + std::to_string(cut), s.bytes);
            const std::size_t at = request.find('<') + 1 + cut;
            frames += client.encode_frame(opcode::text, std::string_view(request).substr(0, at), {.fin = false});
            frames += client.encode_frame(opcode::continuation, std::string_view(request).substr(at));
        }
        client.send_raw(frames);
        for (std::size_t cut = 0; cut <= s.bytes.size(); ++cut) {
            expect_said(client, prefix + std::to_string(cut), expected);
        }
    }
}

TEST_F(ConformanceUtf8Test, NulIsValidUtf8ButNotValidJson) {
    // U+0000 is valid UTF-8, so the frame is accepted; raw in a JSON string it is not JSON.
    ws_client client = member();
    client.send_text(say_with("nul", std::string(1, '\0')));
    expect_error(client, "bad_json");
    client.send_text(say_with("ok", "fine"));
    expect_said(client, "ok", "<fine>");
}

TEST_F(ConformanceUtf8Test, InvalidTextIs1007InOneFrameAndByteByByte) {
    for (const sequence& s : invalid_sequences) {
        expect_violation(std::string(s.what) + " in one frame: " + hex(s.bytes), 1007,
                         [&s](ws_client& c) { c.send_text(say_with("x", s.bytes)); });
        expect_violation(std::string(s.what) + " one byte per fragment: " + hex(s.bytes), 1007,
                         [&s](ws_client& c) { c.send_text(say_with("x", s.bytes), 1); });
    }
}

TEST_F(ConformanceUtf8Test, InvalidSequenceSplitAcrossFragmentsIs1007) {
    // Cut after each byte of the sequence: the first fragment ends in the middle of it (or right
    // before it) and the second fragment makes it invalid.
    for (const sequence& s : invalid_sequences) {
        if (s.bytes.size() < 2) {
            continue;
        }
        for (std::size_t cut = 1; cut < s.bytes.size(); ++cut) {
            expect_violation(std::string(s.what) + " cut after " + std::to_string(cut) + " bytes", 1007,
                             [&s, cut](ws_client& c) {
                                 const std::string request = say_with("x", s.bytes);
                                 const std::size_t at = request.find('<') + 1 + cut;
                                 std::string bytes = c.encode_frame(opcode::text, request.substr(0, at), {.fin = false});
                                 bytes += c.encode_frame(opcode::continuation, request.substr(at));
                                 c.send_raw(bytes);
                             });
        }
    }
}

TEST_F(ConformanceUtf8Test, MessageEndingInsideACharacterIs1007) {
    // Every byte is a valid prefix; only the end of the message makes it invalid.
    for (const std::string tail : {"\xc3", "\xe2\x82", "\xf0\x9f\x98"}) {
        std::string request = R"({"type":"users","id":1})";
        request.append(tail);
        expect_violation("one frame ending in " + hex(tail), 1007,
                         [&request](ws_client& c) { c.send_text(request); });
        expect_violation("last fragment ending in " + hex(tail), 1007,
                         [&request](ws_client& c) { c.send_text(request, 10); });
        expect_violation("last of empty fragments ending in " + hex(tail), 1007, [&request](ws_client& c) {
            std::string bytes = c.encode_frame(opcode::text, request, {.fin = false});
            bytes += c.encode_frame(opcode::continuation, "");
            c.send_raw(bytes);
        });
    }
}

TEST_F(ConformanceUtf8Test, InvalidFragmentFailsBeforeTheMessageEnds) {
    // Fail fast (RFC 6455 section 8.1 allows it): three fragments, the second holds U+110000
    // written as a 4-byte sequence. The server closes with 1007 while the third is unsent.
    ws_client client = member();
    client.send_frame(opcode::text, "{\"type\":\"say\",\"room\":\"r\",\"text\":\"\xce\xba\xe1\xbd\xb9",
                      {.fin = false});
    client.send_frame(opcode::continuation, "\xf4\x90\x80\x80", {.fin = false});
    const close_outcome outcome = read_to_close(client);
    EXPECT_EQ(outcome.code, 1007);
    EXPECT_TRUE(outcome.messages.empty());
}

TEST_F(ConformanceUtf8Test, InvalidBytesFailBeforeTheFrameEnds) {
    // The same inside one frame: its header announces 1,000 bytes, the bad sequence comes in the
    // first 100 and the rest is never written.
    ws_client client = member();
    std::string request = "{\"type\":\"say\",\"room\":\"r\",\"text\":\"\xce\xba\xed\xa0\x80";
    request.resize(1000, ' ');
    const std::string frame = client.encode_frame(opcode::text, request);
    client.send_raw(std::string_view(frame).substr(0, 100));
    const close_outcome outcome = read_to_close(client);
    EXPECT_EQ(outcome.code, 1007);
    EXPECT_TRUE(outcome.messages.empty());
}

}  // namespace
}  // namespace parley::integration
