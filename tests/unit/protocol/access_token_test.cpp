// Access tokens (JWT, HS256): the tokens below were signed by an independent HMAC-SHA256
// implementation (Python's hmac module) with the secret below; the verifier must accept them,
// and refuse every change to them, every other algorithm and every claim out of date.

#include "protocol/access_token.hpp"

#include <gtest/gtest.h>

#include <string>

namespace parley::protocol {
namespace {

constexpr std::string_view secret = "parley-test-secret-0123456789abcdef";
// {"alg":"HS256","typ":"JWT"} . {"sub":"alice","exp":2000000000}
constexpr std::string_view alice =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSIsImV4cCI6MjAwMDAwMDAwMH0."
    "smYINEGnvaonL3XRmBQaEAm5vP6fess2zUywfjdcVy0";
// {"alg":"HS256","typ":"JWT"} . {"sub":"bob","exp":2000000000,"nbf":1999999000,"rooms":["lobby","ops"]}
constexpr std::string_view bob =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJib2IiLCJleHAiOjIwMDAwMDAwMDAsIm5iZiI6MTk5OTk5OTAwMCwicm9vbXMi"
    "OlsibG9iYnkiLCJvcHMiXX0.hebLNw9yXiQyeqV9lb1Bi3gjehCd95AlKhQDNSeYZ-U";
// {"alg":"HS256"} . {"sub":"carol","exp":1700000000.5}
constexpr std::string_view carol =
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYXJvbCIsImV4cCI6MTcwMDAwMDAwMC41fQ.OyCu3m_b0l36fl4f2YChIO6vNR43dRsK81JWtLHQN4M";

constexpr std::int64_t now = 1'999'999'500;

std::string header_of(std::string_view json) { return base64url_encode(json); }

TEST(AccessTokenTest, AcceptsTokensSignedWithTheSecret) {
    token_check a = verify_hs256_token(alice, secret, now);
    ASSERT_TRUE(a.claims) << a.reason;
    EXPECT_EQ(a.claims->subject, "alice");
    EXPECT_EQ(a.claims->expires, 2'000'000'000);
    EXPECT_FALSE(a.claims->rooms);

    token_check b = verify_hs256_token(bob, secret, now);
    ASSERT_TRUE(b.claims) << b.reason;
    EXPECT_EQ(b.claims->subject, "bob");
    ASSERT_TRUE(b.claims->rooms);
    EXPECT_EQ(*b.claims->rooms, (std::vector<std::string>{"lobby", "ops"}));

    token_check c = verify_hs256_token(carol, secret, 1'699'999'999);
    ASSERT_TRUE(c.claims) << c.reason;
    EXPECT_EQ(c.claims->subject, "carol");
}

TEST(AccessTokenTest, RefusesAnotherSecretAndEveryChangedCharacter) {
    EXPECT_EQ(verify_hs256_token(alice, "another secret", now).problem, token_problem::signature);
    EXPECT_EQ(verify_hs256_token(alice, "", now).problem, token_problem::signature);
    // Change each character of the token in turn: nothing may still verify.
    for (std::size_t i = 0; i < alice.size(); ++i) {
        if (alice[i] == '.') {
            continue;
        }
        std::string changed(alice);
        changed[i] = changed[i] == 'A' ? 'B' : 'A';
        EXPECT_FALSE(verify_hs256_token(changed, secret, now).claims) << "changed at " << i;
    }
    // A payload taken from another valid token under this signature.
    std::string swapped(alice.substr(0, alice.find('.') + 1));
    swapped += bob.substr(bob.find('.') + 1, bob.rfind('.') - bob.find('.') - 1);
    swapped += alice.substr(alice.rfind('.'));
    EXPECT_EQ(verify_hs256_token(swapped, secret, now).problem, token_problem::signature);
}

TEST(AccessTokenTest, RefusesAlgorithmNoneAndAlgorithmConfusion) {
    const std::string payload = std::string(alice.substr(alice.find('.') + 1, alice.rfind('.') - alice.find('.') - 1));
    for (std::string_view header : {R"({"alg":"none"})", R"({"alg":"None","typ":"JWT"})", R"({"alg":"RS256"})",
                                    R"({"alg":"ES256"})", R"({"alg":"HS512"})", R"({"alg":"hs256"})", R"({"typ":"JWT"})",
                                    R"({"alg":["HS256"]})", R"({"alg":"HS256","crit":["exp"]})"}) {
        // Unsigned, and signed with the real signature of another header: both refused.
        for (std::string_view signature : {std::string_view(""), alice.substr(alice.rfind('.') + 1)}) {
            std::string token = header_of(header) + "." + payload + "." + std::string(signature);
            token_check check = verify_hs256_token(token, secret, now);
            EXPECT_FALSE(check.claims) << header;
            EXPECT_EQ(check.problem, token_problem::algorithm) << header;
        }
    }
}

TEST(AccessTokenTest, RefusesExpiredAndNotYetValidTokens) {
    EXPECT_EQ(verify_hs256_token(alice, secret, 2'000'000'000).problem, token_problem::expired);
    EXPECT_TRUE(verify_hs256_token(alice, secret, 1'999'999'999).claims);
    EXPECT_TRUE(verify_hs256_token(alice, secret, 2'000'000'009, 10).claims) << "within the leeway";
    EXPECT_EQ(verify_hs256_token(bob, secret, 1'999'998'999).problem, token_problem::not_yet_valid);
    EXPECT_TRUE(verify_hs256_token(bob, secret, 1'999'998'999, 1).claims);
    EXPECT_EQ(verify_hs256_token(carol, secret, 1'700'000'000).problem, token_problem::expired)
        << "a fractional exp is floored";
}

TEST(AccessTokenTest, RefusesMalformedTokens) {
    for (std::string_view token : {"", ".", "..", "a.b", "a.b.c.d", "!!!.e30.", "e30.e30.", "e30.e30.abc",
                                   "eyJhbGciOiJIUzI1NiJ9.e30=.x", "eyJhbGciOiJIUzI1NiJ9..", "W10.e30.x"}) {
        EXPECT_FALSE(verify_hs256_token(token, secret, now).claims) << token;
    }
}

TEST(AccessTokenTest, Base64urlRoundTripsAndRefusesNonCanonicalText) {
    EXPECT_EQ(base64url_encode("hello world!?"), "aGVsbG8gd29ybGQhPw");
    EXPECT_EQ(base64url_encode("\xff\xfe\xfd"), "__79");
    EXPECT_EQ(base64url_encode("a"), "YQ");
    EXPECT_EQ(base64url_encode("ab"), "YWI");
    for (std::string_view text : {"aGVsbG8gd29ybGQhPw", "__79", "YQ", "YWI", ""}) {
        auto bytes = base64url_decode(text);
        ASSERT_TRUE(bytes) << text;
        EXPECT_EQ(base64url_encode(*bytes), text);
    }
    EXPECT_FALSE(base64url_decode("YQ=="));   // padding
    EXPECT_FALSE(base64url_decode("Y"));      // a length that cannot occur
    EXPECT_FALSE(base64url_decode("YR"));     // unused bits set: not the canonical "YQ"
    EXPECT_FALSE(base64url_decode("a+/b"));   // base64, not base64url
}

}  // namespace
}  // namespace parley::protocol
