// RESP2 without sockets: commands written, replies found complete across pieces and read.

#include "rooms/cluster/resp_protocol.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace parley::cluster::resp {
namespace {

using status = reply_scanner::status;

// Every complete reply in `bytes` fed in pieces of `piece` bytes, as a connection reads them.
std::vector<std::string> replies_in_pieces(std::string_view bytes, std::size_t piece, bool* malformed = nullptr) {
    std::vector<std::string> out;
    reply_scanner scanner;
    std::string unread;
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
        unread.append(bytes.substr(at, piece));
        while (true) {
            std::size_t length = 0;
            const status s = scanner.scan(unread, length);
            if (s == status::malformed) {
                if (malformed != nullptr) {
                    *malformed = true;
                }
                return out;
            }
            if (s == status::incomplete) {
                break;
            }
            out.push_back(unread.substr(0, length));
            unread.erase(0, length);
        }
    }
    return out;
}

TEST(RespProtocol, CommandIsAnArrayOfBulkStrings) {
    std::string out;
    const std::array<std::string_view, 3> argv = {"SET", "k", std::string_view("a\0\r\nb", 5)};
    append_command(out, argv);
    EXPECT_EQ(out, std::string("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\na\0\r\nb\r\n", 31));
    const std::array<std::string_view, 2> empty = {"GET", ""};
    append_command(out, empty);
    EXPECT_TRUE(out.ends_with("*2\r\n$3\r\nGET\r\n$0\r\n\r\n"));
}

TEST(RespProtocol, EveryKindIsRead) {
    EXPECT_EQ(parse_reply("+OK\r\n").type, redis_reply::kind::status);
    EXPECT_EQ(parse_reply("+OK\r\n").text, "OK");
    const redis_reply error = parse_reply("-ERR wrong\r\n");
    EXPECT_TRUE(error.is_error());
    EXPECT_EQ(error.text, "ERR wrong");
    EXPECT_EQ(parse_reply(":-42\r\n").integer, -42);
    EXPECT_TRUE(parse_reply("$-1\r\n").is_nil());
    EXPECT_TRUE(parse_reply("*-1\r\n").is_nil());
    const redis_reply empty = parse_reply("$0\r\n\r\n");
    EXPECT_TRUE(empty.is_string());
    EXPECT_EQ(empty.text, "");
    const redis_reply binary = parse_reply(std::string("$4\r\n\r\n\0x\r\n", 10));
    EXPECT_EQ(binary.text, std::string("\r\n\0x", 4));
    const redis_reply nested = parse_reply("*3\r\n:1\r\n*2\r\n$1\r\na\r\n$-1\r\n*0\r\n");
    ASSERT_TRUE(nested.is_array());
    ASSERT_EQ(nested.elements.size(), 3u);
    EXPECT_EQ(nested.elements[0].integer, 1);
    ASSERT_EQ(nested.elements[1].elements.size(), 2u);
    EXPECT_EQ(nested.elements[1].elements[0].text, "a");
    EXPECT_TRUE(nested.elements[1].elements[1].is_nil());
    EXPECT_TRUE(nested.elements[2].is_array());
    EXPECT_TRUE(nested.elements[2].elements.empty());
}

TEST(RespProtocol, RepliesAreFoundWhateverThePieces) {
    const std::string stream = "+OK\r\n:7\r\n$5\r\nhello\r\n*2\r\n*1\r\n$3\r\nabc\r\n$-1\r\n-ERR x\r\n*0\r\n$0\r\n\r\n";
    const std::vector<std::string> whole = replies_in_pieces(stream, stream.size());
    ASSERT_EQ(whole.size(), 7u);
    EXPECT_EQ(whole[3], "*2\r\n*1\r\n$3\r\nabc\r\n$-1\r\n");
    for (std::size_t piece = 1; piece < stream.size(); ++piece) {
        EXPECT_EQ(replies_in_pieces(stream, piece), whole) << "pieces of " << piece;
    }
}

TEST(RespProtocol, LargeReplyInSmallPiecesIsScannedOnce) {
    // An array of 20,000 bulk strings, 7 bytes at a time: the scanner keeps its place, so this
    // finishes at once (scanning from the start on every piece would take billions of steps).
    std::string stream = "*20000\r\n";
    for (int i = 0; i < 20000; ++i) {
        stream += "$5\r\nvalue\r\n";
    }
    const auto replies = replies_in_pieces(stream, 7);
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_EQ(parse_reply(replies[0]).elements.size(), 20000u);
}

TEST(RespProtocol, MalformedBytesAreReported) {
    for (std::string_view bad : {"?x\r\n", ":12a\r\n", "$-2\r\n", "$3\r\nabcd\r\n", "*x\r\n", "+OK\rX",
                                 "$99999999999\r\n"}) {
        bool malformed = false;
        replies_in_pieces(bad, bad.size(), &malformed);
        EXPECT_TRUE(malformed) << bad;
    }
    // Deeper than any reply Redis sends.
    std::string deep;
    for (std::size_t i = 0; i <= reply_scanner::max_depth; ++i) {
        deep += "*1\r\n";
    }
    bool malformed = false;
    replies_in_pieces(deep + ":1\r\n", 1, &malformed);
    EXPECT_TRUE(malformed);
    // A header that never ends is not waited for forever.
    malformed = false;
    replies_in_pieces("$" + std::string(100, '1'), 100, &malformed);
    EXPECT_TRUE(malformed);
}

TEST(RespProtocol, PubSubMessagesAreViewsIntoTheBytes) {
    const std::string bytes = "*3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n$6\r\npay\r\nd\r\n";
    pubsub_message m;
    ASSERT_TRUE(as_message(bytes, m));
    EXPECT_FALSE(m.sharded);
    EXPECT_EQ(m.channel, "chan");
    EXPECT_EQ(m.payload, "pay\r\nd");
    EXPECT_GE(m.payload.data(), bytes.data());
    EXPECT_LE(m.payload.data() + m.payload.size(), bytes.data() + bytes.size());

    ASSERT_TRUE(as_message("*3\r\n$8\r\nsmessage\r\n$1\r\nc\r\n$0\r\n\r\n", m));
    EXPECT_TRUE(m.sharded);
    EXPECT_EQ(m.payload, "");
    // Confirmations and other replies are not messages.
    EXPECT_FALSE(as_message("*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n", m));
    EXPECT_FALSE(as_message("*4\r\n$8\r\npmessage\r\n$1\r\np\r\n$1\r\nc\r\n$1\r\nx\r\n", m));
    EXPECT_FALSE(as_message("+OK\r\n", m));
}

}  // namespace
}  // namespace parley::cluster::resp
