#include "registry/user_registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <latch>
#include <thread>
#include <vector>

// One user held by several sessions at once (token mode: tabs, devices).
namespace parley::registry {
namespace {

using outcome = user_registry::outcome;

std::vector<session_handle> sorted_sessions(const user_registry& registry, std::string_view name) {
    std::vector<session_handle> found;
    registry.lookup_all(name, found);
    std::sort(found.begin(), found.end(), [](session_handle a, session_handle b) {
        return a.worker != b.worker ? a.worker < b.worker : a.session < b.session;
    });
    return found;
}

TEST(user_registry_sessions, a_name_takes_up_to_max_sessions_then_refuses) {
    user_registry registry;
    EXPECT_EQ(registry.try_register("alice", {0, 1}, 3), outcome::registered);
    EXPECT_EQ(registry.try_register("alice", {1, 1}, 3), outcome::registered);
    EXPECT_EQ(registry.try_register("alice", {0, 2}, 3), outcome::registered);
    EXPECT_EQ(registry.try_register("alice", {1, 2}, 3), outcome::session_limit);
    EXPECT_EQ(sorted_sessions(registry, "alice"),
              (std::vector<session_handle>{{0, 1}, {0, 2}, {1, 1}}));
    EXPECT_EQ(registry.size(), 1u) << "one user";
    EXPECT_EQ(registry.session_count(), 3u);
    EXPECT_EQ(registry.names(), std::vector<std::string>{"alice"}) << "listed once";
}

TEST(user_registry_sessions, one_session_per_name_reports_name_taken) {
    user_registry registry;
    EXPECT_EQ(registry.try_register("bob", {0, 1}, 1), outcome::registered);
    EXPECT_EQ(registry.try_register("bob", {0, 2}, 1), outcome::name_taken);
    EXPECT_EQ(registry.try_register("", {0, 3}, 8), outcome::invalid_name);
}

TEST(user_registry_sessions, the_name_stays_until_its_last_session_leaves) {
    user_registry registry;
    ASSERT_EQ(registry.try_register("carol", {0, 1}, 8), outcome::registered);
    ASSERT_EQ(registry.try_register("carol", {1, 5}, 8), outcome::registered);
    ASSERT_EQ(registry.try_register("dave", {1, 6}, 8), outcome::registered);

    EXPECT_TRUE(registry.unregister("carol", {0, 1}));
    EXPECT_FALSE(registry.unregister("carol", {0, 1})) << "that session is gone already";
    EXPECT_FALSE(registry.unregister("carol", {1, 6})) << "dave's handle does not hold carol";
    EXPECT_EQ(sorted_sessions(registry, "carol"), (std::vector<session_handle>{{1, 5}}));
    EXPECT_EQ(registry.lookup("carol"), (session_handle{1, 5}));
    EXPECT_EQ(registry.size(), 2u);

    EXPECT_TRUE(registry.unregister("carol", {1, 5}));
    EXPECT_FALSE(registry.lookup("carol").has_value());
    EXPECT_TRUE(sorted_sessions(registry, "carol").empty());
    EXPECT_EQ(registry.size(), 1u);
    EXPECT_EQ(registry.session_count(), 1u);
    EXPECT_EQ(registry.try_register("carol", {0, 9}, 1), outcome::registered) << "free again";
}

TEST(user_registry_sessions, sessions_survive_the_table_growing_and_shrinking_around_them) {
    user_registry registry(1);  // one shard, so the others' churn rebuilds its table
    ASSERT_EQ(registry.try_register("eve", {0, 1}, 4), outcome::registered);
    ASSERT_EQ(registry.try_register("eve", {0, 2}, 4), outcome::registered);
    for (std::uint32_t i = 0; i < 500; ++i) {
        ASSERT_EQ(registry.try_register("filler_" + std::to_string(i), {1, i}, 1), outcome::registered);
    }
    EXPECT_EQ(sorted_sessions(registry, "eve"), (std::vector<session_handle>{{0, 1}, {0, 2}}));
    for (std::uint32_t i = 0; i < 500; ++i) {
        ASSERT_TRUE(registry.unregister("filler_" + std::to_string(i), {1, i}));
    }
    EXPECT_EQ(sorted_sessions(registry, "eve"), (std::vector<session_handle>{{0, 1}, {0, 2}}));
    EXPECT_EQ(registry.size(), 1u);
    EXPECT_EQ(registry.session_count(), 2u);
}

TEST(user_registry_sessions, racing_logins_of_one_user_win_exactly_the_limit) {
    constexpr std::uint32_t thread_count = 8;
    constexpr std::size_t limit = 5;
    user_registry registry;
    std::latch start(thread_count);
    std::vector<int> won(thread_count, 0);
    std::vector<std::thread> threads;
    for (std::uint32_t t = 0; t < thread_count; ++t) {
        threads.emplace_back([&, t] {
            start.arrive_and_wait();
            won[t] = registry.try_register("frank", {t, 1}, limit) == outcome::registered ? 1 : 0;
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    EXPECT_EQ(std::count(won.begin(), won.end(), 1), static_cast<long>(limit));
    std::vector<session_handle> held;
    EXPECT_EQ(registry.lookup_all("frank", held), limit);
    for (session_handle h : held) {
        EXPECT_EQ(won[h.worker], 1) << "only winners are held";
    }
}

}  // namespace
}  // namespace parley::registry
