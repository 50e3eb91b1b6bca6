#pragma once

#include <charconv>
#include <string_view>
#include <system_error>

// Numbers as Redis and the cluster's own texts carry them: decimal digits, nothing before or
// after. Every reader of a reply, a stream entry or a publication goes through these two, so
// "12x", "" and " 12" are refused alike everywhere.
namespace parley::cluster {

// A whole decimal number, nothing before or after it; a leading '-' where T is signed.
template <typename T>
bool parse_number(std::string_view text, T& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

// As parse_number, without a sign: for counts, seqs, times and numbers that are never negative.
template <typename T>
bool parse_unsigned(std::string_view text, T& out) {
    return !text.empty() && text.front() != '-' && parse_number(text, out);
}

}  // namespace parley::cluster
