#pragma once

#include <span>
#include <string_view>

namespace parley::server {

// One file of the browser page, compiled into the binary (cmake/embed_web_assets.cmake makes
// the table from server/web/ at build time).
struct web_asset {
    std::string_view path;          // "/" for index.html, else "/chat.css", "/js/main.js", ...
    std::string_view content_type;
    std::string_view body;          // the file as it is
    std::string_view gzip_body;     // the same, gzip-compressed
    std::string_view etag;          // quoted, from the file's SHA-256
    std::string_view gzip_etag;     // the compressed form is another representation: its own tag
};

std::span<const web_asset> web_assets();

}  // namespace parley::server
