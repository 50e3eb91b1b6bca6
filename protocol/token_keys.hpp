#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::protocol {

// The keys login tokens are checked with, and the signature check itself (JWS, RFC 7515/7518):
// an HS256 secret shared with the application, and public keys whose private halves only the
// application holds: RSA keys (RS256, PKCS #1 v1.5 with SHA-256, at least 2048 bits) and EC keys
// on P-256 (ES256). Keys come from PEM text ("BEGIN PUBLIC KEY", one or more) or a JWK Set
// (RFC 7517: "kty" RSA with "n" and "e", or EC with "crv" P-256, "x" and "y").
//
// The algorithm belongs to the key, never to the token: a token's "alg" must be the algorithm of
// the key that checks it, so an HS256 token is never checked against a public key's bytes (the
// classic confusion), and a token cannot ask for "none". A token that names a key ("kid") is
// checked with that key and with the keys that have no kid; one without "kid" with every key of
// its algorithm.
//
// Immutable once built; shared by every worker (std::shared_ptr<const token_keys>) and replaced
// whole when the keys change (a reload, a JWK Set fetched again).

enum class token_algorithm { hs256, rs256, es256 };

// "HS256", "RS256", "ES256".
std::string_view algorithm_name(token_algorithm algorithm);

class token_keys {
public:
    token_keys();
    ~token_keys();
    token_keys(token_keys&&) noexcept;
    token_keys& operator=(token_keys&&) noexcept;
    token_keys(const token_keys&) = delete;
    token_keys& operator=(const token_keys&) = delete;

    // An HS256 secret (kid: none).
    void add_secret(std::string secret);
    // Every public key in PEM text, each with the given kid ("": none). Returns "" or what is
    // wrong (no key, a key that is neither RSA nor P-256, an RSA key under 2048 bits).
    std::string add_pem(std::string_view pem, std::string_view kid = {});
    // The keys of a JWK Set (JSON). Keys for another use than "sig", of other types or curves,
    // or whose "alg" is not their type's are skipped; returns "" or what is wrong (not a JWK
    // Set, a usable key malformed, no usable key at all).
    std::string add_jwks(std::string_view json);
    // The keys of `other` too (a file's and a fetched set's together).
    void add_all(const token_keys& other);

    bool empty() const;
    std::size_t size() const;
    // Whether a key named kid is here (a token naming another may want the set fetched again).
    bool has_kid(std::string_view kid) const;

    enum class outcome { valid, no_key, unknown_kid, bad_signature };
    // Checks a signature over `signed_part` ("HEADER.PAYLOAD" as the token has it) for a token
    // whose header named `alg` and `kid` (nullopt: none).
    outcome check(std::string_view alg, const std::optional<std::string>& kid, std::string_view signed_part,
                  std::string_view signature) const;

    struct key;

private:
    std::vector<std::shared_ptr<const key>> keys_;
};

}  // namespace parley::protocol
