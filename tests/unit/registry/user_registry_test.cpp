#include "registry/user_registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace parley::registry {
namespace {

using outcome = user_registry::outcome;

std::string name_of(std::size_t i) { return "user_" + std::to_string(i); }

TEST(user_registry, register_lookup_unregister) {
    user_registry registry;
    const session_handle alice{1, 42};

    EXPECT_FALSE(registry.lookup("alice").has_value());
    EXPECT_EQ(registry.try_register("alice", alice, 1), outcome::registered);
    ASSERT_TRUE(registry.lookup("alice").has_value());
    EXPECT_EQ(*registry.lookup("alice"), alice);
    EXPECT_EQ(registry.size(), 1u);

    EXPECT_TRUE(registry.unregister("alice", alice));
    EXPECT_FALSE(registry.lookup("alice").has_value());
    EXPECT_EQ(registry.size(), 0u);
    EXPECT_FALSE(registry.unregister("alice", alice)) << "a second logout finds nothing to remove";
}

TEST(user_registry, a_held_name_cannot_be_taken) {
    user_registry registry;
    EXPECT_EQ(registry.try_register("bob", {1, 1}, 1), outcome::registered);
    EXPECT_EQ(registry.try_register("bob", {2, 2}, 1), outcome::name_taken);
    EXPECT_EQ(registry.try_register("bob", {1, 1}, 1), outcome::name_taken) << "even by the same handle";
    EXPECT_EQ(*registry.lookup("bob"), (session_handle{1, 1}));
    EXPECT_EQ(registry.size(), 1u);
}

TEST(user_registry, stale_unregister_does_not_evict_the_new_owner) {
    user_registry registry;
    const session_handle first{0, 7};
    const session_handle second{1, 8};
    ASSERT_EQ(registry.try_register("carol", first, 1), outcome::registered);
    ASSERT_TRUE(registry.unregister("carol", first));
    ASSERT_EQ(registry.try_register("carol", second, 1), outcome::registered);

    EXPECT_FALSE(registry.unregister("carol", first)) << "the old session's late logout";
    EXPECT_EQ(*registry.lookup("carol"), second);
    EXPECT_FALSE(registry.unregister("carol", {1, 7})) << "same session id on another worker";
    EXPECT_FALSE(registry.unregister("carol", {0, 8})) << "same worker, other session";
    EXPECT_EQ(*registry.lookup("carol"), second);
    EXPECT_EQ(registry.size(), 1u);
}

TEST(user_registry, names_are_sorted_and_size_counts_them) {
    user_registry registry;
    const std::vector<std::string> input{"zed", "amy", "Bob", "a", "amy_2", "_x", "m"};
    for (std::size_t i = 0; i < input.size(); ++i) {
        ASSERT_EQ(registry.try_register(input[i], {0, static_cast<std::uint32_t>(i)}, 1), outcome::registered);
    }
    std::vector<std::string> expected = input;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(registry.names(), expected);
    EXPECT_EQ(registry.size(), input.size());

    ASSERT_TRUE(registry.unregister("amy", {0, 1}));
    expected.erase(std::find(expected.begin(), expected.end(), "amy"));
    EXPECT_EQ(registry.names(), expected);
    EXPECT_EQ(registry.size(), expected.size());
}

TEST(user_registry, names_of_many_shards_come_back_sorted) {
    user_registry registry(64);
    std::vector<std::string> expected;
    for (std::size_t i = 0; i < 2000; ++i) {
        expected.push_back(name_of(i));
        ASSERT_EQ(registry.try_register(expected.back(), {0, static_cast<std::uint32_t>(i)}, 1), outcome::registered);
    }
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(registry.names(), expected);
    EXPECT_EQ(registry.size(), 2000u);
    EXPECT_TRUE(user_registry().names().empty());
}

TEST(user_registry, keys_compare_the_whole_name) {
    user_registry registry(1);
    const std::string long_a(32, 'a');
    std::string long_b = long_a;
    long_b.back() = 'b';
    const std::string with_nul("a\0b", 3);
    const std::string with_nul_other("a\0c", 3);

    ASSERT_EQ(registry.try_register("ab", {0, 1}, 1), outcome::registered);
    ASSERT_EQ(registry.try_register("abc", {0, 2}, 1), outcome::registered);
    ASSERT_EQ(registry.try_register(long_a, {0, 3}, 1), outcome::registered);
    ASSERT_EQ(registry.try_register(with_nul, {0, 4}, 1), outcome::registered);

    EXPECT_EQ(*registry.lookup("ab"), (session_handle{0, 1}));
    EXPECT_EQ(*registry.lookup("abc"), (session_handle{0, 2}));
    EXPECT_EQ(*registry.lookup(long_a), (session_handle{0, 3}));
    EXPECT_EQ(*registry.lookup(with_nul), (session_handle{0, 4}));
    EXPECT_FALSE(registry.lookup("a").has_value());
    EXPECT_FALSE(registry.lookup("abd").has_value());
    EXPECT_FALSE(registry.lookup("abcd").has_value());
    EXPECT_FALSE(registry.lookup("AB").has_value());
    EXPECT_FALSE(registry.lookup(long_b).has_value());
    EXPECT_FALSE(registry.lookup(with_nul_other).has_value());
    EXPECT_FALSE(registry.lookup(std::string_view("ab\0", 3)).has_value());
}

TEST(user_registry, refuses_empty_and_overlong_names) {
    user_registry registry;
    const std::string longest(32, 'x');
    const std::string too_long(33, 'x');
    EXPECT_EQ(registry.try_register("", {0, 1}, 1), outcome::invalid_name);
    EXPECT_EQ(registry.try_register(too_long, {0, 2}, 1), outcome::invalid_name);
    EXPECT_EQ(registry.try_register(longest, {0, 3}, 1), outcome::registered);
    EXPECT_FALSE(registry.lookup("").has_value());
    EXPECT_FALSE(registry.lookup(too_long).has_value());
    EXPECT_FALSE(registry.unregister(too_long, {0, 2}));
    EXPECT_EQ(registry.size(), 1u);
    EXPECT_EQ(registry.names(), std::vector<std::string>{longest});
}

TEST(user_registry, any_shard_count_works) {
    for (std::size_t shards : {0u, 1u, 3u, 64u, 1000u, 1u << 20}) {
        user_registry registry(shards);
        for (std::size_t i = 0; i < 300; ++i) {
            ASSERT_EQ(registry.try_register(name_of(i), {1, static_cast<std::uint32_t>(i)}, 1), outcome::registered) << shards;
        }
        for (std::size_t i = 0; i < 300; ++i) {
            ASSERT_EQ(registry.lookup(name_of(i)), (session_handle{1, static_cast<std::uint32_t>(i)})) << shards;
        }
        EXPECT_EQ(registry.size(), 300u) << shards;
    }
}

// Random inserts and removals in one shard, checked against std::map after every step: this drives
// the table through growth, shrinking, long probe runs and deletions in the middle of runs.
TEST(user_registry, matches_a_reference_map_under_random_operations) {
    user_registry registry(1);
    std::map<std::string, session_handle> model;
    std::mt19937 rng(12345);
    constexpr std::size_t universe = 600;

    for (int step = 0; step < 20000; ++step) {
        const std::string name = name_of(rng() % universe);
        const session_handle handle{static_cast<std::uint32_t>(rng() % 4), static_cast<std::uint32_t>(step)};
        const auto held = model.find(name);
        // Fill up most of the time early on, then drain, so the size sweeps the whole range.
        const bool fill = step < 8000 ? rng() % 4 != 0 : step < 14000 ? rng() % 4 == 0 : rng() % 2 == 0;
        if (fill) {
            const bool inserted = registry.try_register(name, handle, 1) == outcome::registered;
            ASSERT_EQ(inserted, held == model.end()) << name;
            if (inserted) {
                model.emplace(name, handle);
            }
        } else {
            const session_handle owner = held == model.end() ? handle : held->second;
            ASSERT_FALSE(registry.unregister(name, {owner.worker + 1, owner.session}));
            const bool removed = registry.unregister(name, owner);
            ASSERT_EQ(removed, held != model.end()) << name;
            if (removed) {
                model.erase(held);
            }
        }
        ASSERT_EQ(registry.size(), model.size());
        if (step % 97 == 0) {
            for (std::size_t i = 0; i < universe; ++i) {
                const auto it = model.find(name_of(i));
                const auto found = registry.lookup(name_of(i));
                ASSERT_EQ(found.has_value(), it != model.end()) << name_of(i) << " at step " << step;
                if (found) {
                    ASSERT_EQ(*found, it->second);
                }
            }
        }
    }
    std::vector<std::string> expected;
    for (const auto& [name, handle] : model) {
        expected.push_back(name);
    }
    EXPECT_EQ(registry.names(), expected);
}

}  // namespace
}  // namespace parley::registry
