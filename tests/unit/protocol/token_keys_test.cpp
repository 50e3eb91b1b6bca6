// Login tokens signed with public keys (RS256, ES256): keys from PEM and JWK Sets, the key
// choosing the algorithm, kid, issuer and audience. The keys and tokens are made in the test
// (tests/key_pair_minter.hpp).

#include "protocol/access_token.hpp"
#include "protocol/token_keys.hpp"
#include "tests/key_pair_minter.hpp"
#include "tests/token_minter.hpp"

#include <gtest/gtest.h>

#include <string>

namespace parley::protocol {
namespace {

using nlohmann::json;
using test_tokens::key_pair;

constexpr std::int64_t now = 1'999'999'500;

json claims_for(std::string_view user) { return {{"sub", user}, {"exp", now + 600}}; }

token_check verify(std::string_view token, const token_keys& keys, token_rules rules = {}) {
    return verify_token(token, keys, now, rules);
}

// Generating RSA keys takes a while: one of each for the whole file.
const key_pair& rsa_key() {
    static const key_pair key = key_pair::rsa();
    return key;
}
const key_pair& ec_key() {
    static const key_pair key = key_pair::p256();
    return key;
}

TEST(TokenKeysTest, RsaAndP256TokensVerifyWithTheirPemKeysAndNotWithTheOthers) {
    token_keys rsa;
    ASSERT_EQ(rsa.add_pem(rsa_key().public_pem()), "");
    token_keys ec;
    ASSERT_EQ(ec.add_pem(ec_key().public_pem()), "");

    const std::string rs = rsa_key().sign(claims_for("alice"));
    const std::string es = ec_key().sign(claims_for("bob"));
    token_check a = verify(rs, rsa);
    ASSERT_TRUE(a.claims) << a.reason;
    EXPECT_EQ(a.claims->subject, "alice");
    token_check b = verify(es, ec);
    ASSERT_TRUE(b.claims) << b.reason;
    EXPECT_EQ(b.claims->subject, "bob");

    // Each key checks only its own algorithm.
    EXPECT_EQ(verify(rs, ec).problem, token_problem::algorithm);
    EXPECT_EQ(verify(es, rsa).problem, token_problem::algorithm);
    // Both keys in one set (a PEM file with two keys).
    token_keys both;
    ASSERT_EQ(both.add_pem(rsa_key().public_pem() + ec_key().public_pem()), "");
    EXPECT_EQ(both.size(), 2U);
    EXPECT_TRUE(verify(rs, both).claims);
    EXPECT_TRUE(verify(es, both).claims);
}

TEST(TokenKeysTest, AChangedTokenOrAnotherKeysSignatureIsRefused) {
    token_keys ec;
    ASSERT_EQ(ec.add_pem(ec_key().public_pem()), "");
    const std::string token = ec_key().sign(claims_for("alice"));
    const std::size_t dot = token.find('.');
    const std::size_t second = token.find('.', dot + 1);
    // The payload of another token under this token's signature.
    const std::string other = ec_key().sign(claims_for("mallory"));
    const std::string swapped =
        token.substr(0, dot + 1) + other.substr(dot + 1, other.find('.', dot + 1) - dot - 1) + token.substr(second);
    EXPECT_EQ(verify(swapped, ec).problem, token_problem::signature);
    // A signature of the wrong length (ES256's is 64 bytes).
    EXPECT_EQ(verify(token.substr(0, second + 1) + base64url_encode(std::string(63, 'x')), ec).problem,
              token_problem::signature);
    // Signed by another P-256 key.
    EXPECT_EQ(verify(key_pair::p256().sign(claims_for("alice")), ec).problem, token_problem::signature);
}

TEST(TokenKeysTest, AnHs256TokenIsNeverCheckedAgainstAPublicKey) {
    // The classic confusion: an HMAC over the token keyed with the public key's own bytes.
    token_keys rsa;
    ASSERT_EQ(rsa.add_pem(rsa_key().public_pem()), "");
    const std::string forged = test_tokens::sign_token(claims_for("alice"), rsa_key().public_pem());
    token_check check = verify(forged, rsa);
    EXPECT_FALSE(check.claims);
    EXPECT_EQ(check.problem, token_problem::algorithm);
    // "none", and a token claiming RS256 with an HMAC for a signature.
    const std::string none = base64url_encode(R"({"alg":"none"})") + "." + base64url_encode(claims_for("a").dump()) + ".";
    EXPECT_EQ(verify(none, rsa).problem, token_problem::algorithm);
    const std::string hmac_as_rs256 = rsa_key().sign(claims_for("alice"), json::object(), "HS256");
    EXPECT_FALSE(verify(hmac_as_rs256, rsa).claims);
    // With a secret configured too, HS256 tokens are checked with the secret only.
    token_keys mixed;
    ASSERT_EQ(mixed.add_pem(rsa_key().public_pem()), "");
    mixed.add_secret(test_tokens::token_secret);
    EXPECT_TRUE(verify(test_tokens::sign_token(claims_for("alice")), mixed).claims);
    EXPECT_EQ(verify(forged, mixed).problem, token_problem::signature);
}

TEST(TokenKeysTest, AJwkSetsKeysArePickedByKid) {
    const key_pair second = key_pair::p256();
    const json set = {{"keys", {rsa_key().jwk("rsa-1"), ec_key().jwk("ec-1"), second.jwk("ec-2")}}};
    token_keys keys;
    ASSERT_EQ(keys.add_jwks(set.dump()), "");
    EXPECT_EQ(keys.size(), 3U);
    EXPECT_TRUE(keys.has_kid("ec-2"));

    EXPECT_TRUE(verify(rsa_key().sign(claims_for("a"), {{"kid", "rsa-1"}}), keys).claims);
    EXPECT_TRUE(verify(second.sign(claims_for("a"), {{"kid", "ec-2"}}), keys).claims);
    // Without a kid every key of the algorithm is tried.
    EXPECT_TRUE(verify(second.sign(claims_for("a")), keys).claims);
    // Naming the wrong key of the set fails; naming one the set lacks says so.
    EXPECT_EQ(verify(second.sign(claims_for("a"), {{"kid", "ec-1"}}), keys).problem, token_problem::signature);
    token_check unknown = verify(second.sign(claims_for("a"), {{"kid", "ec-3"}}), keys);
    EXPECT_EQ(unknown.problem, token_problem::unknown_key);
    EXPECT_EQ(verify(second.sign(claims_for("a"), {{"kid", 7}}), keys).problem, token_problem::malformed);
}

TEST(TokenKeysTest, KeysThatCannotCheckTokensAreRefusedOrSkipped) {
    token_keys keys;
    EXPECT_NE(keys.add_pem(key_pair::rsa(1024).public_pem()).find("2048"), std::string::npos);
    EXPECT_NE(keys.add_pem(key_pair::p384().public_pem()).find("P-256"), std::string::npos);
    EXPECT_NE(keys.add_pem("not a key").find("no public key"), std::string::npos);
    EXPECT_NE(keys.add_jwks("[]").find("not a JWK Set"), std::string::npos);
    EXPECT_NE(keys.add_jwks("{\"keys\": 3}").find("not a JWK Set"), std::string::npos);
    // Keys for encryption, other curves and algorithms are skipped; none left is an error.
    json enc = ec_key().jwk("e");
    enc["use"] = "enc";
    json hs = {{"kty", "oct"}, {"k", "c2VjcmV0"}, {"kid", "h"}};
    json wrong_alg = rsa_key().jwk("r");
    wrong_alg["alg"] = "PS256";
    EXPECT_NE(keys.add_jwks(json{{"keys", {enc, hs, wrong_alg}}}.dump()).find("no RS256 or ES256"), std::string::npos);
    // A point that is not on the curve, and a modulus that is not base64url.
    json off_curve = ec_key().jwk("c");
    std::string y = *base64url_decode(off_curve["y"].get<std::string>());
    y[31] = static_cast<char>(y[31] ^ 1);
    off_curve["y"] = base64url_encode(y);
    EXPECT_NE(keys.add_jwks(json{{"keys", json::array({off_curve})}}.dump()).find("malformed"), std::string::npos);
    json bad_n = rsa_key().jwk("n");
    bad_n["n"] = "***";
    EXPECT_NE(keys.add_jwks(json{{"keys", json::array({bad_n})}}.dump()).find("malformed"), std::string::npos);
    EXPECT_TRUE(keys.empty());
    // A usable key beside skipped ones is taken.
    EXPECT_EQ(keys.add_jwks(json{{"keys", {enc, hs, ec_key().jwk("ok")}}}.dump()), "");
    EXPECT_EQ(keys.size(), 1U);
}

TEST(TokenKeysTest, IssuerAndAudienceAreCheckedWhenConfigured) {
    token_keys keys;
    ASSERT_EQ(keys.add_pem(ec_key().public_pem()), "");
    token_rules rules;
    rules.issuer = "https://id.example";
    rules.audience = "parley";
    json claims = claims_for("alice");
    EXPECT_EQ(verify(ec_key().sign(claims), keys, rules).problem, token_problem::claims);
    claims["iss"] = "https://id.example";
    claims["aud"] = "parley";
    EXPECT_TRUE(verify(ec_key().sign(claims), keys, rules).claims);
    claims["aud"] = json::array({"other", "parley"});
    EXPECT_TRUE(verify(ec_key().sign(claims), keys, rules).claims);
    claims["aud"] = json::array({"other"});
    EXPECT_EQ(verify(ec_key().sign(claims), keys, rules).problem, token_problem::claims);
    claims["aud"] = "parley";
    claims["iss"] = "https://id.example.evil";
    EXPECT_EQ(verify(ec_key().sign(claims), keys, rules).problem, token_problem::claims);
    // Not configured: not checked.
    EXPECT_TRUE(verify(ec_key().sign(claims), keys).claims);
}

}  // namespace
}  // namespace parley::protocol
