#include "rooms/cluster/partitions.hpp"

#include <array>

namespace parley::cluster {

std::uint32_t partition_of(std::string_view name) {
    std::uint64_t hash = 14695981039346656037ULL;
    for (const char c : name) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 1099511628211ULL;
    }
    return static_cast<std::uint32_t>(hash % partition_count);
}

std::string partition_tag(std::uint32_t partition) { return "{p" + std::to_string(partition) + "}"; }

std::uint32_t jump_hash(std::uint64_t key, std::uint32_t buckets) {
    std::int64_t b = -1;
    std::int64_t j = 0;
    while (j < static_cast<std::int64_t>(buckets)) {
        b = j;
        key = key * 2862933555777941757ULL + 1;
        j = static_cast<std::int64_t>(static_cast<double>(b + 1) *
                                      (static_cast<double>(1LL << 31) / static_cast<double>((key >> 33) + 1)));
    }
    return static_cast<std::uint32_t>(b < 0 ? 0 : b);
}

namespace {

// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), as Redis Cluster hashes keys.
constexpr std::array<std::uint16_t, 256> crc16_table = [] {
    std::array<std::uint16_t, 256> table{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint16_t crc = static_cast<std::uint16_t>(i << 8);
        for (int bit = 0; bit < 8; ++bit) {
            crc = static_cast<std::uint16_t>((crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1);
        }
        table[i] = crc;
    }
    return table;
}();

std::uint16_t crc16(std::string_view bytes) {
    std::uint16_t crc = 0;
    for (const char c : bytes) {
        crc = static_cast<std::uint16_t>((crc << 8) ^ crc16_table[((crc >> 8) ^ static_cast<unsigned char>(c)) & 0xff]);
    }
    return crc;
}

}  // namespace

std::uint16_t key_slot(std::string_view key) {
    const std::size_t open = key.find('{');
    if (open != std::string_view::npos) {
        const std::size_t close = key.find('}', open + 1);
        if (close != std::string_view::npos && close > open + 1) {
            key = key.substr(open + 1, close - open - 1);
        }
    }
    return static_cast<std::uint16_t>(crc16(key) % 16384);
}

}  // namespace parley::cluster
