// The WebSocket opening handshake (RFC 6455 section 4): accepted forms and each refusal.
#include "http_response.hpp"
#include "test_support.hpp"

#include <map>

namespace parley::integration {
namespace {

class HandshakeTest : public parley_test {
protected:
    // An upgrade request to /ws; each entry of changes replaces a header (an empty value drops it).
    static std::string upgrade_request(const std::map<std::string, std::string>& changes = {},
                                       const std::string& request_line = "GET /ws HTTP/1.1") {
        std::map<std::string, std::string> headers = {
            {"Host", "127.0.0.1"},
            {"Upgrade", "websocket"},
            {"Connection", "Upgrade"},
            {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="},
            {"Sec-WebSocket-Version", "13"},
        };
        for (const auto& [name, value] : changes) {
            headers[name] = value;
        }
        std::string request = request_line + "\r\n";
        for (const auto& [name, value] : headers) {
            if (!value.empty()) {
                request += name + ": " + value + "\r\n";
            }
        }
        return request + "\r\n";
    }

    http_response send(const std::string& request) {
        ws_client client(port());
        return parse_http_response(client.raw_http(request));
    }

    // After a refused handshake the daemon must still accept a proper client.
    void expect_still_serving() {
        ws_client client = connect();
        const json reply = call(client, {{"type", "login"}, {"user", "after"}, {"id", 1}});
        EXPECT_EQ(reply.value("type", ""), "welcome") << reply;
    }
};

TEST_F(HandshakeTest, ProperUpgradeGets101AndAccept) {
    const http_response response = send(upgrade_request());
    EXPECT_EQ(response.status, 101);
    EXPECT_EQ(response.header("sec-websocket-accept").value_or(""), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST_F(HandshakeTest, HeaderValuesAreMatchedLikeTheRfcSays) {
    // Connection is a token list and both tokens are case-insensitive.
    const http_response response =
        send(upgrade_request({{"Connection", "keep-alive, Upgrade"}, {"Upgrade", "WebSocket"}}));
    EXPECT_EQ(response.status, 101);
}

TEST_F(HandshakeTest, MissingHostIsBadRequest) {
    EXPECT_EQ(send(upgrade_request({{"Host", ""}})).status, 400);
    expect_still_serving();
}

TEST_F(HandshakeTest, WrongVersionIsUpgradeRequired) {
    const http_response response = send(upgrade_request({{"Sec-WebSocket-Version", "8"}}));
    EXPECT_EQ(response.status, 426);
    EXPECT_EQ(response.header("sec-websocket-version").value_or(""), "13");
    expect_still_serving();
}

TEST_F(HandshakeTest, BadKeyIsBadRequest) {
    // Not base64; base64 of 15 bytes; missing.
    for (const std::string key : {"not a key!", "AAAAAAAAAAAAAAAAAAAA", ""}) {
        EXPECT_EQ(send(upgrade_request({{"Sec-WebSocket-Key", key}})).status, 400) << "key: " << key;
    }
    expect_still_serving();
}

TEST_F(HandshakeTest, PostIsRefused) {
    EXPECT_EQ(send(upgrade_request({}, "POST /ws HTTP/1.1")).status, 400);
    expect_still_serving();
}

TEST_F(HandshakeTest, MissingConnectionUpgradeIsBadRequest) {
    EXPECT_EQ(send(upgrade_request({{"Connection", ""}})).status, 400);
    EXPECT_EQ(send(upgrade_request({{"Connection", "keep-alive"}})).status, 400);
    expect_still_serving();
}

TEST_F(HandshakeTest, Http10IsBadRequest) {
    EXPECT_EQ(send(upgrade_request({}, "GET /ws HTTP/1.0")).status, 400);
    expect_still_serving();
}

TEST_F(HandshakeTest, PlainGetOfWsPathIsAClientError) {
    const http_response response = send("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    EXPECT_GE(response.status, 400);
    EXPECT_LT(response.status, 500);
    expect_still_serving();
}

}  // namespace
}  // namespace parley::integration
