#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace parley::integration {

// An HTTP/1.1 response as read off the wire, for assertions. Header names are lower-cased;
// the body is everything after the blank line (not de-chunked).
struct http_response {
    int status = 0;  // 0 when the status line could not be parsed
    std::map<std::string, std::string> headers;
    std::string body;

    std::optional<std::string> header(std::string_view name) const;
};

// Parses raw response bytes; a truncated or garbled response gives status 0.
http_response parse_http_response(std::string_view raw);

// Bytes of a complete response at the start of raw (headers, then a Content-Length body or a
// chunked body up to its last chunk); 0 while it is incomplete or has neither length nor chunking.
std::size_t complete_response_size(std::string_view raw);

}  // namespace parley::integration
