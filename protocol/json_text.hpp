#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace parley::protocol {

// Appends value as a JSON string literal (quotes included). value must be valid UTF-8, which the
// frame parser guarantees for everything a client sends; only the characters JSON requires are
// escaped.
void append_json_string(std::string& out, std::string_view value);

void append_json_integer(std::string& out, std::int64_t value);

}  // namespace parley::protocol
