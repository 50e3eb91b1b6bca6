#pragma once

#include "protocol/token_keys.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::protocol {

// Verification of the access tokens a `login` carries in token mode: JSON Web Tokens (RFC 7519)
// in compact JWS form (RFC 7515), signed with HMAC-SHA256 ("HS256") under a secret shared with
// the web application that mints them, or with RS256 or ES256 under keys whose public halves
// are configured (token_keys.hpp).
//
// Only the algorithms of the keys configured are accepted: "none", any other algorithm, and a
// header that names critical extensions are refused whatever the signature, so a token cannot
// choose how it is checked (algorithm confusion). A MAC is compared in constant time.

struct token_claims {
    std::string subject;                           // "sub": the user name
    std::int64_t expires = 0;                      // "exp", seconds since the epoch
    std::optional<std::vector<std::string>> rooms; // "rooms": the rooms the user may join, if limited
    // "roles": {"room or prefix*": "role"}, the user's roles in rooms (the chat logic checks the
    // role names), in the token's order.
    std::vector<std::pair<std::string, std::string>> roles;
};

// unknown_key: the token names a key ("kid") that none of the keys has (a JWK Set fetched
// again may have it); claims: a claim is missing or wrong, the issuer and audience included.
enum class token_problem { malformed, algorithm, signature, expired, not_yet_valid, claims, unknown_key };

struct token_check {
    std::optional<token_claims> claims;  // set when the token is valid
    token_problem problem = token_problem::malformed;
    std::string reason;  // for the log, never for the client: it names what failed
};

// What a token must show besides a good signature.
struct token_rules {
    std::int64_t leeway = 0;  // seconds of clock difference tolerated for "exp" and "nbf"
    std::string issuer;       // "iss" must equal it; "": not checked
    std::string audience;     // "aud" (a string, or an array of them) must hold it; "": not checked
};

// Verifies token with `keys` (token_keys.hpp: the key decides the algorithm) at time now
// (seconds since the epoch).
token_check verify_token(std::string_view token, const token_keys& keys, std::int64_t now, const token_rules& rules);

// The same with one HS256 secret and no issuer or audience.
token_check verify_hs256_token(std::string_view token, std::string_view secret, std::int64_t now,
                               std::int64_t leeway = 0);

// Whether a presented secret (an admin bearer token) equals the configured one, in time that
// does not depend on where they differ (only on their lengths).
bool secrets_equal(std::string_view presented, std::string_view expected);

// base64url without padding (RFC 4648 section 5), as JWS uses it. Decoding refuses padding,
// characters outside the alphabet and a length that cannot occur (1 mod 4).
std::optional<std::string> base64url_decode(std::string_view text);
std::string base64url_encode(std::string_view bytes);

}  // namespace parley::protocol
