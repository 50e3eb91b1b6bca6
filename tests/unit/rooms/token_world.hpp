#pragma once

// chat_world in token mode, for the tests of what exists only where a name is an identity
// (roles, bans, edits): the settings and a signed-in client.

#include "tests/token_minter.hpp"
#include "tests/unit/rooms/chat_world.hpp"

namespace parley::rooms::tests {

// test_settings() with auth.mode = "token" under the test tokens' secret, no clock leeway.
inline config::settings token_mode_settings() {
    config::settings s = test_settings();
    s.auth_mode = config::auth_mode::token;
    s.auth_token_secret = test_tokens::token_secret;
    s.auth_token_leeway_ms = 0;
    return s;
}

// A client on `worker` logged in as user with a valid token (its welcome consumed).
inline test_client& token_client(chat_world& world, std::string_view user, std::uint32_t worker = 0) {
    test_client& c = world.connect(worker);
    c.send({{"type", "login"}, {"user", user}, {"token", test_tokens::token_for(user)}});
    const json reply = c.take_one();
    EXPECT_EQ(reply.value("type", ""), "welcome") << reply.dump();
    return c;
}

}  // namespace parley::rooms::tests
