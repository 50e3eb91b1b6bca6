#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::protocol {

// Verification of the access tokens a `login` carries in token mode: JSON Web Tokens (RFC 7519)
// in compact JWS form (RFC 7515), signed with HMAC-SHA256 ("HS256") under a secret shared with
// the web application that mints them.
//
// Only the algorithm configured is accepted: "none", any other algorithm, and a header that
// names critical extensions are refused whatever the signature, so a token cannot choose how it
// is checked (algorithm confusion). The MAC is compared in constant time.

struct token_claims {
    std::string subject;                           // "sub": the user name
    std::int64_t expires = 0;                      // "exp", seconds since the epoch
    std::optional<std::vector<std::string>> rooms; // "rooms": the rooms the user may join, if limited
    // "roles": {"room or prefix*": "role"}, the user's roles in rooms (the chat logic checks the
    // role names), in the token's order.
    std::vector<std::pair<std::string, std::string>> roles;
};

enum class token_problem { malformed, algorithm, signature, expired, not_yet_valid, claims };

struct token_check {
    std::optional<token_claims> claims;  // set when the token is valid
    token_problem problem = token_problem::malformed;
    std::string reason;  // for the log, never for the client: it names what failed
};

// Verifies token against the HS256 secret at time now (seconds since the epoch). `leeway`
// seconds of clock difference are tolerated for "exp" and "nbf".
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
