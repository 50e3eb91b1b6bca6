// The connection limits: the total, the per-address count, slots that give their place back
// when they end or move, and the peer address forms.

#include "server/connection_limiter.hpp"

#include <boost/asio/ip/address.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace parley::server::tests {
namespace {

peer_address peer(const char* address, std::uint16_t port = 40000) {
    return peer_address::from(boost::asio::ip::make_address(address), port);
}

TEST(connection_limiter, admits_up_to_the_total_then_refuses) {
    connection_limiter limiter;
    connection_slot a;
    connection_slot b;
    connection_slot c;
    EXPECT_EQ(limiter.try_admit(peer("192.0.2.1"), 2, 0, a), connection_limiter::verdict::admitted);
    EXPECT_EQ(limiter.try_admit(peer("192.0.2.2"), 2, 0, b), connection_limiter::verdict::admitted);
    EXPECT_EQ(limiter.try_admit(peer("192.0.2.3"), 2, 0, c), connection_limiter::verdict::over_total);
    EXPECT_TRUE(a.admitted());
    EXPECT_TRUE(b.admitted());
    EXPECT_FALSE(c.admitted());
    EXPECT_EQ(limiter.open(), 2u);
}

TEST(connection_limiter, admits_up_to_the_per_address_limit_and_other_addresses_still_get_in) {
    connection_limiter limiter;
    std::vector<connection_slot> slots(4);
    EXPECT_EQ(limiter.try_admit(peer("192.0.2.7", 1), 100, 2, slots[0]), connection_limiter::verdict::admitted);
    EXPECT_EQ(limiter.try_admit(peer("192.0.2.7", 2), 100, 2, slots[1]), connection_limiter::verdict::admitted);
    // Another port of the same address is the same client machine.
    EXPECT_EQ(limiter.try_admit(peer("192.0.2.7", 3), 100, 2, slots[2]), connection_limiter::verdict::over_per_ip);
    EXPECT_FALSE(slots[2].admitted());
    EXPECT_EQ(limiter.try_admit(peer("192.0.2.8"), 100, 2, slots[3]), connection_limiter::verdict::admitted);
    EXPECT_EQ(limiter.open(), 3u) << "a refusal takes no place";
}

TEST(connection_limiter, zero_per_address_means_no_per_address_limit) {
    connection_limiter limiter;
    std::vector<connection_slot> slots(50);
    for (auto& slot : slots) {
        ASSERT_EQ(limiter.try_admit(peer("2001:db8::1"), 1000, 0, slot), connection_limiter::verdict::admitted);
    }
    EXPECT_EQ(limiter.open(), 50u);
}

TEST(connection_limiter, the_total_is_checked_before_the_per_address_count) {
    connection_limiter limiter;
    connection_slot a;
    connection_slot b;
    ASSERT_EQ(limiter.try_admit(peer("192.0.2.1"), 1, 1, a), connection_limiter::verdict::admitted);
    EXPECT_EQ(limiter.try_admit(peer("192.0.2.1"), 1, 1, b), connection_limiter::verdict::over_total);
}

TEST(connection_limiter, a_slot_gives_its_place_back_when_destroyed_or_released) {
    connection_limiter limiter;
    {
        connection_slot a;
        ASSERT_EQ(limiter.try_admit(peer("192.0.2.1"), 1, 1, a), connection_limiter::verdict::admitted);
        EXPECT_EQ(limiter.open(), 1u);
    }
    EXPECT_EQ(limiter.open(), 0u);
    connection_slot b;
    ASSERT_EQ(limiter.try_admit(peer("192.0.2.1"), 1, 1, b), connection_limiter::verdict::admitted)
        << "both the total and the address's count were given back";
    b.release();
    EXPECT_FALSE(b.admitted());
    EXPECT_EQ(limiter.open(), 0u);
    b.release();  // a second release gives nothing back twice
    EXPECT_EQ(limiter.open(), 0u);
    connection_slot c;
    EXPECT_EQ(limiter.try_admit(peer("192.0.2.1"), 1, 1, c), connection_limiter::verdict::admitted);
}

TEST(connection_limiter, a_moved_slot_keeps_the_place_once) {
    connection_limiter limiter;
    connection_slot http_side;
    ASSERT_EQ(limiter.try_admit(peer("192.0.2.1"), 5, 1, http_side), connection_limiter::verdict::admitted);
    connection_slot ws_side(std::move(http_side));
    EXPECT_FALSE(http_side.admitted());  // NOLINT(bugprone-use-after-move): moved-from state is specified
    EXPECT_TRUE(ws_side.admitted());
    EXPECT_EQ(limiter.open(), 1u);
    connection_slot other;
    EXPECT_EQ(limiter.try_admit(peer("192.0.2.1"), 5, 1, other), connection_limiter::verdict::over_per_ip);

    connection_slot assigned;
    ASSERT_EQ(limiter.try_admit(peer("192.0.2.2"), 5, 1, assigned), connection_limiter::verdict::admitted);
    assigned = std::move(ws_side);  // gives 192.0.2.2's place back, takes over 192.0.2.1's
    EXPECT_EQ(limiter.open(), 1u);
    EXPECT_EQ(assigned.peer().text(), "192.0.2.1:40000");
    connection_slot again;
    EXPECT_EQ(limiter.try_admit(peer("192.0.2.2"), 5, 1, again), connection_limiter::verdict::admitted);
}

TEST(connection_limiter, limits_are_read_at_each_call) {
    connection_limiter limiter;
    std::vector<connection_slot> slots(3);
    ASSERT_EQ(limiter.try_admit(peer("192.0.2.1"), 2, 0, slots[0]), connection_limiter::verdict::admitted);
    ASSERT_EQ(limiter.try_admit(peer("192.0.2.2"), 2, 0, slots[1]), connection_limiter::verdict::admitted);
    EXPECT_EQ(limiter.try_admit(peer("192.0.2.3"), 2, 0, slots[2]), connection_limiter::verdict::over_total);
    // A reload raised the limit: the next connect uses it.
    EXPECT_EQ(limiter.try_admit(peer("192.0.2.3"), 3, 0, slots[2]), connection_limiter::verdict::admitted);
}

TEST(connection_limiter, an_ipv4_client_and_its_mapped_ipv6_form_are_one_address) {
    connection_limiter limiter;
    connection_slot a;
    connection_slot b;
    ASSERT_EQ(limiter.try_admit(peer("203.0.113.5"), 10, 1, a), connection_limiter::verdict::admitted);
    EXPECT_EQ(limiter.try_admit(peer("::ffff:203.0.113.5"), 10, 1, b), connection_limiter::verdict::over_per_ip);
}

TEST(connection_limiter, counts_stay_exact_under_concurrent_admits_and_releases) {
    connection_limiter limiter;
    constexpr int threads = 4;
    constexpr int rounds = 2000;
    std::atomic<int> over{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&limiter, &over, t] {
            std::string address = "198.51.100." + std::to_string(t + 1);
            for (int i = 0; i < rounds; ++i) {
                connection_slot slot;
                if (limiter.try_admit(peer(address.c_str()), 2, 1, slot) != connection_limiter::verdict::admitted) {
                    over.fetch_add(1);
                }
            }
        });
    }
    for (auto& w : workers) {
        w.join();
    }
    EXPECT_EQ(limiter.open(), 0u);
    EXPECT_LT(over.load(), threads * rounds) << "some connects must have been admitted";
    connection_slot a;
    connection_slot b;
    EXPECT_EQ(limiter.try_admit(peer("198.51.100.1"), 2, 1, a), connection_limiter::verdict::admitted);
    EXPECT_EQ(limiter.try_admit(peer("198.51.100.2"), 2, 1, b), connection_limiter::verdict::admitted);
}

TEST(peer_address, text_forms) {
    EXPECT_EQ(peer("203.0.113.5", 40122).text(), "203.0.113.5:40122");
    EXPECT_EQ(peer("2001:db8::1", 40122).text(), "[2001:db8::1]:40122");
    EXPECT_EQ(peer("::ffff:203.0.113.5", 8).text(), "203.0.113.5:8");
}

}  // namespace
}  // namespace parley::server::tests
