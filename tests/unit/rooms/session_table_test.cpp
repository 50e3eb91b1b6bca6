// A worker's session table: ids that never collide with a live session and never find a later
// session in a reused slot (a dm still in flight to a session that ended must go nowhere).
#include "rooms/worker_context.hpp"
#include "tests/unit/rooms/fakes.hpp"

#include <gtest/gtest.h>

#include <set>

namespace parley::rooms::tests {
namespace {

// The table only stores and returns the pointers; these stand in for sessions.
chat_session* fake_session(std::uintptr_t n) { return reinterpret_cast<chat_session*>(n * 64); }

TEST(session_table, ids_start_at_one_and_find_their_session) {
    manual_executor executor;
    worker_context w(0, executor);
    std::uint32_t a = w.add_session(fake_session(1));
    std::uint32_t b = w.add_session(fake_session(2));
    EXPECT_EQ(a, 1u);
    EXPECT_EQ(b, 2u);
    EXPECT_EQ(w.find_session(a), fake_session(1));
    EXPECT_EQ(w.find_session(b), fake_session(2));
    EXPECT_EQ(w.find_session(0), nullptr) << "0 is nobody";
    EXPECT_EQ(w.find_session(3), nullptr);
    EXPECT_EQ(w.session_count(), 2u);
}

TEST(session_table, a_reused_slot_gets_a_new_id_and_the_old_one_finds_nothing) {
    manual_executor executor;
    worker_context w(0, executor);
    std::uint32_t first = w.add_session(fake_session(1));
    w.remove_session(first);
    EXPECT_EQ(w.find_session(first), nullptr);
    EXPECT_EQ(w.session_count(), 0u);

    std::uint32_t second = w.add_session(fake_session(2));
    EXPECT_NE(second, first);
    EXPECT_EQ(w.find_session(second), fake_session(2));
    EXPECT_EQ(w.find_session(first), nullptr) << "a stale id must not reach the slot's new session";

    w.remove_session(first);  // stale: must not remove the new session
    EXPECT_EQ(w.find_session(second), fake_session(2));
    EXPECT_EQ(w.session_count(), 1u);
}

TEST(session_table, live_ids_are_unique_through_heavy_reuse) {
    manual_executor executor;
    worker_context w(0, executor);
    std::set<std::uint32_t> live;
    std::vector<std::uint32_t> order;
    // Keep 100 sessions open while 100,000 come and go (every slot reused ~1,000 times, so the
    // generation wraps): no two live sessions may share an id, and each id finds its own.
    for (std::uintptr_t i = 1; i <= 100'000; ++i) {
        std::uint32_t id = w.add_session(fake_session(i));
        ASSERT_NE(id, 0u);
        ASSERT_TRUE(live.insert(id).second) << "id " << id << " given twice";
        ASSERT_EQ(w.find_session(id), fake_session(i));
        order.push_back(id);
        if (order.size() > 100) {
            std::uint32_t old = order[order.size() - 101];
            w.remove_session(old);
            live.erase(old);
        }
    }
    EXPECT_EQ(w.session_count(), 100u);
}

}  // namespace
}  // namespace parley::rooms::tests
