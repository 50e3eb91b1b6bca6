// Work posted to one session on its own worker (rooms/session_task.hpp): it runs there, after
// what was queued before it, and not at all once the session has ended.

#include "rooms/session_task.hpp"
#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

namespace parley::rooms::tests {
namespace {

TEST(session_task, runs_on_the_sessions_worker_when_that_worker_gets_to_it) {
    chat_world world;
    test_client& alice = world.login("alice", 1);
    int ran = 0;
    post_to_session(world.hub(), alice.session.handle(), [&ran, &alice](chat_session& s) {
        EXPECT_EQ(&s, &alice.session);
        ++ran;
    });
    EXPECT_EQ(ran, 0);
    EXPECT_EQ(world.executor(0).pending(), 0u);
    EXPECT_EQ(world.executor(1).pending(), 1u);
    world.run();
    EXPECT_EQ(ran, 1);
}

TEST(session_task, does_nothing_for_a_session_that_ended_meanwhile) {
    chat_world world;
    test_client& alice = world.login("alice", 1);
    registry::session_handle gone = alice.session.handle();
    int ran = 0;
    post_to_session(world.hub(), gone, [&ran](chat_session&) { ++ran; });
    world.disconnect(alice);
    test_client& next = world.login("bob", 1);  // may take the freed slot: a new id all the same
    EXPECT_NE(next.session.handle(), gone);
    world.run();
    EXPECT_EQ(ran, 0);
}

TEST(session_task, runs_at_once_on_the_owning_workers_own_thread_only) {
    chat_world world;
    test_client& alice = world.login("alice", 1);
    int ran = 0;
    auto count = [&ran](chat_session&) { ++ran; };

    worker_context::set_current(&world.context(1));
    run_on_session(world.hub(), alice.session.handle(), count);
    EXPECT_EQ(ran, 1) << "on alice's worker: no task";
    EXPECT_EQ(world.executor(1).pending(), 0u);

    worker_context::set_current(&world.context(0));
    run_on_session(world.hub(), alice.session.handle(), count);
    EXPECT_EQ(ran, 1) << "from another worker: a task on alice's";
    worker_context::set_current(nullptr);
    world.run();
    EXPECT_EQ(ran, 2);
}

}  // namespace
}  // namespace parley::rooms::tests
