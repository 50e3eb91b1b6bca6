#include "test_support.hpp"

#include <atomic>
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <thread>

namespace parley::integration {

namespace {

std::string describe_end(const ws_client& client, milliseconds timeout) {
    if (client.close_code()) {
        return "the server closed the WebSocket with code " + std::to_string(*client.close_code());
    }
    if (client.eof()) {
        return "the server closed the TCP connection";
    }
    return "nothing arrived within " + std::to_string(timeout.count()) + " ms";
}

}  // namespace

std::vector<std::string> relaxed_rate_args() {
    return {"--rate-limit", "1000", "--rate-burst", "1000"};
}

void parley_test::SetUp() {
    daemon_ = std::make_unique<daemon_process>(daemon_args(), daemon_config());
}

void parley_test::TearDown() {
    if (!daemon_) {
        return;
    }
    const exit_status status = daemon_->stop();
    EXPECT_TRUE(status.exited && status.code == 0) << "daemon on SIGTERM: " << status.describe();
    if (HasFailure()) {
        std::cerr << "daemon output (last lines):\n" << daemon_->tail(60);
    }
}

void parley_test::restart_daemon() {
    const exit_status status = daemon_->stop();
    EXPECT_TRUE(status.exited && status.code == 0) << "daemon on SIGTERM: " << status.describe();
    daemon_ = std::make_unique<daemon_process>(daemon_args(), daemon_config());
}

ws_client parley_test::connect(client_options options) {
    ws_client client(port(), options);
    client.upgrade();
    return client;
}

ws_client parley_test::login(const std::string& user, client_options options) {
    ws_client client = connect(options);
    client.send_json({{"type", "login"}, {"user", user}});
    const json welcome = expect_type(client, "welcome");
    if (welcome.value("user", "") != user) {
        throw std::runtime_error("welcome for the wrong user: " + welcome.dump());
    }
    return client;
}

json next_message(ws_client& client, milliseconds timeout) {
    auto message = client.recv_json(timeout);
    if (!message) {
        throw std::runtime_error("expected a message, but " + describe_end(client, timeout));
    }
    return *message;
}

json expect_type(ws_client& client, std::string_view type, milliseconds timeout) {
    json message = next_message(client, timeout);
    if (message.value("type", "") != type) {
        throw std::runtime_error("expected a \"" + std::string(type) + "\" message, got " + message.dump());
    }
    return message;
}

json wait_type(ws_client& client, std::string_view type, milliseconds timeout) {
    auto message = client.recv_type(type, timeout);
    if (!message) {
        throw std::runtime_error("no \"" + std::string(type) + "\" message: " + describe_end(client, timeout));
    }
    return *message;
}

json wait_reply(ws_client& client, const json& id, milliseconds timeout) {
    auto message = client.recv_until(
        [&id](const json& m) { return m.contains("re") && m["re"] == id; }, timeout);
    if (!message) {
        throw std::runtime_error("no reply with re=" + id.dump() + ": " + describe_end(client, timeout));
    }
    return *message;
}

json call(ws_client& client, const json& request, milliseconds timeout) {
    client.send_json(request);
    return wait_reply(client, request.at("id"), timeout);
}

json expect_error_reply(ws_client& client, const json& request, std::string_view code) {
    const json reply = call(client, request);
    if (reply.value("type", "") != "error" || reply.value("code", "") != code ||
        !reply.contains("message") || !reply["message"].is_string()) {
        throw std::runtime_error("request " + request.dump() + " should fail with " + std::string(code) +
                                 ", got " + reply.dump());
    }
    return reply;
}

json expect_error(ws_client& client, std::string_view code, milliseconds timeout) {
    const json message = expect_type(client, "error", timeout);
    if (message.value("code", "") != code || !message.contains("message") || !message["message"].is_string()) {
        throw std::runtime_error("expected error " + std::string(code) + ", got " + message.dump());
    }
    return message;
}

json join_room(ws_client& client, const std::string& room, const json& extra) {
    json request = extra;
    request["type"] = "join";
    request["room"] = room;
    // An id of its own: "join " + room could pass the 64-character limit on ids.
    static std::atomic<int> next_id{0};
    request["id"] = "join-" + std::to_string(++next_id);
    const json reply = call(client, request);
    if (reply.value("type", "") != "joined" || reply.value("room", "") != room) {
        throw std::runtime_error("join " + room + " failed: " + reply.dump());
    }
    return reply;
}

std::vector<json> read_until(ws_client& client, const std::function<bool(const json&)>& pred,
                             milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<json> messages;
    for (;;) {
        const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
        auto message = client.recv_json(std::max(left, milliseconds(0)));
        if (!message) {
            std::string seen;
            for (const json& m : messages) {
                seen += "\n  " + m.dump();
            }
            throw std::runtime_error("the awaited message did not come: " + describe_end(client, timeout) +
                                     "; received instead:" + seen);
        }
        messages.push_back(*message);
        if (pred(messages.back())) {
            return messages;
        }
    }
}

std::vector<json> read_messages(ws_client& client, std::size_t count, milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<json> messages;
    while (messages.size() < count) {
        const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
        auto message = client.recv_json(std::max(left, milliseconds(0)));
        if (!message) {
            throw std::runtime_error("expected " + std::to_string(count) + " messages, got " +
                                     std::to_string(messages.size()) + ": " + describe_end(client, timeout));
        }
        messages.push_back(*message);
    }
    return messages;
}

std::function<bool(const json&)> is_type(std::string type) {
    return [type = std::move(type)](const json& m) { return m.value("type", "") == type; };
}

std::function<bool(const json&)> is_chat(std::string text) {
    return [text = std::move(text)](const json& m) {
        return m.value("type", "") == "message" && m.value("text", "") == text;
    };
}

std::size_t count_if(const std::vector<json>& messages, const std::function<bool(const json&)>& pred) {
    std::size_t count = 0;
    for (const json& m : messages) {
        if (pred(m)) {
            ++count;
        }
    }
    return count;
}

json login_retrying(ws_client& client, const std::string& user, milliseconds window, const std::string& token) {
    const auto deadline = std::chrono::steady_clock::now() + window;
    for (int attempt = 1;; ++attempt) {
        json request = {{"type", "login"}, {"user", user}, {"id", attempt}};
        if (!token.empty()) {
            request["token"] = token;
        }
        const json reply = call(client, request);
        const bool taken = reply.value("type", "") == "error" && reply.value("code", "") == "username_taken";
        if (!taken || std::chrono::steady_clock::now() >= deadline) {
            return reply;
        }
        // The old session's leave runs asynchronously; ask again shortly.
        std::this_thread::sleep_for(milliseconds(20));
    }
}

std::int64_t now_unix_ms() {
    return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void expect_message_object(const json& message, const std::string& room, const std::string& from,
                           const std::string& text) {
    EXPECT_EQ(message.value("type", ""), "message") << message;
    EXPECT_EQ(message.value("room", ""), room) << message;
    EXPECT_EQ(message.value("from", ""), from) << message;
    EXPECT_EQ(message.value("text", ""), text) << message;
    ASSERT_TRUE(message.contains("seq") && message["seq"].is_number_integer()) << message;
    EXPECT_GE(message["seq"].get<std::int64_t>(), 1) << message;
    ASSERT_TRUE(message.contains("ts") && message["ts"].is_number_integer()) << message;
    EXPECT_NEAR(static_cast<double>(message["ts"].get<std::int64_t>()), static_cast<double>(now_unix_ms()),
                60'000.0)
        << "ts should be unix milliseconds: " << message;
}

}  // namespace parley::integration
