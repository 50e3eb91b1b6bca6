#pragma once

// Mints HS256 login tokens for tests, as a web application would: header and claims as JSON,
// base64url, and OpenSSL's HMAC-SHA256 over "header.claims".

#include "protocol/access_token.hpp"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace parley::test_tokens {

inline const std::string token_secret = "parley-test-secret-for-logins-0123456789";

inline std::int64_t now_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

inline std::string sign_token(const nlohmann::json& claims, std::string_view secret = token_secret) {
    std::string signing_input = protocol::base64url_encode(R"({"alg":"HS256","typ":"JWT"})");
    signing_input += '.';
    signing_input += protocol::base64url_encode(claims.dump());
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_size = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size(), mac, &mac_size);
    signing_input += '.';
    signing_input += protocol::base64url_encode(std::string_view(reinterpret_cast<const char*>(mac), mac_size));
    return signing_input;
}

// A token for `user` valid for the next hour.
inline std::string token_for(std::string_view user) {
    return sign_token({{"sub", user}, {"exp", now_seconds() + 3600}});
}

}  // namespace parley::test_tokens
