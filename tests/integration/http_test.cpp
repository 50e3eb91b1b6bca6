// Plain HTTP on the daemon's port: health check, metrics, chat page, errors.
#include "http_response.hpp"
#include "test_support.hpp"

namespace parley::integration {
namespace {

class HttpTest : public parley_test {
protected:
    // Default flags: this fixture also shows the daemon starts with its built-in limits.
    std::vector<std::string> daemon_args() const override { return {}; }

    http_response get(const std::string& path) {
        ws_client client(port());
        return parse_http_response(client.raw_http("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                                   "Connection: close\r\n\r\n"));
    }

    void expect_healthy() {
        const http_response response = get("/healthz");
        EXPECT_EQ(response.status, 200) << "the daemon stopped serving";
    }
};

std::string strip_line_end(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
        text.pop_back();
    }
    return text;
}

TEST_F(HttpTest, HealthzIsOk) {
    const http_response response = get("/healthz");
    EXPECT_EQ(response.status, 200);
    EXPECT_EQ(strip_line_end(response.body), "ok");
}

TEST_F(HttpTest, UnknownPathIsNotFound) {
    EXPECT_EQ(get("/no/such/page").status, 404);
    expect_healthy();
}

TEST_F(HttpTest, MalformedRequestIsBadRequest) {
    for (const std::string request : {"this is not http\r\n\r\n",
                                      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n"}) {
        ws_client client(port());
        const http_response response = parse_http_response(client.raw_http(request));
        EXPECT_EQ(response.status, 400) << "request: " << request;
        expect_healthy();
    }
}

TEST_F(HttpTest, TwoRequestsOnOneConnection) {
    ws_client client(port());
    for (int i = 0; i < 2; ++i) {
        const http_response response =
            parse_http_response(client.raw_http("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
        EXPECT_EQ(response.status, 200) << "request " << i;
        EXPECT_EQ(strip_line_end(response.body), "ok");
    }
}

}  // namespace
}  // namespace parley::integration
