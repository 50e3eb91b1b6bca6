#pragma once

// A fixed-size log-linear histogram of non-negative integer values (nanoseconds here), in the
// spirit of HdrHistogram: exact below 128, then 64 sub-buckets per power of two, so any recorded
// value is reported within 1/64 (about 1.6 %) of itself. Recording is a few instructions and never
// allocates; the whole table is about 30 KB, whatever the number of samples.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace parley::load {

class histogram {
public:
    static constexpr unsigned sub_bits = 6;                         // 64 sub-buckets per octave
    static constexpr std::uint64_t linear_limit = 2u << sub_bits;  // values below are exact
    static constexpr std::size_t bucket_count = linear_limit + (64 - sub_bits - 1) * (1u << sub_bits);

    static std::size_t index_of(std::uint64_t v) {
        if (v < linear_limit) {
            return static_cast<std::size_t>(v);
        }
        const unsigned e = 63u - static_cast<unsigned>(std::countl_zero(v));  // >= sub_bits + 1
        const unsigned shift = e - sub_bits;
        const std::uint64_t top = (v >> shift) - (1u << sub_bits);  // 0..63
        return static_cast<std::size_t>(linear_limit + (e - sub_bits - 1) * (1u << sub_bits) + top);
    }

    // Smallest value that falls into bucket i, and the bucket's width.
    static std::uint64_t lower_of(std::size_t i) {
        if (i < linear_limit) {
            return i;
        }
        const std::size_t k = i - linear_limit;
        const unsigned e = static_cast<unsigned>(k >> sub_bits) + sub_bits + 1;
        const std::uint64_t top = (k & ((1u << sub_bits) - 1)) + (1u << sub_bits);
        return top << (e - sub_bits);
    }
    static std::uint64_t width_of(std::size_t i) {
        if (i < linear_limit) {
            return 1;
        }
        const unsigned e = static_cast<unsigned>((i - linear_limit) >> sub_bits) + sub_bits + 1;
        return std::uint64_t{1} << (e - sub_bits);
    }

    void record(std::uint64_t v) {
        ++counts_[index_of(v)];
        ++total_;
        max_ = std::max(max_, v);
        min_ = std::min(min_, v);
    }

    void merge(const histogram& other) {
        for (std::size_t i = 0; i < bucket_count; ++i) {
            counts_[i] += other.counts_[i];
        }
        total_ += other.total_;
        max_ = std::max(max_, other.max_);
        min_ = std::min(min_, other.min_);
    }

    std::uint64_t count() const { return total_; }
    std::uint64_t max() const { return total_ ? max_ : 0; }
    std::uint64_t min() const { return total_ ? min_ : 0; }

    // The value at quantile q (0..1): the midpoint of the bucket holding the ceil(q * n)-th
    // smallest sample, clamped to the exact minimum and maximum.
    std::uint64_t quantile(double q) const {
        if (total_ == 0) {
            return 0;
        }
        q = std::clamp(q, 0.0, 1.0);
        auto rank = static_cast<std::uint64_t>(q * static_cast<double>(total_) + 0.999999);
        rank = std::clamp<std::uint64_t>(rank, 1, total_);
        std::uint64_t seen = 0;
        for (std::size_t i = 0; i < bucket_count; ++i) {
            seen += counts_[i];
            if (seen >= rank) {
                const std::uint64_t mid = lower_of(i) + (width_of(i) - 1) / 2;
                return std::clamp(mid, min(), max());
            }
        }
        return max();
    }

private:
    std::array<std::uint64_t, bucket_count> counts_{};
    std::uint64_t total_ = 0;
    std::uint64_t max_ = 0;
    std::uint64_t min_ = UINT64_MAX;
};

}  // namespace parley::load
