// The client's own handshake arithmetic, checked against RFC 6455 before it judges the daemon.
#include "handshake_key.hpp"

#include <gtest/gtest.h>

namespace parley::integration {
namespace {

TEST(HandshakeKeyTest, AcceptMatchesRfc6455Example) {
    // RFC 6455 section 1.3.
    EXPECT_EQ(expected_accept("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(HandshakeKeyTest, Sha1MatchesKnownDigests) {
    EXPECT_EQ(to_base64(sha1_digest("")), "2jmj7l5rSw0yVb/vlWAYkK/YBwk=");
    EXPECT_EQ(to_base64(sha1_digest("abc")), "qZk+NkcGgWq6PiVxeFDCbJzQ2J0=");
    // Two blocks of padding.
    EXPECT_EQ(to_base64(sha1_digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
              "hJg+RBw70m66rkqh+VEp5eVGcPE=");
}

TEST(HandshakeKeyTest, KeyIsBase64OfSixteenBytes) {
    std::mt19937 rng(7);
    const std::string key = make_websocket_key(rng);
    EXPECT_EQ(key.size(), 24u);
    EXPECT_EQ(key.substr(22), "==");
    EXPECT_NE(key, make_websocket_key(rng));
}

}  // namespace
}  // namespace parley::integration
