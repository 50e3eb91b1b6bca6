#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace parley::protocol {

// What a member value of the top-level object is. Values nested deeper are validated and skipped,
// so arrays and objects carry no contents.
enum class json_kind : unsigned char { null, boolean, string, integer, unsigned_integer, floating, array, object };

// One member value, pointing into the text it was read from (no copies while reading).
// Numbers are classified as nlohmann::json classifies them, which the request rules were written
// against: without fraction or exponent, a non-negative number that fits uint64 is unsigned and a
// negative one that fits int64 is an integer (so "-0" is the integer 0); everything else is
// floating.
struct json_value {
    json_kind kind = json_kind::null;
    bool escaped = false;                // string: raw holds at least one backslash escape
    std::string_view raw;                // string: the bytes between the quotes, as sent
    std::int64_t integer = 0;            // integer
    std::uint64_t unsigned_integer = 0;  // unsigned_integer
};

// Reads text as exactly one JSON text (RFC 8259) whose top-level value is an object, accepting
// and rejecting what nlohmann::json's strict parser does: an optional UTF-8 byte order mark first,
// whitespace around, and after the object only whitespace, optionally followed by a NUL byte and
// anything at all. Every value, at any depth, is validated (UTF-8 and escapes in strings, number
// syntax, numbers that overflow a double are errors); there is no depth limit and no recursion.
//
// For each member whose key (after unescaping) equals keys[i], values[i] receives the member's
// value; a key given twice keeps the last. values must be as long as keys. Returns false for
// anything that is not such a text; values are then unspecified.
bool read_json_object(std::string_view text, std::span<const std::string_view> keys,
                      std::span<std::optional<json_value>> values);

// Appends the string that raw (the inside of a string literal that read_json_object accepted)
// stands for, escapes resolved (\u escapes, surrogate pairs included, to UTF-8).
void append_unescaped(std::string& out, std::string_view raw);

// The string a json_kind::string value stands for.
void assign_string(std::string& out, const json_value& value);
// The same without a copy when the value has no escapes: its raw text, else the text unescaped
// into scratch. The view lives as long as both the read text and scratch are unchanged.
std::string_view string_of(const json_value& value, std::string& scratch);

}  // namespace parley::protocol
