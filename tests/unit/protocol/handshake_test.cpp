#include "protocol/handshake.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace parley::protocol {
namespace {

std::string hex(std::string_view bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (char c : bytes) {
        const auto b = static_cast<unsigned char>(c);
        out.push_back(digits[b >> 4]);
        out.push_back(digits[b & 0xF]);
    }
    return out;
}

// --- SHA-1 ------------------------------------------------------------------------------------

TEST(Sha1, KnownVectors) {
    EXPECT_EQ(hex(sha1("abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
    EXPECT_EQ(hex(sha1("")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    EXPECT_EQ(hex(sha1("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
              "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    EXPECT_EQ(hex(sha1("The quick brown fox jumps over the lazy dog")),
              "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
}

TEST(Sha1, MillionA) {
    EXPECT_EQ(hex(sha1(std::string(1000000, 'a'))), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST(Sha1, LengthsAroundThePaddingBoundary) {
    // The length field needs 8 bytes after the 0x80 marker: 55 bytes fit one block, 56 spill.
    const std::pair<std::size_t, const char*> cases[] = {
        {55, "cef734ba81a024479e09eb5a75b6ddae62e6abf1"},  {56, "901305367c259952f4e7af8323f480d59f81335b"},
        {63, "0ddc4e0cccd9a12850deb5abb0853a4425559fec"},  {64, "bb2fa3ee7afb9f54c6dfb5d021f14b1ffe40c163"},
        {65, "78c741ddc482e4cdf8c474a0876347a0905b6233"},  {119, "4300320394f7ee239bcdce7d3b8bcee173a0cd5c"},
        {120, "ceb2821639c4b6dcb10bce0e522ca2e608ce056d"},
    };
    for (const auto& [size, digest] : cases) {
        EXPECT_EQ(hex(sha1(std::string(size, 'x'))), digest) << size;
    }
}

// --- base64 -----------------------------------------------------------------------------------

TEST(Base64, Rfc4648Vectors) {
    const std::pair<const char*, const char*> cases[] = {
        {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},         {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
    };
    for (const auto& [plain, encoded] : cases) {
        EXPECT_EQ(base64_encode(plain), encoded);
        std::string decoded = "garbage";
        EXPECT_TRUE(base64_decode(encoded, decoded)) << encoded;
        EXPECT_EQ(decoded, plain);
    }
}

TEST(Base64, AllByteValuesRoundTrip) {
    std::mt19937 rng{7};
    for (std::size_t size = 0; size < 70; ++size) {
        std::string bytes;
        for (std::size_t i = 0; i < size; ++i) {
            bytes.push_back(static_cast<char>(rng()));
        }
        const std::string encoded = base64_encode(bytes);
        EXPECT_EQ(encoded.size(), (size + 2) / 3 * 4);
        std::string decoded;
        ASSERT_TRUE(base64_decode(encoded, decoded)) << encoded;
        EXPECT_EQ(decoded, bytes);
    }
    EXPECT_EQ(base64_encode(std::string("\xFB\xFF\xBF", 3)), "+/+/");
}

TEST(Base64, StrictDecodingRejects) {
    for (const char* bad : {"Zg", "Zg=", "Zm9", "Z===", "====", "Zg==Zg==", "Zm=v", "Zm9v!A==", "Zm9 v",
                            "Zm9v\n", "Zh==", "Zm9=", "Zm-_", "Zg=A"}) {
        std::string out = "unchanged";
        EXPECT_FALSE(base64_decode(bad, out)) << bad;
        EXPECT_EQ(out, "unchanged") << bad;
    }
}

// --- upgrade requests -------------------------------------------------------------------------

upgrade_request good_request() {
    upgrade_request r;
    r.method = "GET";
    r.version = 11;
    r.has_host = true;
    r.upgrade = "websocket";
    r.connection = "Upgrade";
    r.ws_version = "13";
    r.ws_key = "dGhlIHNhbXBsZSBub25jZQ==";
    return r;
}

TEST(Handshake, RfcAcceptExample) {
    // RFC 6455 sections 1.3 and 4.2.2.
    EXPECT_EQ(websocket_accept("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(Handshake, AcceptsAValidRequest) {
    const upgrade_check c = check_upgrade(good_request());
    EXPECT_EQ(c.verdict, upgrade_verdict::accept);
    EXPECT_TRUE(is_websocket_upgrade(good_request()));
}

TEST(Handshake, HeaderValuesAreCaseInsensitiveTokenLists) {
    for (const char* connection : {"Upgrade", "upgrade", "UPGRADE", "keep-alive, Upgrade", "Upgrade, keep-alive",
                                   "keep-alive,upgrade", "  upgrade  ", "foo,\tUpGrAdE\t,bar"}) {
        auto r = good_request();
        r.connection = connection;
        EXPECT_EQ(check_upgrade(r).verdict, upgrade_verdict::accept) << connection;
    }
    for (const char* upgrade : {"websocket", "WebSocket", "WEBSOCKET", "h2c, websocket", "websocket , foo"}) {
        auto r = good_request();
        r.upgrade = upgrade;
        EXPECT_EQ(check_upgrade(r).verdict, upgrade_verdict::accept) << upgrade;
        EXPECT_TRUE(is_websocket_upgrade(r)) << upgrade;
    }
    auto newer = good_request();
    newer.version = 20;
    EXPECT_EQ(check_upgrade(newer).verdict, upgrade_verdict::accept);
}

TEST(Handshake, BadRequests) {
    const auto expect_400 = [](upgrade_request r, const char* what) {
        const upgrade_check c = check_upgrade(r);
        EXPECT_EQ(c.verdict, upgrade_verdict::bad_request) << what;
        EXPECT_NE(std::string(c.reason), "") << what;
    };
    auto r = good_request();
    r.method = "POST";
    expect_400(r, "POST");
    r = good_request();
    r.method = "get";
    expect_400(r, "lower-case method");
    r = good_request();
    r.version = 10;
    expect_400(r, "HTTP/1.0");
    r = good_request();
    r.has_host = false;
    expect_400(r, "no Host");
    for (const char* upgrade : {"", "websockets", "h2c", "web socket"}) {
        r = good_request();
        r.upgrade = upgrade;
        expect_400(r, upgrade);
        EXPECT_FALSE(is_websocket_upgrade(r)) << upgrade;
    }
    for (const char* connection : {"", "keep-alive", "upgrades", "keep-alive upgrade", "close"}) {
        r = good_request();
        r.connection = connection;
        expect_400(r, connection);
    }
}

TEST(Handshake, WrongOrMissingVersionNeedsUpgrade) {
    for (const char* version : {"", "8", "12", "14", "13, 8", "013"}) {
        auto r = good_request();
        r.ws_version = version;
        EXPECT_EQ(check_upgrade(r).verdict, upgrade_verdict::upgrade_required) << version;
    }
}

TEST(Handshake, KeyMustBeBase64OfSixteenBytes) {
    auto ok = good_request();
    ok.ws_key = "AAAAAAAAAAAAAAAAAAAAAA==";
    EXPECT_EQ(check_upgrade(ok).verdict, upgrade_verdict::accept);
    for (const char* key : {
             "",
             "dGhlIHNhbXBsZSBub25jZQ",      // no padding
             "dGhlIHNhbXBsZSBub25jZQ=",     // 23 characters
             "dGhlIHNhbXBsZSBub25jZQ===",   // 25 characters
             "dGhlIHNhbXBsZSBub25jZTE=",    // 17 bytes
             "dGhlIHNhbXBsZSBub25j",        // 15 bytes
             "dGhlIHNhbXBsZSBub25jZR==",    // non-zero bits in the padding
             "dGhlIHNhbXBsZSBub25j*Q==",    // not in the alphabet
             " dGhlIHNhbXBsZSBub25jZQ==",
         }) {
        auto r = good_request();
        r.ws_key = key;
        EXPECT_EQ(check_upgrade(r).verdict, upgrade_verdict::bad_request) << key;
    }
}

TEST(Handshake, ChecksRunInOrder) {
    // A request with several faults is reported by the first: method, then version, Host,
    // Upgrade, Connection, Sec-WebSocket-Version, key.
    const auto reason_of = [](const upgrade_request& r) { return std::string(check_upgrade(r).reason); };
    upgrade_request r = good_request();
    r.method = "POST";
    const std::string method_reason = reason_of(r);
    r.version = 10;
    r.has_host = false;
    r.ws_version = "8";
    EXPECT_EQ(reason_of(r), method_reason);

    r = good_request();
    r.version = 10;
    const std::string version_reason = reason_of(r);
    EXPECT_NE(version_reason, method_reason);
    r.has_host = false;
    r.connection = "close";
    EXPECT_EQ(reason_of(r), version_reason);

    r = good_request();
    r.connection = "close";
    r.ws_version = "8";
    EXPECT_EQ(check_upgrade(r).verdict, upgrade_verdict::bad_request);

    r = good_request();
    r.ws_version = "";
    r.ws_key = "";
    EXPECT_EQ(check_upgrade(r).verdict, upgrade_verdict::upgrade_required);
}

}  // namespace
}  // namespace parley::protocol
