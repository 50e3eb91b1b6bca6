// Tokens signed with keys the daemon never holds: RS256 and ES256 logins checked with the public
// keys of auth.public_keys (a JWK Set here), issuer and audience, a rotation the daemon follows
// when a token names a key it lacks, and a reload that drops a key.
#include "https_stub.hpp"
#include "test_support.hpp"
#include "tests/key_pair_minter.hpp"
#include "tests/token_minter.hpp"

#include <csignal>
#include <fstream>
#include <thread>

namespace parley::integration {
namespace {

using test_tokens::key_pair;
using test_tokens::now_seconds;

const key_pair& rsa_key() {
    static const key_pair key = key_pair::rsa();
    return key;
}
const key_pair& first_ec_key() {
    static const key_pair key = key_pair::p256();
    return key;
}
const key_pair& second_ec_key() {
    static const key_pair key = key_pair::p256();
    return key;
}

class PublicKeyAuthTest : public parley_test {
protected:
    PublicKeyAuthTest() { write_keys({rsa_key().jwk("rsa-1"), first_ec_key().jwk("ec-1")}); }

    std::string daemon_config() const override {
        return "[auth]\nmode = \"token\"\npublic_keys = \"" + keys_dir_.file("jwks.json") +
               "\"\nissuer = \"https://id.example\"\naudience = \"chat\"\n";
    }

    // (A vector, not a json: nlohmann reads a one-element brace list as a copy, not an array.)
    void write_keys(const std::vector<json>& keys) const {
        std::ofstream(keys_dir_.file("jwks.json"), std::ios::trunc) << json{{"keys", json(keys)}}.dump();
    }

    static json claims_for(const std::string& user) {
        return {{"sub", user}, {"exp", now_seconds() + 600}, {"iss", "https://id.example"}, {"aud", "chat"}};
    }

    // The login's reply (welcome, or the error before the close).
    json try_login(const std::string& user, const std::string& token) {
        ws_client client = connect();
        return call(client, {{"type", "login"}, {"user", user}, {"token", token}, {"id", "in"}});
    }

    temp_dir keys_dir_;
};

TEST_F(PublicKeyAuthTest, Rs256AndEs256TokensLogInAndOthersAreRefused) {
    EXPECT_EQ(try_login("alice", rsa_key().sign(claims_for("alice"), {{"kid", "rsa-1"}})).value("type", ""),
              "welcome");
    EXPECT_EQ(try_login("bob", first_ec_key().sign(claims_for("bob"), {{"kid", "ec-1"}})).value("type", ""),
              "welcome");
    // Without a kid the keys of the token's algorithm are tried.
    EXPECT_EQ(try_login("carol", first_ec_key().sign(claims_for("carol"))).value("type", ""), "welcome");

    // An HS256 token, even one keyed with a public key's bytes, checks against no key here.
    const json forged = try_login("dave", test_tokens::sign_token(claims_for("dave"), rsa_key().public_pem()));
    EXPECT_EQ(forged.value("code", ""), "unauthorized") << forged;
    // The wrong issuer, the wrong audience, a key the set lacks.
    json claims = claims_for("erin");
    claims["iss"] = "https://elsewhere.example";
    EXPECT_EQ(try_login("erin", first_ec_key().sign(claims)).value("code", ""), "unauthorized");
    claims = claims_for("erin");
    claims["aud"] = json::array({"billing"});
    EXPECT_EQ(try_login("erin", first_ec_key().sign(claims)).value("code", ""), "unauthorized");
    EXPECT_EQ(try_login("erin", key_pair::p256().sign(claims_for("erin"))).value("code", ""), "unauthorized");
    // Everyone logged in is still served.
    EXPECT_EQ(try_login("frank", rsa_key().sign(claims_for("frank"))).value("type", ""), "welcome");
}

TEST_F(PublicKeyAuthTest, ATokenSignedWithANewKeyIsAcceptedOnceTheSetHasIt) {
    const std::string token = second_ec_key().sign(claims_for("alice"), {{"kid", "ec-2"}});
    EXPECT_EQ(try_login("alice", token).value("code", ""), "unauthorized") << "ec-2 is not in the set yet";
    // The issuer rotates: the set gains ec-2. The daemon reads it again when a token names a key
    // it lacks (at most every 10 s), so the login succeeds once that read has happened.
    write_keys({rsa_key().jwk("rsa-1"), first_ec_key().jwk("ec-1"), second_ec_key().jwk("ec-2")});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    json reply;
    while (std::chrono::steady_clock::now() < deadline) {
        reply = try_login("alice", token);
        if (reply.value("type", "") == "welcome") {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    EXPECT_EQ(reply.value("type", ""), "welcome") << reply << daemon_->tail();
    EXPECT_EQ(try_login("bob", first_ec_key().sign(claims_for("bob"), {{"kid", "ec-1"}})).value("type", ""),
              "welcome");

    // The old key is retired: after a reload its tokens are refused, the new key's still accepted.
    write_keys({second_ec_key().jwk("ec-2")});
    const std::size_t from = daemon_->line_count();
    daemon_->send_signal(SIGHUP);
    ASSERT_TRUE(daemon_->wait_for_line("1 token key(s) read", from)) << daemon_->tail();
    EXPECT_EQ(try_login("carol", first_ec_key().sign(claims_for("carol"), {{"kid", "ec-1"}})).value("code", ""),
              "unauthorized");
    EXPECT_EQ(try_login("dave", second_ec_key().sign(claims_for("dave"), {{"kid", "ec-2"}})).value("type", ""),
              "welcome");

    // A broken file on a reload keeps the keys in force.
    std::ofstream(keys_dir_.file("jwks.json"), std::ios::trunc) << "{ not json";
    const std::size_t again = daemon_->line_count();
    daemon_->send_signal(SIGHUP);
    ASSERT_TRUE(daemon_->wait_for_line("token keys of the file not replaced", again)) << daemon_->tail();
    EXPECT_EQ(try_login("erin", second_ec_key().sign(claims_for("erin"), {{"kid", "ec-2"}})).value("type", ""),
              "welcome");
}

// The keys at an https URL, as an identity provider's jwks_uri serves them (a server inside the
// test, whose self-signed certificate the daemon trusts through auth.jwks_ca_file).
class JwksUrlAuthTest : public parley_test {
protected:
    JwksUrlAuthTest() : provider_(dir_.path()) {
        provider_.answer(200, json{{"keys", json::array({first_ec_key().jwk("k1")})}}.dump());
    }

    std::string daemon_config() const override {
        return "[auth]\nmode = \"token\"\njwks_url = \"https://localhost:" + std::to_string(provider_.port()) +
               "/keys\"\njwks_ca_file = \"" + provider_.cert_path() + "\"\n";
    }

    // Logs in until welcome or the deadline; the last reply.
    json login_within(const std::string& user, const std::string& token, std::chrono::seconds limit) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        json reply;
        do {
            ws_client client = connect();
            reply = call(client, {{"type", "login"}, {"user", user}, {"token", token}, {"id", "in"}});
            if (reply.value("type", "") == "welcome") {
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        } while (std::chrono::steady_clock::now() < deadline);
        return reply;
    }

    static json claims_for(const std::string& user) { return {{"sub", user}, {"exp", now_seconds() + 600}}; }

    temp_dir dir_;
    https_stub provider_;
};

TEST_F(JwksUrlAuthTest, KeysFetchedFromTheUrlCheckTokensAndARotationIsFollowedWithoutAReload) {
    // Fetched in the background at start.
    const json first = login_within("alice", first_ec_key().sign(claims_for("alice"), {{"kid", "k1"}}),
                                    std::chrono::seconds(10));
    EXPECT_EQ(first.value("type", ""), "welcome") << first << daemon_->tail();
    // The provider adds a key; a token naming it makes the daemon fetch the set again.
    provider_.answer(200, json{{"keys", {first_ec_key().jwk("k1"), rsa_key().jwk("k2")}}}.dump());
    const json rotated =
        login_within("bob", rsa_key().sign(claims_for("bob"), {{"kid", "k2"}}), std::chrono::seconds(15));
    EXPECT_EQ(rotated.value("type", ""), "welcome") << rotated << daemon_->tail();
    EXPECT_GE(provider_.requests(), 2);
    // The provider fails: the keys in force stay, and a key nobody published is still refused.
    provider_.answer(500, "");
    EXPECT_EQ(login_within("carol", rsa_key().sign(claims_for("carol"), {{"kid", "k2"}}), std::chrono::seconds(1))
                  .value("type", ""),
              "welcome");
    const json stranger = login_within("dave", second_ec_key().sign(claims_for("dave"), {{"kid", "k9"}}),
                                       std::chrono::seconds(1));
    EXPECT_EQ(stranger.value("code", ""), "unauthorized") << stranger;
}

TEST(PublicKeyAuthStartTest, AKeyFileThatCannotBeUsedStopsTheStartAndNamesTheFile) {
    temp_dir dir;
    std::ofstream(dir.file("keys.pem")) << key_pair::rsa(1024).public_pem();
    const std::string config =
        "[auth]\nmode = \"token\"\npublic_keys = \"" + dir.file("keys.pem") + "\"\n";
    try {
        daemon_process daemon({}, config);
        ADD_FAILURE() << "the daemon started with a 1024-bit key";
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("keys.pem"), std::string::npos) << what;
        EXPECT_NE(what.find("2048"), std::string::npos) << what;
    }
}

}  // namespace
}  // namespace parley::integration
