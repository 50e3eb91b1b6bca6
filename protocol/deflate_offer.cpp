#include "protocol/deflate_offer.hpp"

#include "protocol/header_text.hpp"

#include <optional>
#include <utility>

namespace parley::protocol {
namespace {

// A window-bits value: "8".."15", optionally as a quoted string (RFC 7692 section 7.1.2.1 asks
// for the token form but lets a receiver take the quoted one).
std::optional<std::uint8_t> window_bits(std::string_view value) {
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
    }
    if (value.empty() || value.size() > 2 || value.front() == '0') {
        return std::nullopt;
    }
    unsigned n = 0;
    for (char c : value) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        n = n * 10 + static_cast<unsigned>(c - '0');
    }
    if (n < 8 || n > 15) {
        return std::nullopt;
    }
    return static_cast<std::uint8_t>(n);
}

// One offer: "permessage-deflate; param[=value]; ...". Returns the agreement, or not agreed when
// the offer is for another extension or cannot be accepted as it stands.
deflate_agreement accept_offer(std::string_view offer) {
    deflate_agreement no;
    std::size_t semi = offer.find(';');
    if (!equal_nocase(trim_ows(offer.substr(0, semi)), "permessage-deflate")) {
        return no;
    }
    bool seen_server_nct = false, seen_client_nct = false, seen_server_bits = false, seen_client_bits = false;
    std::uint8_t server_bits = 15;
    while (semi != std::string_view::npos) {
        offer.remove_prefix(semi + 1);
        semi = offer.find(';');
        const std::string_view param = trim_ows(offer.substr(0, semi));
        const std::size_t eq = param.find('=');
        const std::string_view name = trim_ows(param.substr(0, eq));
        const std::optional<std::string_view> value =
            eq == std::string_view::npos ? std::nullopt : std::optional(trim_ows(param.substr(eq + 1)));
        auto once = [](bool& seen) { return !std::exchange(seen, true); };
        if (equal_nocase(name, "server_no_context_takeover")) {
            if (value || !once(seen_server_nct)) {
                return no;
            }
        } else if (equal_nocase(name, "client_no_context_takeover")) {
            if (value || !once(seen_client_nct)) {
                return no;
            }
        } else if (equal_nocase(name, "server_max_window_bits")) {
            // A value is required. Any of 8..15 can be honoured although zlib cannot deflate
            // with a window of 8 bits: see deflate_agreement::server_window_bits.
            std::optional<std::uint8_t> bits = value ? window_bits(*value) : std::nullopt;
            if (!bits || !once(seen_server_bits)) {
                return no;
            }
            server_bits = *bits;
        } else if (equal_nocase(name, "client_max_window_bits")) {
            // With or without a value it only says the client can limit its window: a worker's
            // inflater has the full 15 bits, so the response does not name it.
            if ((value && !window_bits(*value)) || !once(seen_client_bits)) {
                return no;
            }
        } else {
            return no;
        }
    }
    deflate_agreement yes;
    yes.agreed = true;
    yes.server_window_bits = server_bits;
    yes.response = "permessage-deflate; server_no_context_takeover; client_no_context_takeover";
    if (seen_server_bits) {
        yes.response += "; server_max_window_bits=" + std::to_string(server_bits);
    }
    return yes;
}

}  // namespace

deflate_agreement negotiate_deflate(std::string_view extensions) {
    deflate_agreement agreement;
    any_list_item(extensions, [&](std::string_view offer) {
        agreement = accept_offer(offer);
        return agreement.agreed;
    });
    return agreement;
}

}  // namespace parley::protocol
