#include "config/option_text.hpp"

#include "config/options.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

namespace parley::config {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t above = row[j];
            std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
            diagonal = above;
        }
    }
    return row[b.size()];
}

}  // namespace

std::string number_text(double v) {
    // An integral value prints without a fraction, as a TOML integer, which the loader accepts
    // for a number option; this keeps the sample file's `rate_limit_per_second = 200` readable.
    if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e15) {
        return std::to_string(static_cast<long long>(v));
    }
    if (std::isnan(v)) {
        return "nan";
    }
    if (std::isinf(v)) {
        return v > 0 ? "inf" : "-inf";
    }
    std::array<char, 64> buffer{};
    auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), v);
    (void)ec;  // 64 characters always hold the shortest form of a double
    return std::string(buffer.data(), end);
}

std::string nearest(std::string_view wrong, std::span<const std::string> candidates) {
    std::string best;
    std::size_t best_distance = std::numeric_limits<std::size_t>::max();
    for (const auto& c : candidates) {
        std::size_t d = edit_distance(wrong, c);
        if (d < best_distance) {
            best_distance = d;
            best = c;
        }
    }
    // Close enough to be a typo: two edits, or a third of the longer word for long names.
    std::size_t allowed_distance = std::max<std::size_t>(2, std::max(wrong.size(), best.size()) / 3);
    if (best.empty() || best_distance > allowed_distance || best_distance >= wrong.size()) {
        return {};
    }
    return best;
}

std::string toml_quote(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                static constexpr char hex[] = "0123456789ABCDEF";
                out += "\\u00";
                out += hex[(static_cast<unsigned char>(c) >> 4) & 0xf];
                out += hex[static_cast<unsigned char>(c) & 0xf];
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

}  // namespace parley::config
