// Concurrency and memory-reclamation tests. Run them in the thread and address sanitizer builds too:
// the races they provoke only count as passed when the sanitizers stay quiet.

#include "registry/user_registry.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <latch>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace parley::registry {
namespace {

using outcome = user_registry::outcome;

std::string numbered_user(std::size_t i) { return "user_" + std::to_string(i); }

TEST(user_registry_concurrency, racing_registrations_have_one_winner_per_name) {
    constexpr std::size_t thread_count = 8;
    constexpr std::size_t name_count = 1000;
    user_registry registry;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < name_count; ++i) {
        names.push_back(numbered_user(i));
    }
    // wins[t][i]: thread t registered name i.
    std::vector<std::vector<char>> wins(thread_count, std::vector<char>(name_count, 0));
    std::latch start(thread_count);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < thread_count; ++t) {
        threads.emplace_back([&, t] {
            start.arrive_and_wait();
            // Each thread walks the names from a different offset so collisions are spread out.
            for (std::size_t k = 0; k < name_count; ++k) {
                const std::size_t i = (k + t * 97) % name_count;
                const session_handle mine{static_cast<std::uint32_t>(t), static_cast<std::uint32_t>(i)};
                wins[t][i] = registry.try_register(names[i], mine, 1) == outcome::registered ? 1 : 0;
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }

    EXPECT_EQ(registry.size(), name_count);
    for (std::size_t i = 0; i < name_count; ++i) {
        int winners = 0;
        std::size_t winner = 0;
        for (std::size_t t = 0; t < thread_count; ++t) {
            if (wins[t][i]) {
                ++winners;
                winner = t;
            }
        }
        ASSERT_EQ(winners, 1) << names[i];
        const auto found = registry.lookup(names[i]);
        ASSERT_TRUE(found.has_value()) << names[i];
        EXPECT_EQ(*found, (session_handle{static_cast<std::uint32_t>(winner), static_cast<std::uint32_t>(i)}));
    }
}

// Writers register and remove churning names; readers check each answer. A handle encodes the name
// it was registered for (worker = name index) and who registered it (session = writer << 20 | round),
// so a reader can tell a torn, stale-freed or misplaced entry from a real one. Stable names never
// leave and must be found on every lookup while their shard is rewritten around them.
TEST(user_registry_concurrency, lookups_during_registrations_and_removals_see_only_registered_handles) {
    constexpr std::size_t writer_count = 3;
    constexpr std::size_t reader_count = 3;
    constexpr std::size_t churn_names = 96;
    constexpr std::size_t stable_names = 32;
    // Writers go on until the readers have found churned names a number of times, so the two
    // really overlap however the threads are scheduled.
    constexpr std::uint32_t min_rounds = 150;
    constexpr std::uint64_t min_hits = 2000;
    constexpr std::uint32_t max_rounds = (1u << 20) - 1;
    user_registry registry(4);  // few shards: every write rewrites a table readers are using

    std::vector<std::string> names;
    for (std::size_t i = 0; i < churn_names + stable_names; ++i) {
        names.push_back(numbered_user(i));
    }
    for (std::size_t i = churn_names; i < names.size(); ++i) {
        ASSERT_EQ(registry.try_register(names[i], {static_cast<std::uint32_t>(i), 0xffffff}, 1), outcome::registered);
    }
    // Highest round each writer has started; a handle from a later round was never registered.
    std::array<std::atomic<std::uint32_t>, writer_count> round_started{};
    std::atomic<std::size_t> writers_running{writer_count};
    std::atomic<std::uint64_t> hits{0};
    std::latch start(writer_count + reader_count);

    std::vector<std::thread> threads;
    for (std::size_t w = 0; w < writer_count; ++w) {
        threads.emplace_back([&, w] {
            std::mt19937 rng(static_cast<std::uint32_t>(w));
            start.arrive_and_wait();
            std::vector<std::size_t> won;
            for (std::uint32_t round = 1;
                 round <= min_rounds || (hits.load() < min_hits && round <= max_rounds); ++round) {
                round_started[w].store(round, std::memory_order_release);
                for (int k = 0; k < 32; ++k) {
                    const std::size_t i = rng() % churn_names;
                    const session_handle mine{static_cast<std::uint32_t>(i),
                                              static_cast<std::uint32_t>(w << 20) | round};
                    if (registry.try_register(names[i], mine, 1) == outcome::registered) {
                        won.push_back(i);
                    }
                }
                for (std::size_t i : won) {
                    ASSERT_TRUE(registry.unregister(names[i], {static_cast<std::uint32_t>(i),
                                                               static_cast<std::uint32_t>(w << 20) | round}));
                }
                won.clear();
            }
            writers_running.fetch_sub(1);
        });
    }
    for (std::size_t r = 0; r < reader_count; ++r) {
        threads.emplace_back([&, r] {
            std::mt19937 rng(static_cast<std::uint32_t>(100 + r));
            start.arrive_and_wait();
            while (writers_running.load() > 0) {
                std::uint64_t local_hits = 0;
                for (int k = 0; k < 64; ++k) {
                    const std::size_t i = rng() % names.size();
                    const auto found = registry.lookup(names[i]);
                    if (i >= churn_names) {
                        ASSERT_TRUE(found.has_value()) << "stable name vanished: " << names[i];
                        ASSERT_EQ(*found, (session_handle{static_cast<std::uint32_t>(i), 0xffffff}));
                        continue;
                    }
                    if (!found) {
                        continue;
                    }
                    ++local_hits;
                    ASSERT_EQ(found->worker, i) << "handle of another name returned for " << names[i];
                    const std::uint32_t writer = found->session >> 20;
                    const std::uint32_t round = found->session & 0xfffff;
                    ASSERT_LT(writer, writer_count) << names[i];
                    ASSERT_GE(round, 1u) << names[i];
                    ASSERT_LE(round, round_started[writer].load(std::memory_order_acquire)) << names[i];
                }
                hits.fetch_add(local_hits);
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }

    EXPECT_GE(hits.load(), min_hits) << "readers hardly overlapped the writers";
    EXPECT_EQ(registry.size(), stable_names) << "every churned name was removed again";
    for (std::size_t i = 0; i < churn_names; ++i) {
        EXPECT_FALSE(registry.lookup(names[i]).has_value()) << names[i];
    }
}

// Many short-lived registries and reader threads that come and go while writers churn: every
// replaced snapshot must be freed exactly once, never while a reader can still see it, and nothing
// may remain after the registry is destroyed. The address sanitizer build turns any slip into a
// failure (use after free, double free, leak at exit).
TEST(user_registry_concurrency, churn_reclaims_every_snapshot) {
    constexpr std::size_t name_count = 200;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < name_count; ++i) {
        names.push_back(numbered_user(i));
    }
    for (int generation = 0; generation < 4; ++generation) {
        user_registry registry(2);
        std::atomic<bool> stop{false};
        std::atomic<std::uint64_t> hits{0};
        std::vector<std::thread> readers;
        for (int r = 0; r < 2; ++r) {
            readers.emplace_back([&, r] {
                std::mt19937 rng(static_cast<std::uint32_t>(generation * 10 + r));
                while (!stop.load()) {
                    // A fresh thread each batch exercises reader-slot hand-over at thread exit.
                    std::thread([&] {
                        std::uint64_t local_hits = 0;
                        for (int k = 0; k < 500; ++k) {
                            const std::size_t i = rng() % name_count;
                            if (const auto found = registry.lookup(names[i])) {
                                ASSERT_EQ(found->worker, i);
                                ++local_hits;
                            }
                        }
                        hits.fetch_add(local_hits);
                    }).join();
                }
            });
        }
        std::thread writer([&] {
            // At least 40 rounds, and on until the readers have found names often enough to be sure
            // they ran alongside.
            for (int round = 0; round < 40 || (hits.load() < 2000 && round < 100000); ++round) {
                for (std::size_t i = 0; i < name_count; ++i) {
                    ASSERT_EQ(registry.try_register(names[i], {static_cast<std::uint32_t>(i), 1}, 1), outcome::registered);
                }
                EXPECT_EQ(registry.size(), name_count);
                for (std::size_t i = 0; i < name_count; ++i) {
                    ASSERT_TRUE(registry.unregister(names[i], {static_cast<std::uint32_t>(i), 1}));
                }
            }
            // Leave some names and some retired snapshots for the destructor to free.
            for (std::size_t i = 0; i < name_count / 2; ++i) {
                ASSERT_EQ(registry.try_register(names[i], {static_cast<std::uint32_t>(i), 1}, 1), outcome::registered);
            }
        });
        writer.join();
        stop.store(true);
        for (auto& th : readers) {
            th.join();
        }
        EXPECT_GE(hits.load(), 2000u) << "readers hardly overlapped the writer";
        EXPECT_EQ(registry.size(), name_count / 2);
    }
}

}  // namespace
}  // namespace parley::registry
