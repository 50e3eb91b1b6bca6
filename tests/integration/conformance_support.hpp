#pragma once

// Raw-frame helpers for the RFC 6455 suites (rfc6455_test.cpp and the conformance_*_test.cpp
// files): a fixture that runs one case against the real daemon and then checks that a fresh
// client is still served, and helpers that build requests byte-exact and read the server's
// answer frame by frame.

#include "test_support.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::integration {

// Bound for cases that move megabytes. It only guards against a hang; it is no speed test.
inline constexpr milliseconds hang_guard{30000};

// How the server ended a connection: the messages that came before its close frame, and that
// frame's code (closed_without_frame when TCP ended without one).
struct close_outcome {
    std::vector<json> messages;
    std::uint16_t code = 0;
};

// A fresh daemon per test (parley_test). Every test ends by checking that the daemon serves a
// new client normally (TearDown), whatever the case did to its own connections.
class ws_conformance_test : public parley_test {
protected:
    void TearDown() override;

    // Runs violate on a fresh connection and expects the server to send a close frame with code
    // and then end the TCP connection; afterwards a fresh client must be served normally.
    void expect_violation(const std::string& description, std::uint16_t code,
                          const std::function<void(ws_client&)>& violate);

    // A new client logs in, joins a room, says a line and receives it with its ack.
    void expect_still_serving();

    // A new client, logged in under a name unique in this test and a member of room "r".
    ws_client member();

    // A user name not used before in this test.
    std::string fresh_user();

private:
    int users_ = 0;
};

// A close frame's payload: the code in network byte order, then the reason.
std::string close_payload(std::uint16_t code, std::string_view reason = {});

// Bytes as "c3 28 " for failure messages.
std::string hex(std::string_view bytes);

// Writes bytes with one send() per piece of at most chunk bytes, pausing between pieces so that
// the server sees them in separate reads.
void send_in_chunks(ws_client& client, std::string_view bytes, std::size_t chunk,
                    milliseconds pause = milliseconds(0));

// A say request of exactly size bytes for room "r": {"type":"say","room":"r","id":"ID",
// "pad":"...","text":"TEXT"}. The filler field, which the server reads past, comes before the
// text, so a reassembly or unmasking error anywhere in the message changes the text the room
// receives (or makes the request invalid). text goes in raw: it must be valid inside a JSON
// string. Throws std::invalid_argument when size is too small for the rest.
std::string sized_say(std::string_view id, std::string_view text, std::size_t size);

// The smallest size sized_say accepts for this id and text.
std::size_t sized_say_minimum(std::string_view id, std::string_view text);

// Reads until the sender has both the ack of the say with this id and the room's message with
// this text (their order is not fixed); throws if either is missing or an error comes instead.
void expect_said(ws_client& client, std::string_view id, std::string_view text,
                 milliseconds timeout = default_timeout);

// Reads application messages until the server's close frame (answering it), then expects the
// server to end TCP. Throws when neither a close frame nor the end of the connection comes.
close_outcome read_to_close(ws_client& client, milliseconds timeout = default_timeout);

// Every frame the server sends until it ends the TCP connection, answering its close frame.
// Throws when the connection is still open at the timeout.
std::vector<ws_frame> frames_to_eof(ws_client& client, milliseconds timeout = default_timeout);

// On a member of room "r": writes a say (id "before"), then the frames in bad, then a ping, in
// one write (or in pieces of chunk bytes, 1 ms apart), and expects the say carried out, then a
// close frame with code as the last frame, and no pong: the server acts on everything before a
// violation and on nothing after it.
void expect_answered_then_closed(ws_client& client, std::string_view bad, std::uint16_t code,
                                 std::size_t chunk = 0);

// The next frame must be a final pong carrying payload.
void expect_pong(ws_client& client, std::string_view payload, milliseconds timeout = default_timeout);

}  // namespace parley::integration
