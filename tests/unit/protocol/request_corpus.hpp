#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace parley::protocol::corpus {

// Inputs chosen at the edges of request parsing: JSON syntax (whitespace, byte order mark, NUL
// after the value, trailing commas, literals, nesting), strings (every escape, surrogates, every
// control character, ill-formed UTF-8, special bytes at each offset of an 8-byte word), numbers
// (int64/uint64 limits, -0, fractions, exponents, overflow to infinity), duplicate and escaped keys,
// and the request rules (id lengths and digits, null fields, before with after, long unknown types
// cut inside a character).
std::vector<std::string> tricky_inputs();

// Deterministic pseudo-random inputs: plausible requests (valid JSON, mostly the fields a type
// needs, with edge values and arbitrary extra members) and byte-level mutations of them.
class generator {
public:
    explicit generator(std::uint64_t seed) : state_(seed) {}

    // One valid JSON object text.
    std::string request();
    // text after 1 to 3 random edits: byte flips, insertions, deletions, truncation, duplication.
    std::string mutate(std::string text);
    // Up to 9 random bytes from JSON's own alphabet (and a few others) where a value, a string's
    // contents or the whole text goes: small enough to reach every corner of the grammar.
    std::string fragment_request();

private:
    std::uint64_t next();
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
    bool one_in(std::size_t n) { return below(n) == 0; }
    template <typename T>
    const T& pick(const std::vector<T>& items) {
        return items[below(items.size())];
    }

    std::string whitespace();
    std::string string_body(std::size_t pieces);
    std::string string_value();
    std::string number_value();
    std::string id_value();
    std::string count_value();
    std::string any_value(int depth);
    std::string key_for(std::string_view name);

    std::uint64_t state_;
};

// bytes with everything outside printable ASCII as \xNN, cut to a readable length.
std::string printable(std::string_view bytes);

}  // namespace parley::protocol::corpus
