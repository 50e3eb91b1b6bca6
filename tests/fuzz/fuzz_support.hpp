#pragma once

// What every fuzz target shares: the libFuzzer entry point's declaration (the replay driver calls
// it too), invariant checks that abort, a UTF-8 check written independently of protocol/utf8, and
// deterministic ways to cut an input into pieces.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace parley::fuzz {

// Prints what broke and aborts. libFuzzer records an abort as a crash and saves the input; the
// replay driver dies with it, which fails its ctest.
[[noreturn]] void fail(std::string_view what, std::string_view detail = {});

inline void require(bool ok, std::string_view what, std::string_view detail = {}) {
    if (!ok) {
        fail(what, detail);
    }
}

// RFC 3629 UTF-8, decoded one code point at a time: the plain reading of the rules, to check the
// product's word-at-a-time validator against rather than with itself.
bool is_utf8(std::string_view bytes);

// A small deterministic generator (splitmix64), seeded from the input so a crash replays exactly.
class split_rng {
public:
    explicit split_rng(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next();
    std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }

private:
    std::uint64_t state_;
};

// FNV-1a of the bytes: the seed for split_rng.
std::uint64_t hash_bytes(std::string_view bytes);

// Piece sizes that add up to total: mostly short (1-16 bytes, where header and UTF-8 boundaries
// fall), sometimes long.
std::vector<std::size_t> random_splits(std::size_t total, split_rng& rng);

}  // namespace parley::fuzz
