#pragma once

// Key pairs made in the test, and RS256 and ES256 login tokens signed with them, as an identity
// provider would make them: a fresh RSA (2048 bits) or P-256 key, its public half as PEM and as
// a JWK, and tokens signed with EVP_DigestSign (an ES256 signature turned from DER into the r||s
// form JWS uses).

#include "protocol/access_token.hpp"

#include <nlohmann/json.hpp>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace parley::test_tokens {

class key_pair {
public:
    static key_pair rsa(int bits = 2048) {
        return key_pair(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(bits)), "RS256");
    }
    static key_pair p256() { return key_pair(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"), "ES256"); }
    static key_pair p384() { return key_pair(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-384"), "ES384"); }

    const std::string& algorithm() const { return algorithm_; }

    // "-----BEGIN PUBLIC KEY-----..."
    std::string public_pem() const {
        std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
        PEM_write_bio_PUBKEY(bio.get(), key_.get());
        char* data = nullptr;
        const long size = BIO_get_mem_data(bio.get(), &data);
        return std::string(data, static_cast<std::size_t>(size));
    }

    // The public half as a JWK (RFC 7517/7518), named kid.
    nlohmann::json jwk(std::string_view kid) const {
        nlohmann::json out = {{"kid", kid}, {"use", "sig"}, {"alg", algorithm_}};
        if (algorithm_ == "RS256") {
            out["kty"] = "RSA";
            out["n"] = protocol::base64url_encode(big_param(OSSL_PKEY_PARAM_RSA_N));
            out["e"] = protocol::base64url_encode(big_param(OSSL_PKEY_PARAM_RSA_E));
        } else {
            out["kty"] = "EC";
            out["crv"] = "P-256";
            out["x"] = protocol::base64url_encode(big_param(OSSL_PKEY_PARAM_EC_PUB_X, 32));
            out["y"] = protocol::base64url_encode(big_param(OSSL_PKEY_PARAM_EC_PUB_Y, 32));
        }
        return out;
    }

    // A compact JWS of claims; header_extra goes into the header (a kid, say). alg may be
    // overridden to make tokens that lie about their algorithm.
    std::string sign(const nlohmann::json& claims, const nlohmann::json& header_extra = nlohmann::json::object(),
                     std::string alg = {}) const {
        nlohmann::json header = {{"alg", alg.empty() ? algorithm_ : alg}, {"typ", "JWT"}};
        header.update(header_extra);
        std::string input = protocol::base64url_encode(header.dump()) + "." + protocol::base64url_encode(claims.dump());
        std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
        std::size_t size = 0;
        if (EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()) != 1 ||
            EVP_DigestSign(ctx.get(), nullptr, &size, reinterpret_cast<const unsigned char*>(input.data()),
                           input.size()) != 1) {
            throw std::runtime_error("signing failed");
        }
        std::string signature(size, '\0');
        EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                       reinterpret_cast<const unsigned char*>(input.data()), input.size());
        signature.resize(size);
        if (algorithm_ != "RS256") {
            signature = der_to_raw(signature);
        }
        return input + "." + protocol::base64url_encode(signature);
    }

private:
    key_pair(EVP_PKEY* key, std::string algorithm) : key_(key, &EVP_PKEY_free), algorithm_(std::move(algorithm)) {
        if (key == nullptr) {
            throw std::runtime_error("key generation failed");
        }
    }

    // A big-number parameter as big-endian bytes, left-padded to width when given.
    std::string big_param(const char* name, int width = 0) const {
        BIGNUM* bn = nullptr;
        EVP_PKEY_get_bn_param(key_.get(), name, &bn);
        const int size = width > 0 ? width : BN_num_bytes(bn);
        std::string out(static_cast<std::size_t>(size), '\0');
        BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), size);
        BN_free(bn);
        return out;
    }

    static std::string der_to_raw(const std::string& der) {
        const auto* p = reinterpret_cast<const unsigned char*>(der.data());
        ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
        std::string out(64, '\0');
        BN_bn2binpad(ECDSA_SIG_get0_r(sig), reinterpret_cast<unsigned char*>(out.data()), 32);
        BN_bn2binpad(ECDSA_SIG_get0_s(sig), reinterpret_cast<unsigned char*>(out.data()) + 32, 32);
        ECDSA_SIG_free(sig);
        return out;
    }

    std::shared_ptr<EVP_PKEY> key_;
    std::string algorithm_;
};

}  // namespace parley::test_tokens
