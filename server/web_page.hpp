#pragma once

#include "server/web_assets.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace parley::config {
struct settings;
}

namespace parley::server {

// The parts of an HTTP request that choose how a file of the browser page is answered.
struct web_request {
    std::string_view method;           // "GET", "HEAD", ...
    std::string_view path;             // without the query
    std::string_view if_none_match;    // header values, empty when absent
    std::string_view accept_encoding;
};

enum class web_status { ok, not_modified, method_not_allowed };

// How to answer: which bytes, under which headers. body views the compiled-in asset.
struct web_answer {
    web_status status = web_status::ok;
    const web_asset* asset = nullptr;
    bool gzip = false;              // send gzip_body with Content-Encoding: gzip
    bool head = false;              // headers only (Content-Length still that of the body)
    std::string_view body() const { return gzip ? asset->gzip_body : asset->body; }
    std::string_view etag() const { return gzip ? asset->gzip_etag : asset->etag; }
};

// The answer for a path of the page, or nothing when the path is not one of its files.
// Only GET and HEAD are allowed; If-None-Match naming the current tag gives 304; the gzip
// form is chosen when Accept-Encoding accepts gzip.
std::optional<web_answer> answer_web_request(const web_request& request);

// True when an Accept-Encoding value accepts gzip: "gzip" or "*" listed with a q-value above
// zero (an explicit "gzip;q=0" refuses it even when "*" is listed). Case-insensitive.
bool accepts_gzip(std::string_view accept_encoding);

// True when an If-None-Match value ("*", or a comma-separated list of tags, W/ or not) names
// tag, compared weakly as RFC 9110 asks for If-None-Match.
bool etag_listed(std::string_view if_none_match, std::string_view tag);

// What the page needs to know about this daemon before it connects, as the JSON body of
// GET /client.json: the WebSocket path, whether a login needs a token, the text limit.
std::string client_settings_json(const config::settings& settings);

}  // namespace parley::server
