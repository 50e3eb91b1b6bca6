#include "protocol/access_token.hpp"

#include <nlohmann/json.hpp>
#include <openssl/crypto.h>

#include <cmath>

namespace parley::protocol {
namespace {

using json = nlohmann::json;

constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// The value of one base64url character, or -1.
int sextet(char c) {
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '-') {
        return 62;
    }
    if (c == '_') {
        return 63;
    }
    return -1;
}

token_check refuse(token_problem problem, std::string reason) {
    token_check check;
    check.problem = problem;
    check.reason = std::move(reason);
    return check;
}

// A JSON object from one base64url part of the token, or nothing.
std::optional<json> decode_object(std::string_view part) {
    auto bytes = base64url_decode(part);
    if (!bytes) {
        return std::nullopt;
    }
    json value = json::parse(*bytes, nullptr, false);
    if (value.is_discarded() || !value.is_object()) {
        return std::nullopt;
    }
    return value;
}

// A NumericDate claim (RFC 7519 section 2): seconds, possibly with a fraction, floored to whole
// seconds (validity moves by less than a second).
std::optional<std::int64_t> numeric_date(const json& value) {
    if (value.is_number_integer()) {
        return value.get<std::int64_t>();
    }
    if (value.is_number_float()) {
        double seconds = value.get<double>();
        if (std::isfinite(seconds) && std::abs(seconds) < 9.0e15) {
            return static_cast<std::int64_t>(std::floor(seconds));
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> base64url_decode(std::string_view text) {
    if (text.size() % 4 == 1) {
        return std::nullopt;
    }
    std::string out;
    out.reserve(text.size() * 3 / 4);
    std::uint32_t buffer = 0;
    int bits = 0;
    for (char c : text) {
        int value = sextet(c);
        if (value < 0) {
            return std::nullopt;
        }
        buffer = (buffer << 6) | static_cast<std::uint32_t>(value);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
        }
    }
    // Unused low bits of the last character must be zero: otherwise two texts would decode to
    // the same bytes, and a signature could be "changed" without changing what it signs.
    if (bits > 0 && (buffer & ((1u << bits) - 1)) != 0) {
        return std::nullopt;
    }
    return out;
}

std::string base64url_encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() * 4 + 2) / 3);
    std::uint32_t buffer = 0;
    int bits = 0;
    for (char c : bytes) {
        buffer = (buffer << 8) | static_cast<unsigned char>(c);
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out.push_back(alphabet[(buffer >> bits) & 0x3F]);
        }
    }
    if (bits > 0) {
        out.push_back(alphabet[(buffer << (6 - bits)) & 0x3F]);
    }
    return out;
}

token_check verify_hs256_token(std::string_view token, std::string_view secret, std::int64_t now,
                               std::int64_t leeway) {
    token_keys keys;
    keys.add_secret(std::string(secret));
    token_rules rules;
    rules.leeway = leeway;
    return verify_token(token, keys, now, rules);
}

token_check verify_token(std::string_view token, const token_keys& keys, std::int64_t now, const token_rules& rules) {
    const std::int64_t leeway = rules.leeway;
    const std::size_t first_dot = token.find('.');
    const std::size_t second_dot = first_dot == std::string_view::npos ? first_dot : token.find('.', first_dot + 1);
    if (second_dot == std::string_view::npos || token.find('.', second_dot + 1) != std::string_view::npos) {
        return refuse(token_problem::malformed, "not three dot-separated parts");
    }
    const std::string_view header_part = token.substr(0, first_dot);
    const std::string_view payload_part = token.substr(first_dot + 1, second_dot - first_dot - 1);
    const std::string_view signature_part = token.substr(second_dot + 1);

    auto header = decode_object(header_part);
    if (!header) {
        return refuse(token_problem::malformed, "header is not base64url JSON object");
    }
    auto alg = header->find("alg");
    if (alg == header->end() || !alg->is_string()) {
        return refuse(token_problem::algorithm, "no algorithm");
    }
    if (header->contains("crit")) {
        return refuse(token_problem::algorithm, "critical header extensions are not supported");
    }
    std::optional<std::string> kid;
    if (auto named = header->find("kid"); named != header->end()) {
        if (!named->is_string()) {
            return refuse(token_problem::malformed, "'kid' is not a string");
        }
        kid = named->get<std::string>();
    }

    auto signature = base64url_decode(signature_part);
    if (!signature) {
        return refuse(token_problem::malformed, "signature is not base64url");
    }
    const std::string algorithm = alg->get<std::string>();
    switch (keys.check(algorithm, kid, token.substr(0, second_dot), *signature)) {
    case token_keys::outcome::valid: break;
    case token_keys::outcome::no_key:
        return refuse(token_problem::algorithm, "no key for the algorithm '" + algorithm.substr(0, 16) + "'");
    case token_keys::outcome::unknown_kid:
        return refuse(token_problem::unknown_key, "no key named '" + kid->substr(0, 64) + "'");
    case token_keys::outcome::bad_signature: return refuse(token_problem::signature, "signature does not match");
    }

    // Only now, with the signature checked, is the payload worth reading.
    auto payload = decode_object(payload_part);
    if (!payload) {
        return refuse(token_problem::malformed, "payload is not base64url JSON object");
    }
    token_claims claims;
    auto sub = payload->find("sub");
    if (sub == payload->end() || !sub->is_string() || sub->get<std::string>().empty()) {
        return refuse(token_problem::claims, "no 'sub' claim");
    }
    claims.subject = sub->get<std::string>();
    if (!rules.issuer.empty()) {
        auto iss = payload->find("iss");
        if (iss == payload->end() || !iss->is_string() || iss->get<std::string>() != rules.issuer) {
            return refuse(token_problem::claims, "'iss' is not the issuer configured");
        }
    }
    if (!rules.audience.empty()) {
        auto aud = payload->find("aud");
        bool meant_for_us = false;
        if (aud != payload->end() && aud->is_string()) {
            meant_for_us = aud->get<std::string>() == rules.audience;
        } else if (aud != payload->end() && aud->is_array()) {
            for (const auto& one : *aud) {
                meant_for_us = meant_for_us || (one.is_string() && one.get<std::string>() == rules.audience);
            }
        }
        if (!meant_for_us) {
            return refuse(token_problem::claims, "'aud' does not name the audience configured");
        }
    }
    auto exp = payload->find("exp");
    std::optional<std::int64_t> expires = exp == payload->end() ? std::nullopt : numeric_date(*exp);
    if (!expires) {
        return refuse(token_problem::claims, "no numeric 'exp' claim");
    }
    if (now >= *expires + leeway) {
        return refuse(token_problem::expired, "token expired");
    }
    claims.expires = *expires;
    if (auto nbf = payload->find("nbf"); nbf != payload->end()) {
        auto not_before = numeric_date(*nbf);
        if (!not_before) {
            return refuse(token_problem::claims, "'nbf' claim is not a number");
        }
        if (now + leeway < *not_before) {
            return refuse(token_problem::not_yet_valid, "token not yet valid");
        }
    }
    if (auto rooms = payload->find("rooms"); rooms != payload->end()) {
        if (!rooms->is_array()) {
            return refuse(token_problem::claims, "'rooms' claim is not an array of strings");
        }
        std::vector<std::string> names;
        for (const auto& room : *rooms) {
            if (!room.is_string()) {
                return refuse(token_problem::claims, "'rooms' claim is not an array of strings");
            }
            names.push_back(room.get<std::string>());
        }
        claims.rooms = std::move(names);
    }
    if (auto roles = payload->find("roles"); roles != payload->end()) {
        if (!roles->is_object()) {
            return refuse(token_problem::claims, "'roles' claim is not an object of strings");
        }
        for (const auto& [pattern, role] : roles->items()) {
            if (!role.is_string()) {
                return refuse(token_problem::claims, "'roles' claim is not an object of strings");
            }
            claims.roles.emplace_back(pattern, role.get<std::string>());
        }
    }
    token_check check;
    check.claims = std::move(claims);
    return check;
}

bool secrets_equal(std::string_view presented, std::string_view expected) {
    if (presented.size() != expected.size() || expected.empty()) {
        return false;
    }
    return CRYPTO_memcmp(presented.data(), expected.data(), expected.size()) == 0;
}

}  // namespace parley::protocol
