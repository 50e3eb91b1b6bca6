#pragma once

#include "daemon.hpp"
#include "ws_client.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace parley::integration {

// Flags that lift the per-connection rate limit out of the way of tests that send bursts.
std::vector<std::string> relaxed_rate_args();

// Base fixture: a fresh daemon per test, stopped with SIGTERM at the end (exit status 0
// expected); its log is printed when the test failed.
class parley_test : public ::testing::Test {
protected:
    // Extra daemon flags for every test of a fixture; derived fixtures override this.
    virtual std::vector<std::string> daemon_args() const { return relaxed_rate_args(); }
    // The daemon's config file for every test of a fixture (TOML); empty by default.
    virtual std::string daemon_config() const { return {}; }

    void SetUp() override;
    void TearDown() override;

    std::uint16_t port() const { return daemon_->port(); }

    // Replaces the running daemon by a new one with the same flags (a restart).
    void restart_daemon();

    // A client connected and upgraded to WebSocket.
    ws_client connect(client_options options = {});
    // A client that is logged in as user; throws unless the reply is welcome.
    ws_client login(const std::string& user, client_options options = {});

    std::unique_ptr<daemon_process> daemon_;
};

// The helpers below throw std::runtime_error, naming what arrived instead, when the expected
// message does not come; GoogleTest reports that as a failure of the test.

// The next message, whatever it is.
json next_message(ws_client& client, milliseconds timeout = default_timeout);

// The next message, which must be of type.
json expect_type(ws_client& client, std::string_view type, milliseconds timeout = default_timeout);

// The first message of type, skipping others.
json wait_type(ws_client& client, std::string_view type, milliseconds timeout = default_timeout);

// The first message with "re" equal to id, skipping others.
json wait_reply(ws_client& client, const json& id, milliseconds timeout = default_timeout);

// Sends request (which must carry an "id") and returns the reply to it.
json call(ws_client& client, const json& request, milliseconds timeout = default_timeout);

// Sends request (with an "id") and checks that the reply is an error with code and re = id.
json expect_error_reply(ws_client& client, const json& request, std::string_view code);

// The next message, which must be an error with code.
json expect_error(ws_client& client, std::string_view code, milliseconds timeout = default_timeout);

// Joins room and returns the joined reply; extra fields (after, epoch) are added to the request.
json join_room(ws_client& client, const std::string& room, const json& extra = json::object());

// Every message up to and including the first that satisfies pred.
std::vector<json> read_until(ws_client& client, const std::function<bool(const json&)>& pred,
                             milliseconds timeout = default_timeout);

// Exactly count messages.
std::vector<json> read_messages(ws_client& client, std::size_t count,
                                milliseconds timeout = default_timeout);

// Predicates for read_until and friends.
std::function<bool(const json&)> is_type(std::string type);
std::function<bool(const json&)> is_chat(std::string text);  // a "message" with this text

// How many of messages satisfy pred.
std::size_t count_if(const std::vector<json>& messages, const std::function<bool(const json&)>& pred);

// Logs user in on client, retrying while the name is still taken (a leave is processed
// asynchronously) for up to window; returns the final reply.
// With a token, the login carries it (token mode).
json login_retrying(ws_client& client, const std::string& user,
                    milliseconds window = milliseconds(2000), const std::string& token = {});

// Wall clock in unix milliseconds, for checking "ts".
std::int64_t now_unix_ms();

// Checks the shape of a message object (type, room, from, text, integer seq, ts near now).
void expect_message_object(const json& message, const std::string& room, const std::string& from,
                           const std::string& text);

}  // namespace parley::integration
