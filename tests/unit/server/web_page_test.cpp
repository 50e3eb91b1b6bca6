// Which file of the browser page a request gets, and in which form.
#include "server/web_page.hpp"

#include "config/settings.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace parley::server {
namespace {

TEST(WebAssets, ThePageAndEverythingItLoadsAreCompiledIn) {
    auto assets = web_assets();
    auto has = [&](std::string_view path) {
        return std::any_of(assets.begin(), assets.end(), [&](const web_asset& a) { return a.path == path; });
    };
    for (std::string_view path : {"/", "/chat.css", "/favicon.svg", "/js/main.js", "/js/chat_client.js",
                                  "/js/parley.js", "/js/view.js"}) {
        EXPECT_TRUE(has(path)) << path;
    }
    for (const web_asset& a : assets) {
        EXPECT_FALSE(a.body.empty()) << a.path;
        // gzip's magic bytes; the compressed form of text is smaller.
        ASSERT_GE(a.gzip_body.size(), 18u) << a.path;
        EXPECT_EQ(static_cast<unsigned char>(a.gzip_body[0]), 0x1f) << a.path;
        EXPECT_EQ(static_cast<unsigned char>(a.gzip_body[1]), 0x8b) << a.path;
        EXPECT_LT(a.gzip_body.size(), a.body.size()) << a.path;
        EXPECT_TRUE(a.etag.starts_with('"') && a.etag.ends_with('"')) << a.etag;
        EXPECT_NE(a.etag, a.gzip_etag);
    }
}

TEST(WebAssets, ContentTypesFollowTheExtension) {
    for (const web_asset& a : web_assets()) {
        std::string_view type = a.content_type;
        if (a.path == "/") {
            EXPECT_EQ(type, "text/html; charset=utf-8");
        } else if (a.path.ends_with(".js")) {
            EXPECT_EQ(type, "text/javascript; charset=utf-8") << a.path;
        } else if (a.path.ends_with(".css")) {
            EXPECT_EQ(type, "text/css; charset=utf-8") << a.path;
        } else if (a.path.ends_with(".svg")) {
            EXPECT_EQ(type, "image/svg+xml") << a.path;
        }
    }
}

TEST(WebAssets, ThePageLoadsNothingFromAnotherHost) {
    const auto assets = web_assets();
    for (const web_asset& a : assets) {
        if (a.path == "/favicon.svg") {
            continue;  // its xmlns names the SVG namespace; nothing is fetched from it
        }
        EXPECT_EQ(a.body.find("http://"), std::string_view::npos) << a.path;
        EXPECT_EQ(a.body.find("https://"), std::string_view::npos) << a.path;
        EXPECT_EQ(a.body.find("//cdn"), std::string_view::npos) << a.path;
    }
}

TEST(AcceptsGzip, ListedCodingsAndWeights) {
    EXPECT_TRUE(accepts_gzip("gzip"));
    EXPECT_TRUE(accepts_gzip("gzip, deflate, br, zstd"));  // what Chromium sends
    EXPECT_TRUE(accepts_gzip("deflate, GZIP;q=0.5"));
    EXPECT_TRUE(accepts_gzip("x-gzip"));
    EXPECT_TRUE(accepts_gzip("*"));
    EXPECT_TRUE(accepts_gzip("br;q=1.0, gzip ; q=0.001"));
    EXPECT_FALSE(accepts_gzip(""));
    EXPECT_FALSE(accepts_gzip("identity"));
    EXPECT_FALSE(accepts_gzip("deflate, br"));
    EXPECT_FALSE(accepts_gzip("gzip;q=0"));
    EXPECT_FALSE(accepts_gzip("gzip;q=0.000"));
    EXPECT_FALSE(accepts_gzip("*;q=0"));
    EXPECT_FALSE(accepts_gzip("*, gzip;q=0"));  // the explicit refusal wins over the wildcard
    EXPECT_TRUE(accepts_gzip("*;q=0, gzip"));
    EXPECT_FALSE(accepts_gzip("gzip;q=abc"));  // garbled: the plain file is always safe
    EXPECT_FALSE(accepts_gzip("gzipped"));
}

TEST(EtagListed, ExactWeakAndWildcard) {
    EXPECT_TRUE(etag_listed("\"abc\"", "\"abc\""));
    EXPECT_TRUE(etag_listed("W/\"abc\"", "\"abc\""));  // If-None-Match compares weakly
    EXPECT_TRUE(etag_listed("\"x\", \"abc\"", "\"abc\""));
    EXPECT_TRUE(etag_listed("*", "\"abc\""));
    EXPECT_FALSE(etag_listed("\"abcd\"", "\"abc\""));
    EXPECT_FALSE(etag_listed("abc", "\"abc\""));
    EXPECT_FALSE(etag_listed("", "\"abc\""));
}

const web_asset& asset(std::string_view path) {
    for (const web_asset& a : web_assets()) {
        if (a.path == path) {
            return a;
        }
    }
    throw std::runtime_error("no asset");
}

TEST(AnswerWebRequest, OnlyThePagesFiles) {
    EXPECT_FALSE(answer_web_request({"GET", "/nope.js", "", ""}));
    EXPECT_FALSE(answer_web_request({"GET", "/index.html", "", ""}));  // the page lives at /
    EXPECT_FALSE(answer_web_request({"GET", "/js/../chat.css", "", ""}));
    EXPECT_FALSE(answer_web_request({"GET", "", "", ""}));
}

TEST(AnswerWebRequest, PlainOrGzipByAcceptEncoding) {
    auto plain = answer_web_request({"GET", "/", "", ""});
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->status, web_status::ok);
    EXPECT_FALSE(plain->gzip);
    EXPECT_EQ(plain->body(), asset("/").body);
    EXPECT_EQ(plain->etag(), asset("/").etag);

    auto packed = answer_web_request({"GET", "/js/main.js", "", "gzip, deflate"});
    ASSERT_TRUE(packed);
    EXPECT_TRUE(packed->gzip);
    EXPECT_EQ(packed->body(), asset("/js/main.js").gzip_body);
    EXPECT_EQ(packed->etag(), asset("/js/main.js").gzip_etag);
}

TEST(AnswerWebRequest, RevalidationWithTheChosenFormsTag) {
    const web_asset& css = asset("/chat.css");
    std::string plain_tag(css.etag);
    std::string packed_tag(css.gzip_etag);
    EXPECT_EQ(answer_web_request({"GET", "/chat.css", plain_tag, ""})->status, web_status::not_modified);
    EXPECT_EQ(answer_web_request({"GET", "/chat.css", packed_tag, "gzip"})->status, web_status::not_modified);
    // The tag of the other form, or of an older build, gets the file again.
    EXPECT_EQ(answer_web_request({"GET", "/chat.css", plain_tag, "gzip"})->status, web_status::ok);
    EXPECT_EQ(answer_web_request({"GET", "/chat.css", "\"0123\"", ""})->status, web_status::ok);
}

TEST(AnswerWebRequest, HeadAndOtherMethods) {
    auto head = answer_web_request({"HEAD", "/", "", ""});
    ASSERT_TRUE(head);
    EXPECT_TRUE(head->head);
    EXPECT_EQ(head->status, web_status::ok);
    for (std::string_view method : {"POST", "PUT", "DELETE", "OPTIONS", "get"}) {
        auto answer = answer_web_request({method, "/", "", ""});
        ASSERT_TRUE(answer) << method;
        EXPECT_EQ(answer->status, web_status::method_not_allowed) << method;
    }
}

TEST(ClientSettings, WhatThePageNeedsToConnect) {
    config::settings settings;
    settings.ws_path = "/chat/ws";
    settings.auth_mode = config::auth_mode::token;
    settings.max_text_bytes = 100;
    auto body = nlohmann::json::parse(client_settings_json(settings));
    EXPECT_EQ(body["ws_path"], "/chat/ws");
    EXPECT_EQ(body["auth"], "token");
    EXPECT_EQ(body["max_text_bytes"], 100);
    // Nothing secret leaves the daemon.
    settings.auth_token_secret = "very-secret-value-0123456789-0123456789";
    EXPECT_EQ(client_settings_json(settings).find("very-secret"), std::string::npos);
}

}  // namespace
}  // namespace parley::server
