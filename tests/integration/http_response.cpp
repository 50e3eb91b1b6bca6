#include "http_response.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace parley::integration {

namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
        text.remove_prefix(1);
    }
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
        text.remove_suffix(1);
    }
    return text;
}

}  // namespace

std::optional<std::string> http_response::header(std::string_view name) const {
    const auto it = headers.find(lower(name));
    if (it == headers.end()) {
        return std::nullopt;
    }
    return it->second;
}

http_response parse_http_response(std::string_view raw) {
    http_response response;
    const std::size_t head_end = raw.find("\r\n\r\n");
    if (head_end == std::string_view::npos) {
        return response;
    }
    std::string_view head = raw.substr(0, head_end + 2);
    response.body = std::string(raw.substr(head_end + 4));

    std::size_t line_end = head.find("\r\n");
    const std::string_view status_line = head.substr(0, line_end);
    // "HTTP/1.1 200 OK"
    if (status_line.substr(0, 5) == "HTTP/") {
        const std::size_t space = status_line.find(' ');
        if (space != std::string_view::npos && space + 4 <= status_line.size()) {
            response.status = std::atoi(std::string(status_line.substr(space + 1, 3)).c_str());
        }
    }
    head.remove_prefix(line_end + 2);
    while (!head.empty()) {
        line_end = head.find("\r\n");
        const std::string_view line = head.substr(0, line_end);
        const std::size_t colon = line.find(':');
        if (colon != std::string_view::npos) {
            response.headers[lower(trim(line.substr(0, colon)))] =
                std::string(trim(line.substr(colon + 1)));
        }
        head.remove_prefix(line_end + 2);
    }
    return response;
}

std::size_t complete_response_size(std::string_view raw) {
    const std::size_t head_end = raw.find("\r\n\r\n");
    if (head_end == std::string_view::npos) {
        return 0;
    }
    const std::size_t body_start = head_end + 4;
    const http_response head = parse_http_response(raw.substr(0, body_start));
    if (const auto length = head.header("content-length")) {
        const std::size_t size = body_start + std::strtoull(length->c_str(), nullptr, 10);
        return raw.size() >= size ? size : 0;
    }
    if (const auto encoding = head.header("transfer-encoding");
        encoding && lower(*encoding).find("chunked") != std::string::npos) {
        const std::size_t last = raw.find("\r\n0\r\n\r\n", body_start - 2);
        return last == std::string_view::npos ? 0 : last + 7;
    }
    if (head.status == 101 || head.status == 204 || head.status == 304) {
        return body_start;
    }
    return 0;
}

}  // namespace parley::integration
