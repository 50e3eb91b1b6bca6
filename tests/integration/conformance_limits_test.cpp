// Conformance group 9, limits and performance (after the Autobahn server cases 9.x): large text
// messages up to the message limit arrive intact in one frame, in fragments of many sizes and
// in writes of many sizes; one byte over the limit is 1009; long runs of messages are all
// answered in order. The time bounds only guard against a hang; nothing here measures speed.
#include "conformance_support.hpp"

namespace parley::integration {
namespace {

constexpr std::size_t limit = 1024 * 1024;

// The daemon with a 1 MiB message limit, and a request rate that a run of a thousand messages
// does not reach.
class ConformanceLimitsTest : public ws_conformance_test {
protected:
    std::vector<std::string> daemon_args() const override {
        return {"--max-message", std::to_string(limit), "--rate-limit", "100000", "--rate-burst", "100000"};
    }
};

// The longest text a say may carry (4096 bytes), in a cycle of 61 characters (prime, unlike
// the mask's period of 4 and any fragment size here), so a piece moved, lost or doubled by
// reassembly shows.
std::string long_text(std::size_t seed) {
    static constexpr std::string_view alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxy";
    static_assert(alphabet.size() == 61);
    std::string text(4096, ' ');
    for (std::size_t i = 0; i < text.size(); ++i) {
        text[i] = alphabet[(i + seed) % alphabet.size()];
    }
    return text;
}

// message as a text frame and continuation frames of at most size bytes each.
std::string fragmented(ws_client& client, std::string_view message, std::size_t size) {
    std::string bytes;
    for (std::size_t at = 0; at < message.size(); at += size) {
        bytes += client.encode_frame(at == 0 ? opcode::text : opcode::continuation, message.substr(at, size),
                                     {.fin = at + size >= message.size()});
    }
    return bytes;
}

TEST_F(ConformanceLimitsTest, LargeMessagesInOneFrame) {
    ws_client client = member();
    for (std::size_t size : {std::size_t{64 * 1024}, std::size_t{256 * 1024}, limit - 1, limit}) {
        SCOPED_TRACE("message of " + std::to_string(size) + " bytes");
        const std::string id = "one" + std::to_string(size);
        const std::string text = long_text(size);
        client.send_raw(client.encode_frame(opcode::text, sized_say(id, text, size)), hang_guard);
        expect_said(client, id, text, hang_guard);
    }
}

TEST_F(ConformanceLimitsTest, MessageOfTheLimitInFragmentsOfManySizes) {
    ws_client client = member();
    for (std::size_t fragment : {64, 256, 1024, 4096, 16384, 65536, 262144, 1048576}) {
        SCOPED_TRACE("fragments of " + std::to_string(fragment) + " bytes");
        const std::string id = "frag" + std::to_string(fragment);
        const std::string text = long_text(fragment);
        client.send_raw(fragmented(client, sized_say(id, text, limit), fragment), hang_guard);
        expect_said(client, id, text, hang_guard);
    }
}

TEST_F(ConformanceLimitsTest, MessageOfTheLimitInWritesOfManySizes) {
    ws_client client = member();
    for (std::size_t chunk : {997, 4096, 65536, 131071}) {
        SCOPED_TRACE("writes of " + std::to_string(chunk) + " bytes");
        const std::string id = "write" + std::to_string(chunk);
        const std::string text = long_text(chunk);
        send_in_chunks(client, client.encode_frame(opcode::text, sized_say(id, text, limit)), chunk);
        expect_said(client, id, text, hang_guard);
    }
}

TEST_F(ConformanceLimitsTest, MessageInOneByteFragments) {
    // 65,536 frames of one byte each: 7 bytes of header per byte of message.
    ws_client client = member();
    const std::string text = long_text(1);
    client.send_raw(fragmented(client, sized_say("tiny", text, 64 * 1024), 1), hang_guard);
    expect_said(client, "tiny", text, hang_guard);
}

TEST_F(ConformanceLimitsTest, PingsBetweenTheFragmentsOfALargeMessageAreAnswered) {
    ws_client client = member();
    const std::string text = long_text(7);
    const std::string say = sized_say("pinged", text, limit);
    constexpr std::size_t fragment = 64 * 1024;
    std::string bytes;
    for (std::size_t at = 0, i = 0; at < say.size(); at += fragment, ++i) {
        if (i > 0) {
            bytes += client.encode_frame(opcode::ping, "ping " + std::to_string(i));
        }
        bytes += client.encode_frame(i == 0 ? opcode::text : opcode::continuation,
                                     std::string_view(say).substr(at, fragment),
                                     {.fin = at + fragment >= say.size()});
    }
    client.send_raw(bytes, hang_guard);
    for (std::size_t i = 1; i < limit / fragment; ++i) {
        expect_pong(client, "ping " + std::to_string(i), hang_guard);
    }
    expect_said(client, "pinged", text, hang_guard);
}

TEST_F(ConformanceLimitsTest, OneByteOverTheLimitIs1009) {
    // In one frame, refused from the header: only the header and a little payload are written.
    expect_violation("one frame of limit + 1", 1009, [](ws_client& c) {
        c.send_raw(c.encode_frame(opcode::text, std::string(limit + 1, ' ')).substr(0, 1000));
    });
    // In fragments: the limit exactly is assembled, then a one-byte continuation passes it.
    expect_violation("fragments reaching limit + 1", 1009, [](ws_client& c) {
        std::string bytes;
        for (std::size_t i = 0; i < limit / (64 * 1024); ++i) {
            bytes += c.encode_frame(i == 0 ? opcode::text : opcode::continuation, std::string(64 * 1024, ' '),
                                    {.fin = false});
        }
        bytes += c.encode_frame(opcode::continuation, " ");
        c.send_raw(bytes, hang_guard);
    });
}

TEST_F(ConformanceLimitsTest, AThousandMessagesInARowAreAnsweredInOrder) {
    ws_client client = member();
    constexpr int count = 1000;
    std::string bytes;
    for (int i = 0; i < count; ++i) {
        const std::string id = std::to_string(i);
        bytes += client.encode_frame(opcode::text, sized_say(id, "message " + id, 200));
    }
    client.send_raw(bytes, hang_guard);
    const std::vector<json> answers = read_messages(client, 2 * count, hang_guard);
    std::vector<std::string> texts;
    std::vector<std::string> acked;
    for (const json& answer : answers) {
        if (answer.value("type", "") == "message") {
            texts.push_back(answer.value("text", ""));
        } else if (answer.value("type", "") == "ack") {
            acked.push_back(answer.value("re", ""));
        } else {
            ADD_FAILURE() << "unexpected " << answer;
        }
    }
    ASSERT_EQ(texts.size(), static_cast<std::size_t>(count));
    ASSERT_EQ(acked.size(), static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        EXPECT_EQ(texts[i], "message " + std::to_string(i));
        EXPECT_EQ(acked[i], std::to_string(i));
    }
}

TEST_F(ConformanceLimitsTest, ManyFragmentedMessagesInARowAreAnsweredInOrder) {
    ws_client client = member();
    constexpr int count = 200;
    std::string bytes;
    for (int i = 0; i < count; ++i) {
        const std::string id = std::to_string(i);
        const std::string say = sized_say(id, "fragmented " + id, 4096);
        // Fragment sizes from 1 to 64 bytes, changing with every message.
        bytes += fragmented(client, say, 1 + static_cast<std::size_t>(i) % 64);
    }
    send_in_chunks(client, bytes, 65536);
    const std::vector<json> answers = read_messages(client, 2 * count, hang_guard);
    std::vector<std::string> texts;
    for (const json& answer : answers) {
        if (answer.value("type", "") == "message") {
            texts.push_back(answer.value("text", ""));
        }
    }
    ASSERT_EQ(texts.size(), static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        EXPECT_EQ(texts[i], "fragmented " + std::to_string(i));
    }
}

}  // namespace
}  // namespace parley::integration
