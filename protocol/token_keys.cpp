#include "protocol/token_keys.hpp"

#include "protocol/access_token.hpp"

#include <nlohmann/json.hpp>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

#include <array>

namespace parley::protocol {

struct token_keys::key {
    std::string kid;  // "": none
    token_algorithm algorithm = token_algorithm::hs256;
    std::string secret;  // HS256
    EVP_PKEY* public_key = nullptr;  // RS256, ES256; owned

    key() = default;
    key(const key&) = delete;
    key& operator=(const key&) = delete;
    ~key() { EVP_PKEY_free(public_key); }
};

namespace {

using json = nlohmann::json;
using key = token_keys::key;

template <typename T, void (*Free)(T*)>
struct openssl_deleter {
    void operator()(T* p) const { Free(p); }
};
using bio_ptr = std::unique_ptr<BIO, openssl_deleter<BIO, BIO_free_all>>;
using bn_ptr = std::unique_ptr<BIGNUM, openssl_deleter<BIGNUM, BN_free>>;
using param_bld_ptr = std::unique_ptr<OSSL_PARAM_BLD, openssl_deleter<OSSL_PARAM_BLD, OSSL_PARAM_BLD_free>>;
using params_ptr = std::unique_ptr<OSSL_PARAM, openssl_deleter<OSSL_PARAM, OSSL_PARAM_free>>;
using pkey_ctx_ptr = std::unique_ptr<EVP_PKEY_CTX, openssl_deleter<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using md_ctx_ptr = std::unique_ptr<EVP_MD_CTX, openssl_deleter<EVP_MD_CTX, EVP_MD_CTX_free>>;
using ecdsa_sig_ptr = std::unique_ptr<ECDSA_SIG, openssl_deleter<ECDSA_SIG, ECDSA_SIG_free>>;

constexpr int min_rsa_bits = 2048;
constexpr std::size_t p256_coordinate = 32;

// The algorithm a public key checks, or what is wrong with it.
std::optional<token_algorithm> algorithm_of(EVP_PKEY* pkey, std::string& why) {
    if (EVP_PKEY_is_a(pkey, "RSA")) {
        if (EVP_PKEY_get_bits(pkey) < min_rsa_bits) {
            why = "an RSA key of " + std::to_string(EVP_PKEY_get_bits(pkey)) + " bits (at least 2048 are needed)";
            return std::nullopt;
        }
        return token_algorithm::rs256;
    }
    if (EVP_PKEY_is_a(pkey, "EC")) {
        std::array<char, 64> group{};
        std::size_t length = 0;
        if (EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, group.data(), group.size(), &length) == 1 &&
            std::string_view(group.data(), length) == "prime256v1") {
            return token_algorithm::es256;
        }
        why = "an EC key on another curve than P-256";
        return std::nullopt;
    }
    why = "a key that is neither RSA nor EC";
    return std::nullopt;
}

std::shared_ptr<const key> public_key(EVP_PKEY* pkey, token_algorithm algorithm, std::string kid) {
    auto k = std::make_shared<key>();
    k->kid = std::move(kid);
    k->algorithm = algorithm;
    k->public_key = pkey;
    return k;
}

// A JWK member that holds base64url bytes, or nothing.
std::optional<std::string> jwk_bytes(const json& jwk, const char* name) {
    const auto it = jwk.find(name);
    if (it == jwk.end() || !it->is_string()) {
        return std::nullopt;
    }
    auto bytes = base64url_decode(it->get<std::string>());
    if (!bytes || bytes->empty()) {
        return std::nullopt;
    }
    return bytes;
}

bn_ptr big_number(const std::string& bytes) {
    return bn_ptr(BN_bin2bn(reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()),
                            nullptr));
}

// An EVP_PKEY from parameters (OpenSSL 3's way to build a key from its numbers).
EVP_PKEY* key_from_params(const char* type, OSSL_PARAM_BLD* bld) {
    params_ptr params(OSSL_PARAM_BLD_to_param(bld));
    pkey_ctx_ptr ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
    EVP_PKEY* pkey = nullptr;
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
        EVP_PKEY_fromdata(ctx.get(), &pkey, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
        return nullptr;
    }
    return pkey;
}

EVP_PKEY* rsa_from_jwk(const json& jwk) {
    auto n = jwk_bytes(jwk, "n");
    auto e = jwk_bytes(jwk, "e");
    if (!n || !e) {
        return nullptr;
    }
    bn_ptr modulus = big_number(*n);
    bn_ptr exponent = big_number(*e);
    param_bld_ptr bld(OSSL_PARAM_BLD_new());
    if (!modulus || !exponent || !bld || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, modulus.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, exponent.get()) != 1) {
        return nullptr;
    }
    return key_from_params("RSA", bld.get());
}

EVP_PKEY* p256_from_jwk(const json& jwk) {
    auto x = jwk_bytes(jwk, "x");
    auto y = jwk_bytes(jwk, "y");
    if (!x || !y || x->size() != p256_coordinate || y->size() != p256_coordinate) {
        return nullptr;
    }
    // The uncompressed point: 0x04, x, y.
    std::string point = "\x04" + *x + *y;
    param_bld_ptr bld(OSSL_PARAM_BLD_new());
    if (!bld || OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size()) != 1) {
        return nullptr;
    }
    // fromdata accepts a point that is not on the curve; a public-key check refuses it.
    EVP_PKEY* pkey = key_from_params("EC", bld.get());
    if (pkey != nullptr) {
        pkey_ctx_ptr check(EVP_PKEY_CTX_new_from_pkey(nullptr, pkey, nullptr));
        if (!check || EVP_PKEY_public_check(check.get()) != 1) {
            EVP_PKEY_free(pkey);
            return nullptr;
        }
    }
    return pkey;
}

bool verify_digest(EVP_PKEY* pkey, std::string_view data, const unsigned char* signature, std::size_t size) {
    md_ctx_ptr ctx(EVP_MD_CTX_new());
    return ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, pkey) == 1 &&
           EVP_DigestVerify(ctx.get(), signature, size, reinterpret_cast<const unsigned char*>(data.data()),
                            data.size()) == 1;
}

// JWS's ES256 signature is r and s, 32 bytes each; OpenSSL verifies their DER form.
bool verify_es256(EVP_PKEY* pkey, std::string_view data, std::string_view signature) {
    if (signature.size() != 2 * p256_coordinate) {
        return false;
    }
    const auto* bytes = reinterpret_cast<const unsigned char*>(signature.data());
    ecdsa_sig_ptr sig(ECDSA_SIG_new());
    constexpr int width = static_cast<int>(p256_coordinate);
    BIGNUM* r = BN_bin2bn(bytes, width, nullptr);
    BIGNUM* s = BN_bin2bn(bytes + p256_coordinate, width, nullptr);
    if (!sig || r == nullptr || s == nullptr || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
        BN_free(r);
        BN_free(s);
        return false;
    }
    unsigned char* der = nullptr;
    const int der_size = i2d_ECDSA_SIG(sig.get(), &der);
    if (der_size <= 0) {
        return false;
    }
    const bool valid = verify_digest(pkey, data, der, static_cast<std::size_t>(der_size));
    OPENSSL_free(der);
    return valid;
}

bool verify_hs256(const std::string& secret, std::string_view data, std::string_view signature) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
    unsigned int mac_size = 0;
    if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
             reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac.data(), &mac_size) == nullptr) {
        return false;
    }
    return signature.size() == mac_size && CRYPTO_memcmp(signature.data(), mac.data(), mac_size) == 0;
}

}  // namespace

std::string_view algorithm_name(token_algorithm algorithm) {
    switch (algorithm) {
    case token_algorithm::hs256: return "HS256";
    case token_algorithm::rs256: return "RS256";
    case token_algorithm::es256: return "ES256";
    }
    return "?";
}

token_keys::token_keys() = default;
token_keys::~token_keys() = default;
token_keys::token_keys(token_keys&&) noexcept = default;
token_keys& token_keys::operator=(token_keys&&) noexcept = default;

void token_keys::add_secret(std::string secret) {
    auto k = std::make_shared<key>();
    k->algorithm = token_algorithm::hs256;
    k->secret = std::move(secret);
    keys_.push_back(std::move(k));
}

std::string token_keys::add_pem(std::string_view pem, std::string_view kid) {
    bio_ptr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    if (!bio) {
        return "out of memory";
    }
    std::vector<std::shared_ptr<const key>> found;
    while (EVP_PKEY* pkey = PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr)) {
        std::string why;
        const auto algorithm = algorithm_of(pkey, why);
        if (!algorithm) {
            EVP_PKEY_free(pkey);
            return "key " + std::to_string(found.size() + 1) + " is " + why;
        }
        found.push_back(public_key(pkey, *algorithm, std::string(kid)));
    }
    ERR_clear_error();  // the read that ended the loop left "no start line"
    if (found.empty()) {
        return "no public key (-----BEGIN PUBLIC KEY-----) in it";
    }
    keys_.insert(keys_.end(), found.begin(), found.end());
    return {};
}

std::string token_keys::add_jwks(std::string_view text) {
    const json set = json::parse(text, nullptr, false);
    if (set.is_discarded() || !set.is_object() || !set.contains("keys") || !set["keys"].is_array()) {
        return "not a JWK Set (a JSON object with a \"keys\" array)";
    }
    std::vector<std::shared_ptr<const key>> found;
    std::size_t index = 0;
    for (const json& jwk : set["keys"]) {
        ++index;
        if (!jwk.is_object()) {
            return "key " + std::to_string(index) + " is not an object";
        }
        const std::string kty = jwk.value("kty", std::string());
        const std::string use = jwk.contains("use") && jwk["use"].is_string() ? jwk["use"].get<std::string>() : "sig";
        const std::string alg = jwk.contains("alg") && jwk["alg"].is_string() ? jwk["alg"].get<std::string>() : "";
        const std::string crv = jwk.value("crv", std::string());
        const std::string kid = jwk.contains("kid") && jwk["kid"].is_string() ? jwk["kid"].get<std::string>() : "";
        const bool rsa = kty == "RSA" && (alg.empty() || alg == "RS256");
        const bool p256 = kty == "EC" && crv == "P-256" && (alg.empty() || alg == "ES256");
        if (use != "sig" || (!rsa && !p256)) {
            continue;  // for encryption, or of a kind tokens here are never signed with
        }
        EVP_PKEY* pkey = rsa ? rsa_from_jwk(jwk) : p256_from_jwk(jwk);
        if (pkey == nullptr) {
            ERR_clear_error();
            return "key " + std::to_string(index) + (kid.empty() ? "" : " ('" + kid + "')") + " is malformed";
        }
        std::string why;
        const auto algorithm = algorithm_of(pkey, why);
        if (!algorithm) {
            EVP_PKEY_free(pkey);
            return "key " + std::to_string(index) + " is " + why;
        }
        found.push_back(public_key(pkey, *algorithm, kid));
    }
    if (found.empty()) {
        return "no RS256 or ES256 signing key in the set";
    }
    keys_.insert(keys_.end(), found.begin(), found.end());
    return {};
}

void token_keys::add_all(const token_keys& other) { keys_.insert(keys_.end(), other.keys_.begin(), other.keys_.end()); }

bool token_keys::empty() const { return keys_.empty(); }

std::size_t token_keys::size() const { return keys_.size(); }

bool token_keys::has_kid(std::string_view kid) const {
    for (const auto& k : keys_) {
        if (k->kid == kid) {
            return true;
        }
    }
    return false;
}

token_keys::outcome token_keys::check(std::string_view alg, const std::optional<std::string>& kid,
                                      std::string_view signed_part, std::string_view signature) const {
    bool any_of_alg = false;
    for (const auto& k : keys_) {
        // A key without a kid checks any token of its algorithm; one with a kid, tokens that
        // name it or no key at all.
        if (kid && !k->kid.empty() && k->kid != *kid) {
            continue;
        }
        if (algorithm_name(k->algorithm) != alg) {
            continue;  // the key decides the algorithm
        }
        any_of_alg = true;
        bool valid = false;
        switch (k->algorithm) {
        case token_algorithm::hs256: valid = verify_hs256(k->secret, signed_part, signature); break;
        case token_algorithm::rs256:
            valid = verify_digest(k->public_key, signed_part, reinterpret_cast<const unsigned char*>(signature.data()),
                                  signature.size());
            break;
        case token_algorithm::es256: valid = verify_es256(k->public_key, signed_part, signature); break;
        }
        if (valid) {
            return outcome::valid;
        }
    }
    ERR_clear_error();
    if (kid && !has_kid(*kid)) {
        return outcome::unknown_kid;
    }
    return any_of_alg ? outcome::bad_signature : outcome::no_key;
}

}  // namespace parley::protocol
