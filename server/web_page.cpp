#include "server/web_page.hpp"

#include "config/settings.hpp"
#include "protocol/header_text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace parley::server {
namespace {

using protocol::any_list_item;
using protocol::equal_nocase;
using protocol::trim_ows;

// The weight of one Accept-Encoding item's parameters ("q=0.5"): 1 without a q, 0 for
// q=0, 0.0, 0.00 and 0.000, and for a q that is not a number (a client that garbles it
// gets the plain file, which it can always read).
bool positive_weight(std::string_view params) {
    for (;;) {
        std::size_t semi = params.find(';');
        std::string_view param = trim_ows(params.substr(0, semi));
        if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
            std::string_view value = trim_ows(param.substr(2));
            if (value.empty() || !std::isdigit(static_cast<unsigned char>(value[0]))) {
                return false;
            }
            return std::any_of(value.begin(), value.end(), [](char c) { return c >= '1' && c <= '9'; });
        }
        if (semi == std::string_view::npos) {
            return true;
        }
        params.remove_prefix(semi + 1);
    }
}

std::string_view strip_weak(std::string_view tag) { return tag.starts_with("W/") ? tag.substr(2) : tag; }

}  // namespace

bool accepts_gzip(std::string_view accept_encoding) {
    std::optional<bool> gzip;
    std::optional<bool> any;
    any_list_item(accept_encoding, [&](std::string_view item) {
        std::size_t semi = item.find(';');
        std::string_view coding = trim_ows(item.substr(0, semi));
        bool weight = semi == std::string_view::npos || positive_weight(item.substr(semi + 1));
        if (equal_nocase(coding, "gzip") || equal_nocase(coding, "x-gzip")) {
            gzip = weight;
        } else if (coding == "*") {
            any = weight;
        }
        return false;  // every item counts: a later one may refuse gzip
    });
    return gzip ? *gzip : any.value_or(false);
}

bool etag_listed(std::string_view if_none_match, std::string_view tag) {
    return any_list_item(if_none_match, [&](std::string_view item) {
        return item == "*" || strip_weak(item) == strip_weak(tag);
    });
}

std::optional<web_answer> answer_web_request(const web_request& request) {
    auto assets = web_assets();
    auto asset = std::find_if(assets.begin(), assets.end(), [&](const web_asset& a) { return a.path == request.path; });
    if (asset == assets.end()) {
        return std::nullopt;
    }
    web_answer answer;
    answer.asset = &*asset;
    if (request.method != "GET" && request.method != "HEAD") {
        answer.status = web_status::method_not_allowed;
        return answer;
    }
    answer.head = request.method == "HEAD";
    answer.gzip = accepts_gzip(request.accept_encoding);
    // Only the chosen form's tag revalidates: a 304 tells a cache which stored response to
    // reuse by its tag, so it must be the tag of what a 200 would have sent now.
    if (!request.if_none_match.empty() && etag_listed(request.if_none_match, answer.etag())) {
        answer.status = web_status::not_modified;
    }
    return answer;
}

std::string client_settings_json(const config::settings& settings) {
    nlohmann::json body = {
        {"ws_path", settings.ws_path},
        {"auth", std::string(config::name_of(settings.auth_mode))},
        {"max_text_bytes", settings.max_text_bytes},
    };
    return body.dump();
}

}  // namespace parley::server
