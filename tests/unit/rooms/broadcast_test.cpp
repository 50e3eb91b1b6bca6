// Encode once, post once per worker: the fan-out contract of a room.

#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

#include <set>

namespace parley::rooms::tests {
namespace {

constexpr std::uint32_t worker_count = 3;  // members on workers 0 and 1; worker 2 has none

struct spread_room {
    explicit spread_room(std::size_t members) : world(test_settings(), worker_count) {
        for (std::size_t i = 0; i < members; ++i) {
            auto worker = static_cast<std::uint32_t>(i % 2);
            clients.push_back(&world.login("user" + std::to_string(i), worker));
            world.join(*clients.back(), "lobby");
        }
        world.clear_all();
    }
    std::size_t posts(std::uint32_t worker) { return world.executor(worker).posts; }

    chat_world world;
    std::vector<test_client*> clients;
};

TEST(broadcast, say_is_encoded_once_and_every_member_gets_the_same_buffer) {
    constexpr std::size_t members = 7;
    spread_room r(members);

    r.clients[3]->send({{"type", "say"}, {"room", "lobby"}, {"text", "hello all"}});
    r.world.run();

    std::set<const void*> identities;
    for (test_client* c : r.clients) {
        auto got = c->output.of_type("message");
        ASSERT_EQ(got.size(), 1u) << c->session.user();
        EXPECT_EQ(got[0].second["text"], "hello all");
        identities.insert(got[0].first.identity());
    }
    EXPECT_EQ(identities.size(), 1u) << "one encoding, shared by every member";
    // Every member holds a reference, plus the room's history: proof that nobody copied it.
    auto frame = r.clients[0]->output.of_type("message").at(0).first;
    // `frame` itself and the of_type() copy above are gone, so: members + history + frame.
    EXPECT_EQ(frame.use_count(), static_cast<long>(members) + 2);
}

TEST(broadcast, one_task_per_worker_with_members_not_one_per_member) {
    spread_room r(9);  // five members on worker 0, four on worker 1
    std::size_t before0 = r.posts(0);
    std::size_t before1 = r.posts(1);
    std::size_t before2 = r.posts(2);

    r.clients[0]->send({{"type", "say"}, {"room", "lobby"}, {"text", "one"}});
    EXPECT_EQ(r.posts(0) - before0, 1u);
    EXPECT_EQ(r.posts(1) - before1, 1u);
    EXPECT_EQ(r.posts(2) - before2, 0u) << "a worker without members gets no task";
    r.world.run();

    r.clients[1]->send({{"type", "say"}, {"room", "lobby"}, {"text", "two"}});
    r.clients[2]->send({{"type", "say"}, {"room", "lobby"}, {"text", "three"}});
    EXPECT_EQ(r.posts(0) - before0, 3u);
    EXPECT_EQ(r.posts(1) - before1, 3u);
    EXPECT_EQ(r.posts(2) - before2, 0u);
    r.world.run();
    for (test_client* c : r.clients) {
        EXPECT_EQ(c->output.of_type("message").size(), 3u);
    }
}

TEST(broadcast, a_worker_whose_members_left_gets_no_more_tasks) {
    spread_room r(4);  // users 0 and 2 on worker 0, users 1 and 3 on worker 1
    r.clients[1]->send({{"type", "leave"}, {"room", "lobby"}});
    r.clients[3]->send({{"type", "leave"}, {"room", "lobby"}});
    r.world.run();
    std::size_t before1 = r.posts(1);

    r.clients[0]->send({{"type", "say"}, {"room", "lobby"}, {"text", "anyone?"}});
    EXPECT_EQ(r.posts(1), before1);
    r.world.run();
    EXPECT_TRUE(r.clients[1]->output.of_type("message").empty());
    EXPECT_EQ(r.clients[2]->output.of_type("message").size(), 1u);
}

TEST(broadcast, presence_and_typing_are_encoded_once_too) {
    spread_room r(6);
    test_client& late = r.world.login("late", 1);
    late.send({{"type", "join"}, {"room", "lobby"}});
    r.world.run();
    late.send({{"type", "typing"}, {"room", "lobby"}});
    r.world.run();

    for (const char* type : {"presence", "typing"}) {
        std::set<const void*> identities;
        for (test_client* c : r.clients) {
            auto got = c->output.of_type(type);
            ASSERT_EQ(got.size(), 1u) << type << " for " << c->session.user();
            EXPECT_EQ(got[0].second["user"], "late");
            identities.insert(got[0].first.identity());
        }
        EXPECT_EQ(identities.size(), 1u) << type;
    }
}

// A task posted before a member joined carries a message the `joined` history already holds.
TEST(broadcast, a_task_queued_before_a_join_is_not_delivered_to_the_joiner) {
    chat_world world(test_settings(), 2);
    test_client& alice = world.login("alice", 0);
    test_client& carol = world.login("carol", 1);
    world.join(alice, "r");
    world.join(carol, "r");
    test_client& bob = world.login("bob", 1);
    world.clear_all();

    alice.send({{"type", "say"}, {"room", "r"}, {"text", "early"}});
    ASSERT_EQ(world.executor(1).pending(), 1u) << "the message waits on worker 1";
    json joined = world.join(bob, "r");  // runs the queued task after bob joined
    ASSERT_EQ(joined["history"].size(), 1u);
    EXPECT_EQ(joined["history"][0]["text"], "early");
    EXPECT_TRUE(bob.received("message").empty()) << "already in `joined`: not sent twice";
    EXPECT_EQ(carol.received("message").size(), 1u);

    alice.send({{"type", "say"}, {"room", "r"}, {"text", "late"}});
    world.run();
    auto live = bob.received("message");
    ASSERT_EQ(live.size(), 1u);
    EXPECT_EQ(live[0]["text"], "late");
}

TEST(broadcast, leaving_and_rejoining_before_the_worker_runs_loses_and_repeats_nothing) {
    chat_world world(test_settings(), 2);
    test_client& alice = world.login("alice", 0);
    test_client& bob = world.login("bob", 1);
    world.join(alice, "r");
    world.join(bob, "r");
    world.clear_all();

    alice.send({{"type", "say"}, {"room", "r"}, {"text", "1"}});
    bob.send({{"type", "leave"}, {"room", "r"}});
    alice.send({{"type", "say"}, {"room", "r"}, {"text", "2"}});
    bob.send({{"type", "join"}, {"room", "r"}, {"after", 0}});
    alice.send({{"type", "say"}, {"room", "r"}, {"text", "3"}});
    world.run();

    auto joined = bob.received("joined");
    ASSERT_EQ(joined.size(), 1u);
    std::vector<std::string> texts;
    for (const auto& m : joined[0]["history"]) {
        texts.push_back(m["text"]);
    }
    for (const auto& m : bob.received("message")) {
        texts.push_back(m["text"]);
    }
    EXPECT_EQ(texts, (std::vector<std::string>{"1", "2", "3"}));
}

// While the test thread plays worker 0's thread (as each server worker thread does for its own).
struct acting_as_worker {
    explicit acting_as_worker(worker_context& w) { worker_context::set_current(&w); }
    ~acting_as_worker() { worker_context::set_current(nullptr); }
};

TEST(broadcast, a_say_reaches_its_own_workers_members_at_once_and_others_by_task) {
    spread_room r(6);  // three members on worker 0, three on worker 1
    acting_as_worker on0(r.world.context(0));
    std::size_t before0 = r.posts(0);
    std::size_t before1 = r.posts(1);

    r.clients[0]->send({{"type", "say"}, {"room", "lobby"}, {"text", "now"}});
    EXPECT_EQ(r.posts(0) - before0, 0u) << "no task for the sender's own worker";
    EXPECT_EQ(r.posts(1) - before1, 1u);
    for (std::size_t i = 0; i < r.clients.size(); ++i) {
        std::size_t got = r.clients[i]->output.of_type("message").size();
        EXPECT_EQ(got, i % 2 == 0 ? 1u : 0u) << "before the tasks run, member " << i;
    }
    r.world.run();
    for (test_client* c : r.clients) {
        EXPECT_EQ(c->output.of_type("message").size(), 1u) << c->session.user();
    }
}

TEST(broadcast, a_broadcast_waiting_in_a_workers_queue_is_not_overtaken) {
    spread_room r(6);
    // Worker 1's member says first: its task for worker 0 is queued, not yet run.
    r.clients[1]->send({{"type", "say"}, {"room", "lobby"}, {"text", "first"}});
    ASSERT_EQ(r.world.executor(0).pending(), 1u);
    {
        // Then worker 0's member says: it must queue behind, not reach worker 0's members now.
        acting_as_worker on0(r.world.context(0));
        r.clients[0]->send({{"type", "say"}, {"room", "lobby"}, {"text", "second"}});
        EXPECT_EQ(r.clients[2]->output.of_type("message").size(), 0u);
        EXPECT_EQ(r.world.executor(0).pending(), 2u);
        r.world.run();
        // Once the queue is drained, the next say is immediate again.
        r.clients[0]->send({{"type", "say"}, {"room", "lobby"}, {"text", "third"}});
        EXPECT_EQ(r.world.executor(0).pending(), 0u);
    }
    r.world.run();
    for (test_client* c : r.clients) {
        auto got = c->output.of_type("message");
        ASSERT_EQ(got.size(), 3u) << c->session.user();
        EXPECT_EQ(got[0].second["text"], "first");
        EXPECT_EQ(got[1].second["text"], "second");
        EXPECT_EQ(got[2].second["text"], "third");
        EXPECT_LT(got[0].second["seq"], got[1].second["seq"]);
    }
}

TEST(broadcast, a_large_local_member_list_still_goes_through_a_task) {
    spread_room r(140);  // 70 members per worker: above the limit for immediate delivery
    acting_as_worker on0(r.world.context(0));
    std::size_t before0 = r.posts(0);
    r.clients[0]->send({{"type", "say"}, {"room", "lobby"}, {"text", "big"}});
    EXPECT_EQ(r.posts(0) - before0, 1u) << "the room's lock is not held for a long walk";
    EXPECT_EQ(r.clients[2]->output.of_type("message").size(), 0u);
    r.world.run();
    EXPECT_EQ(r.clients[2]->output.of_type("message").size(), 1u);
}

}  // namespace
}  // namespace parley::rooms::tests
