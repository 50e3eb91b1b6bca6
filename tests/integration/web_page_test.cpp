// The browser page over real HTTP: GET / and the files it loads, their types, caching by
// ETag, gzip when asked for, HEAD, and /client.json. (The page itself is tested in Chromium,
// tests/browser/.)
#include "http_response.hpp"
#include "test_support.hpp"

#include <cstdint>
#include <vector>

namespace parley::integration {
namespace {

class WebPageTest : public parley_test {
protected:
    http_response request(const std::string& method, const std::string& path, const std::string& headers = {}) {
        ws_client client(port());
        return parse_http_response(client.raw_http(method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                                                   headers + "Connection: close\r\n\r\n"));
    }
    http_response get(const std::string& path, const std::string& headers = {}) { return request("GET", path, headers); }
};

// CRC-32 (the gzip trailer's checksum), bit by bit: slow, obviously right.
std::uint32_t crc32(std::string_view data) {
    std::uint32_t crc = 0xffffffffu;
    for (unsigned char byte : data) {
        crc ^= byte;
        for (int bit = 0; bit < 8; ++bit) {
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
        }
    }
    return ~crc;
}

// Every quoted text that follows `opener` in text, up to the closing `quote` (no std::regex:
// GCC 12 warns inside it under the sanitizer builds' -O1).
std::vector<std::string> quoted_after(std::string_view text, std::string_view opener, char quote) {
    std::vector<std::string> found;
    for (std::size_t at = text.find(opener); at != std::string_view::npos; at = text.find(opener, at)) {
        at += opener.size();
        std::size_t end = text.find(quote, at);
        if (end == std::string_view::npos) {
            break;
        }
        found.emplace_back(text.substr(at, end - at));
    }
    return found;
}

std::uint32_t little_endian_at(std::string_view data, std::size_t offset) {
    std::uint32_t value = 0;
    for (int i = 3; i >= 0; --i) {
        value = (value << 8) | static_cast<unsigned char>(data[offset + static_cast<std::size_t>(i)]);
    }
    return value;
}

TEST_F(WebPageTest, RootServesTheChatPage) {
    const http_response page = get("/");
    ASSERT_EQ(page.status, 200);
    EXPECT_EQ(page.header("content-type"), "text/html; charset=utf-8");
    EXPECT_NE(page.body.find("<script type=\"module\" src=\"/js/main.js\">"), std::string::npos);
    EXPECT_EQ(page.header("content-length"), std::to_string(page.body.size()));
    ASSERT_TRUE(page.header("etag"));
    EXPECT_EQ(page.header("cache-control"), "no-cache");
    EXPECT_EQ(page.header("vary"), "Accept-Encoding");
    EXPECT_EQ(page.header("x-content-type-options"), "nosniff");
    auto policy = page.header("content-security-policy");
    ASSERT_TRUE(policy);
    EXPECT_NE(policy->find("script-src 'self'"), std::string::npos);
    EXPECT_NE(policy->find("frame-ancestors 'none'"), std::string::npos);
    EXPECT_FALSE(page.header("content-encoding"));
}

TEST_F(WebPageTest, EveryFileThePageNamesIsServedWithItsType) {
    const http_response page = get("/");
    std::vector<std::string> paths = quoted_after(page.body, "src=\"", '"');
    for (const std::string& link : quoted_after(page.body, "href=\"", '"')) {
        if (!link.starts_with('#')) {  // a link within the page (the skip link)
            paths.push_back(link);
        }
    }
    ASSERT_GE(paths.size(), 3u);
    for (const std::string& path : paths) {
        EXPECT_TRUE(path.starts_with('/')) << path << ": the page loads only from its own server";
    }
    for (const std::string& path : paths) {
        const http_response file = get(path);
        EXPECT_EQ(file.status, 200) << path;
        std::string type = file.header("content-type").value_or("");
        if (path.ends_with(".js")) {
            EXPECT_EQ(type, "text/javascript; charset=utf-8") << path;
        } else if (path.ends_with(".css")) {
            EXPECT_EQ(type, "text/css; charset=utf-8") << path;
        } else if (path.ends_with(".svg")) {
            EXPECT_EQ(type, "image/svg+xml") << path;
        }
    }
    // The modules main.js imports, by their import lines.
    const http_response main = get("/js/main.js");
    const std::vector<std::string> imports = quoted_after(main.body, "from './", '\'');
    for (const std::string& module : imports) {
        EXPECT_EQ(get("/js/" + module).status, 200) << module;
    }
    EXPECT_GE(imports.size(), 2u);
}

TEST_F(WebPageTest, GzipWhenTheBrowserAsksAndTheSameBytesInside) {
    const http_response plain = get("/js/view.js");
    const http_response packed = get("/js/view.js", "Accept-Encoding: gzip, deflate, br\r\n");
    ASSERT_EQ(plain.status, 200);
    ASSERT_EQ(packed.status, 200);
    EXPECT_EQ(packed.header("content-encoding"), "gzip");
    EXPECT_EQ(packed.header("vary"), "Accept-Encoding");
    EXPECT_NE(packed.header("etag"), plain.header("etag"));
    const std::string& gz = packed.body;
    ASSERT_GT(gz.size(), 18u);
    EXPECT_LT(gz.size(), plain.body.size());
    EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
    EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
    // gzip's trailer: the CRC-32 and the length of what it unpacks to.
    EXPECT_EQ(little_endian_at(gz, gz.size() - 8), crc32(plain.body));
    EXPECT_EQ(little_endian_at(gz, gz.size() - 4), plain.body.size());

    EXPECT_FALSE(get("/js/view.js", "Accept-Encoding: gzip;q=0, br\r\n").header("content-encoding"));
}

TEST_F(WebPageTest, RevalidationWithTheEtagIsNotModified) {
    const http_response first = get("/chat.css");
    ASSERT_TRUE(first.header("etag"));
    const http_response again = get("/chat.css", "If-None-Match: " + *first.header("etag") + "\r\n");
    EXPECT_EQ(again.status, 304);
    EXPECT_TRUE(again.body.empty());
    EXPECT_EQ(again.header("etag"), first.header("etag"));
    EXPECT_EQ(get("/chat.css", "If-None-Match: \"stale\"\r\n").status, 200);
}

TEST_F(WebPageTest, HeadHasTheHeadersWithoutTheBody) {
    const http_response full = get("/");
    const http_response head = request("HEAD", "/");
    EXPECT_EQ(head.status, 200);
    EXPECT_EQ(head.header("content-length"), std::to_string(full.body.size()));
    EXPECT_EQ(head.header("etag"), full.header("etag"));
    EXPECT_TRUE(head.body.empty());
}

TEST_F(WebPageTest, OtherMethodsAreRefusedAndTheDaemonGoesOn) {
    const http_response post = request("POST", "/", "Content-Length: 0\r\n");
    EXPECT_EQ(post.status, 405);
    EXPECT_EQ(post.header("allow"), "GET, HEAD");
    EXPECT_EQ(request("DELETE", "/js/main.js").status, 405);
    EXPECT_EQ(get("/js/nothing.js").status, 404);
    EXPECT_EQ(get("/index.html").status, 404);
    EXPECT_EQ(get("/").status, 200);
}

TEST_F(WebPageTest, ClientJsonTellsThePageHowToConnect) {
    const http_response settings = get("/client.json");
    ASSERT_EQ(settings.status, 200);
    EXPECT_EQ(settings.header("content-type"), "application/json");
    EXPECT_EQ(settings.header("cache-control"), "no-store");
    const json body = json::parse(settings.body);
    EXPECT_EQ(body["ws_path"], "/ws");
    EXPECT_EQ(body["auth"], "none");
    EXPECT_EQ(body["max_text_bytes"], 4096);
}

class WebPageOtherPathTest : public WebPageTest {
protected:
    std::string daemon_config() const override {
        return "[server]\nws_path = \"/chat/socket\"\n[limits]\nmax_text_bytes = 1000\n";
    }
};

TEST_F(WebPageOtherPathTest, ClientJsonFollowsTheConfig) {
    const json body = json::parse(get("/client.json").body);
    EXPECT_EQ(body["ws_path"], "/chat/socket");
    EXPECT_EQ(body["max_text_bytes"], 1000);
    // The page itself is the same file wherever the socket lives.
    EXPECT_EQ(get("/").status, 200);
}

}  // namespace
}  // namespace parley::integration
