#include "conformance_support.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace parley::integration {

namespace {

using clock = std::chrono::steady_clock;

milliseconds left_until(clock::time_point deadline) {
    return std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(deadline - clock::now()));
}

}  // namespace

void ws_conformance_test::TearDown() {
    if (daemon_) {
        // Whatever the case did to its own connections, the daemon must still serve newcomers.
        try {
            expect_still_serving();
        } catch (const std::exception& e) {
            ADD_FAILURE() << "after the case, a new client was not served: " << e.what();
        }
    }
    parley_test::TearDown();
}

void ws_conformance_test::expect_violation(const std::string& description, std::uint16_t code,
                                           const std::function<void(ws_client&)>& violate) {
    SCOPED_TRACE(description);
    {
        ws_client client = connect();
        violate(client);
        EXPECT_EQ(client.expect_close(), code);
        EXPECT_TRUE(client.wait_eof()) << "TCP connection left open after the close";
    }
    expect_still_serving();
}

void ws_conformance_test::expect_still_serving() {
    const std::string user = fresh_user();
    ws_client client = connect();
    const json welcome = call(client, {{"type", "login"}, {"user", user}, {"id", 1}});
    if (welcome.value("type", "") != "welcome") {
        throw std::runtime_error("login refused: " + welcome.dump());
    }
    // A room of its own, so nothing another client of the test said can get in the way.
    join_room(client, "probe-" + user);
    std::string say = R"({"type":"say","room":"probe-)";
    say.append(user).append(R"(","text":"still here","id":"probe"})");
    client.send_text(say);
    expect_said(client, "probe", "still here");
}

ws_client ws_conformance_test::member() {
    ws_client client = login(fresh_user());
    join_room(client, "r");
    return client;
}

std::string ws_conformance_test::fresh_user() {
    return "u" + std::to_string(++users_);
}

std::string close_payload(std::uint16_t code, std::string_view reason) {
    std::string payload{static_cast<char>(code >> 8), static_cast<char>(code & 0xFF)};
    payload.append(reason);
    return payload;
}

std::string hex(std::string_view bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
        out += ' ';
    }
    return out;
}

void send_in_chunks(ws_client& client, std::string_view bytes, std::size_t chunk, milliseconds pause) {
    while (!bytes.empty()) {
        client.send_raw(bytes.substr(0, chunk));
        bytes.remove_prefix(std::min(chunk, bytes.size()));
        if (!bytes.empty() && pause.count() > 0) {
            std::this_thread::sleep_for(pause);
        }
    }
}

namespace {

std::string say_head(std::string_view id) {
    std::string head = R"({"type":"say","room":"r","id":")";
    head.append(id).append(R"(","pad":")");
    return head;
}

std::string say_tail(std::string_view text) {
    std::string tail = R"(","text":")";
    tail.append(text).append(R"("})");
    return tail;
}

}  // namespace

std::size_t sized_say_minimum(std::string_view id, std::string_view text) {
    return say_head(id).size() + say_tail(text).size();
}

std::string sized_say(std::string_view id, std::string_view text, std::size_t size) {
    const std::size_t minimum = sized_say_minimum(id, text);
    if (size < minimum) {
        throw std::invalid_argument("a say with this id and text needs at least " + std::to_string(minimum) +
                                    " bytes, not " + std::to_string(size));
    }
    std::string request = say_head(id);
    request.reserve(size);
    // Letters in a cycle of 26, which no multiple of the 4-byte mask period repeats.
    for (std::size_t i = 0; i < size - minimum; ++i) {
        request.push_back(static_cast<char>('a' + i % 26));
    }
    request.append(say_tail(text));
    return request;
}

void expect_said(ws_client& client, std::string_view id, std::string_view text, milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    bool acked = false;
    bool delivered = false;
    while (!acked || !delivered) {
        const json message = next_message(client, left_until(deadline));
        const std::string type = message.value("type", "");
        if (message.contains("re") && message["re"] == id) {
            if (type != "ack") {
                throw std::runtime_error("the say " + std::string(id) + " was answered with " + message.dump());
            }
            acked = true;
        } else if (type == "message" && message.value("text", "") == text) {
            delivered = true;
        }
    }
}

close_outcome read_to_close(ws_client& client, milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    close_outcome outcome;
    while (auto message = client.recv_json(left_until(deadline))) {
        outcome.messages.push_back(std::move(*message));
    }
    if (client.close_code()) {
        outcome.code = *client.close_code();
    } else if (client.eof()) {
        outcome.code = closed_without_frame;
    } else {
        throw std::runtime_error("the server neither closed nor answered within " +
                                 std::to_string(timeout.count()) + " ms");
    }
    if (!client.wait_eof(left_until(deadline))) {
        throw std::runtime_error("the server sent its close frame but left TCP open");
    }
    return outcome;
}

std::vector<ws_frame> frames_to_eof(ws_client& client, milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    std::vector<ws_frame> frames;
    while (auto frame = client.recv_frame(left_until(deadline))) {
        if (frame->opcode == opcode::close && !client.close_sent()) {
            try {
                client.send_frame(opcode::close, frame->payload.substr(0, 2));
            } catch (const std::exception&) {
                // The server may have ended TCP already; there is nothing left to answer then.
            }
        }
        frames.push_back(std::move(*frame));
    }
    if (!client.eof()) {
        throw std::runtime_error("the connection was still open after " + std::to_string(timeout.count()) +
                                 " ms, " + std::to_string(frames.size()) + " frames received");
    }
    return frames;
}

void expect_answered_then_closed(ws_client& client, std::string_view bad, std::uint16_t code,
                                 std::size_t chunk) {
    std::string bytes = client.encode_frame(opcode::text, sized_say("before", "before the violation", 120));
    bytes.append(bad);
    bytes += client.encode_frame(opcode::ping, "after the violation");
    if (chunk == 0) {
        client.send_raw(bytes);
    } else {
        send_in_chunks(client, bytes, chunk, milliseconds(1));
    }
    bool acked = false;
    bool delivered = false;
    std::optional<std::uint16_t> close;
    for (const ws_frame& frame : frames_to_eof(client)) {
        if (close) {
            ADD_FAILURE() << "opcode " << int{frame.opcode} << " after the close frame";
            continue;
        }
        switch (frame.opcode) {
        case opcode::text: {
            const json message = json::parse(frame.payload);
            acked = acked || (message.value("type", "") == "ack" && message.value("re", "") == "before");
            delivered = delivered || is_chat("before the violation")(message);
            break;
        }
        case opcode::close:
            close = frame.payload.size() >= 2
                        ? static_cast<std::uint16_t>(static_cast<unsigned char>(frame.payload[0]) << 8 |
                                                     static_cast<unsigned char>(frame.payload[1]))
                        : std::uint16_t{1005};
            break;
        case opcode::pong:
            ADD_FAILURE() << "the ping after the violation was answered";
            break;
        default:
            ADD_FAILURE() << "unexpected opcode " << int{frame.opcode};
        }
    }
    EXPECT_TRUE(acked) << "the say before the violation was not acknowledged";
    EXPECT_TRUE(delivered) << "the say before the violation did not reach the room";
    EXPECT_EQ(close, code);
}

void expect_pong(ws_client& client, std::string_view payload, milliseconds timeout) {
    const auto frame = client.recv_frame(timeout);
    if (!frame) {
        throw std::runtime_error("no pong for a ping of " + std::to_string(payload.size()) + " bytes");
    }
    if (frame->opcode != opcode::pong || !frame->fin || frame->rsv != 0 || frame->payload != payload) {
        throw std::runtime_error("expected a pong with the ping's " + std::to_string(payload.size()) +
                                 " bytes, got opcode " + std::to_string(frame->opcode) + " with " +
                                 std::to_string(frame->payload.size()) + " bytes: " + hex(frame->payload.substr(0, 32)));
    }
}

}  // namespace parley::integration
