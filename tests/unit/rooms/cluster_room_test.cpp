// A room and a session on a node of a cluster, with the cluster played by the test: messages
// numbered elsewhere, members on other nodes, a node that dies, the cluster lost and regained;
// and what a session asks of the cluster (names, says, dms, users).

#include "protocol/frame_encoder.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/cluster_link.hpp"
#include "rooms/room.hpp"
#include "tests/unit/rooms/chat_world.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace parley::rooms::tests {
namespace {

using protocol::shared_frame;

// The cluster as a session sees it, played by the test.
class fake_cluster final : public cluster_link {
public:
    explicit fake_cluster(chat_world& world) : world_(world) { world_.hub().set_cluster(this); }
    // Goes before the world (declared after it): the sessions ending with the world see no cluster.
    ~fake_cluster() override { world_.hub().set_cluster(nullptr); }

    struct say_call {
        std::string room, from, text, ack_id;
        registry::session_handle sender;
    };
    std::vector<std::function<void(claim_outcome)>> pending_claims;
    std::vector<std::string> released;
    std::vector<say_call> submitted;
    std::vector<say_call> kept;
    std::vector<std::pair<std::string, std::string>> dms;  // to, frame text
    std::map<std::string, std::string> remote_users;       // user -> node
    bool up = true;

    // Answers the oldest claim, on the claimant's worker as the real cluster does.
    void answer_claim(claim_outcome outcome, std::uint32_t worker = 0) {
        auto done = pending_claims.front();
        pending_claims.erase(pending_claims.begin());
        world_.executor(worker).post([done, outcome] { done(outcome); });
        world_.run();
    }

    void claim_name(std::string_view, registry::session_handle, std::function<void(claim_outcome)> done) override {
        pending_claims.push_back(std::move(done));
    }
    void release_name(std::string_view user) override { released.emplace_back(user); }
    // Fed at once, as a node whose subscription Redis confirms at once would.
    std::vector<std::string> opened;
    void open_room(std::string_view room, std::function<void(bool)> done) override {
        opened.emplace_back(room);
        world_.hub().rooms().with_room(room, [](rooms::room& r) {
            r.set_fed(true);
            return true;
        });
        done(true);
    }
    void submit_say(std::string_view room, std::string_view from, std::string_view text, std::int64_t,
                    registry::session_handle sender, std::string_view ack_id) override {
        submitted.push_back({std::string(room), std::string(from), std::string(text), std::string(ack_id), sender});
    }
    struct event_call {
        numbered_event event;
        std::string ack_id;
        registry::session_handle sender;
    };
    std::vector<event_call> events;
    void submit_event(numbered_event event, registry::session_handle sender, std::string_view ack_id) override {
        events.push_back({std::move(event), std::string(ack_id), sender});
    }
    bool sequencing(std::string_view) const override { return up; }
    std::int64_t detached_epoch() const override { return test_epoch + 99; }
    void keep_for_cluster(std::string_view room, std::string_view from, std::string_view text, std::int64_t) override {
        kept.push_back({std::string(room), std::string(from), std::string(text), {}, {}});
    }
    cluster_health health() const override { return {}; }
    void send_dm(std::string_view to, const shared_frame& frame, std::function<void(bool)> done) override {
        const bool there = remote_users.count(std::string(to)) != 0;
        if (there) {
            dms.emplace_back(std::string(to), std::string(protocol::frame_payload(frame.view())));
        }
        done(there);
    }
    void list_rooms(std::function<void(std::optional<std::vector<listed_room>>)> done) override {
        done(std::nullopt);  // the session lists this node's rooms
    }
    void list_users(std::function<void(std::optional<std::vector<std::string>>)> done) override {
        std::vector<std::string> out;
        for (const auto& [user, node] : remote_users) {
            out.push_back(user);
        }
        done(out);
    }
    // What is kept for identities (token mode) is the cluster node's own tests' subject
    // (tests/unit/cluster); these tests log in without tokens, which never asks for it.
    void submit_dm(std::string_view, std::string_view, std::string_view, std::int64_t, registry::session_handle,
                   std::string_view) override {
        ADD_FAILURE() << "a stored dm without tokens";
    }
    void save_read(std::string_view, std::string_view, std::int64_t, registry::session_handle,
                   std::function<void(read_outcome)>) override {
        ADD_FAILURE() << "a stored read marker without tokens";
    }
    void load_conversations(std::string_view, registry::session_handle,
                            std::function<void(std::optional<std::vector<marked_log>>)>) override {
        ADD_FAILURE() << "stored conversations read without tokens";
    }

private:
    chat_world& world_;
};

shared_frame message_frame(std::int64_t seq, std::string_view text) {
    return protocol::encode_message("lobby", "remote", text, seq, 1000 + seq);
}

std::vector<std::int64_t> seqs_received(const test_client& c) {
    std::vector<std::int64_t> out;
    for (const auto& m : c.received("message")) {
        out.push_back(m["seq"].get<std::int64_t>());
    }
    return out;
}

TEST(cluster_room, messages_from_the_cluster_are_applied_in_seq_order_once) {
    chat_world world(test_settings(), 2);
    test_client& alice = world.login("alice", 0);
    test_client& bob = world.login("bob", 1);
    world.join(alice, "lobby");
    world.join(bob, "lobby");
    auto lobby = world.hub().rooms().find("lobby");
    world.clear_all();

    const shared_frame first = message_frame(1, "one");
    EXPECT_EQ(lobby->apply_message(1, 1001, first), room::apply_outcome::applied);
    EXPECT_EQ(lobby->apply_message(1, 1001, message_frame(1, "one")), room::apply_outcome::duplicate);
    EXPECT_EQ(lobby->apply_message(3, 1003, message_frame(3, "three")), room::apply_outcome::gap);
    EXPECT_EQ(lobby->apply_message(2, 1002, message_frame(2, "two")), room::apply_outcome::applied);
    EXPECT_EQ(lobby->apply_message(3, 1003, message_frame(3, "three")), room::apply_outcome::applied);
    // A stream that no longer holds 4 and 5: applied after the hole.
    EXPECT_EQ(lobby->apply_message(6, 1006, message_frame(6, "six"), true), room::apply_outcome::applied);
    world.run();

    EXPECT_EQ(seqs_received(alice), (std::vector<std::int64_t>{1, 2, 3, 6}));
    EXPECT_EQ(seqs_received(bob), (std::vector<std::int64_t>{1, 2, 3, 6}));
    EXPECT_EQ(lobby->last_seq(), 6);
    // The node's one decode is what every member here gets: the same buffer, not a copy.
    EXPECT_EQ(alice.output.of_type("message").front().first.identity(), first.identity());
    EXPECT_EQ(bob.output.of_type("message").front().first.identity(), first.identity());
}

TEST(cluster_room, members_on_other_nodes_are_listed_counted_and_announced) {
    chat_world world(test_settings(), 1);
    test_client& alice = world.login("alice", 0);
    world.join(alice, "lobby");
    auto lobby = world.hub().rooms().find("lobby");
    alice.take();

    ASSERT_TRUE(lobby->apply_remote(room_event::join, "node-b", "bob", protocol::encode_presence("lobby", "bob", true)));
    world.run();
    json presence = alice.take_one();
    EXPECT_EQ(presence["type"], "presence");
    EXPECT_EQ(presence["user"], "bob");
    EXPECT_EQ(lobby->member_count(), 2u);

    test_client& carol = world.login("carol", 0);
    json joined = world.join(carol, "lobby");
    EXPECT_EQ(joined["members"], json({"alice", "bob", "carol"}));
    auto listed = world.hub().rooms().list();
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed[0].second, 3u);
    alice.take();

    // Another node's leave as disconnected: presence and the system line.
    ASSERT_TRUE(lobby->apply_remote(room_event::leave_disconnected, "node-b", "bob",
                                    protocol::encode_presence("lobby", "bob", false)));
    world.run();
    auto got = alice.take();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0]["event"], "leave");
    EXPECT_EQ(got[1]["text"], "bob disconnected");
    EXPECT_EQ(lobby->member_count(), 2u);
}

TEST(cluster_room, a_room_lives_while_anyone_on_any_node_is_in_it) {
    chat_world world(test_settings(), 1);
    test_client& alice = world.login("alice", 0);
    world.join(alice, "lobby");
    auto lobby = world.hub().rooms().find("lobby");
    lobby->apply_remote(room_event::join, "node-b", "bob", protocol::encode_presence("lobby", "bob", true));
    alice.send({{"type", "leave"}, {"room", "lobby"}});
    EXPECT_EQ(world.hub().rooms().find("lobby"), lobby) << "bob is still in it, on node-b";
    lobby->apply_remote(room_event::leave, "node-b", "bob", protocol::encode_presence("lobby", "bob", false));
    EXPECT_EQ(world.hub().rooms().find("lobby"), nullptr);
}

TEST(cluster_room, a_snapshot_of_remote_members_announces_only_the_differences) {
    chat_world world(test_settings(), 1);
    test_client& alice = world.login("alice", 0);
    world.join(alice, "lobby");
    auto lobby = world.hub().rooms().find("lobby");
    lobby->set_remote_members({{"bob", "node-b"}, {"carol", "node-c"}});
    world.run();
    EXPECT_EQ(alice.take().size(), 2u);

    lobby->set_remote_members({{"carol", "node-c"}, {"dave", "node-b"}});
    world.run();
    auto got = alice.take();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0]["user"], "bob");
    EXPECT_EQ(got[0]["event"], "leave");
    EXPECT_EQ(got[1]["user"], "dave");
    EXPECT_EQ(got[1]["event"], "join");
    EXPECT_EQ(lobby->member_count(), 3u);
}

TEST(cluster_room, a_dead_nodes_members_leave_as_disconnected) {
    chat_world world(test_settings(), 1);
    test_client& alice = world.login("alice", 0);
    world.join(alice, "lobby");
    auto lobby = world.hub().rooms().find("lobby");
    lobby->set_remote_members({{"bob", "node-b"}, {"carol", "node-c"}});
    world.run();
    alice.take();

    lobby->drop_node("node-b");
    world.run();
    auto got = alice.take();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0]["user"], "bob");
    EXPECT_EQ(got[1]["text"], "bob disconnected");
    EXPECT_EQ(lobby->member_count(), 2u);

    // carol stays, and stays node-c's: a newcomer is shown her, and she leaves with node-c.
    test_client& dave = world.login("dave", 0);
    EXPECT_EQ(world.join(dave, "lobby")["members"], json({"alice", "carol", "dave"}));
    alice.take();
    lobby->drop_node("node-b");
    world.run();
    EXPECT_TRUE(alice.take().empty()) << "node-b had nobody left";
    lobby->drop_node("node-c");
    world.run();
    got = alice.take();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0]["user"], "carol");
    EXPECT_EQ(got[0]["event"], "leave");
    EXPECT_EQ(got[1]["text"], "carol disconnected");
}

TEST(cluster_room, detaching_and_rebasing_tell_members_the_room_starts_over) {
    chat_world world(test_settings(), 1);
    test_client& alice = world.login("alice", 0);
    world.join(alice, "lobby");
    auto lobby = world.hub().rooms().find("lobby");
    lobby->apply_message(1, 1001, message_frame(1, "one"));
    world.run();
    alice.take();

    lobby->detach(test_epoch + 5);
    world.run();
    json fresh = alice.take_one();
    EXPECT_EQ(fresh["type"], "joined");
    EXPECT_FALSE(fresh.contains("re"));
    EXPECT_EQ(fresh["epoch"], test_epoch + 5);
    EXPECT_EQ(fresh["recovered"], false);
    EXPECT_EQ(fresh["history"].size(), 1u) << "the messages stay; only their numbering is this node's now";
    lobby->detach(test_epoch + 5);
    world.run();
    EXPECT_TRUE(alice.take().empty()) << "already detached";

    std::vector<log_entry> cluster_history{{1, 1001, message_frame(1, "one")}, {2, 1002, message_frame(2, "two")}};
    ASSERT_TRUE(lobby->rebase(test_epoch, 2, cluster_history));
    world.run();
    json back = alice.take_one();
    EXPECT_EQ(back["epoch"], test_epoch);
    EXPECT_EQ(back["history"].size(), 2u);
    // The same state again changes nothing the members were shown.
    ASSERT_TRUE(lobby->rebase(test_epoch, 2, cluster_history));
    world.run();
    EXPECT_TRUE(alice.take().empty());
}

TEST(cluster_session, login_waits_for_the_cluster_to_grant_the_name) {
    chat_world world(test_settings(), 1);
    fake_cluster cluster(world);
    test_client& alice = world.connect(0);
    alice.send({{"type", "login"}, {"user", "alice"}, {"id", 1}});
    EXPECT_TRUE(alice.take().empty()) << "no welcome before the cluster answers";
    alice.send({{"type", "users"}, {"id", 2}});
    EXPECT_TRUE(is_error(alice.take_one(), "not_logged_in", 2));
    ASSERT_EQ(cluster.pending_claims.size(), 1u);
    cluster.answer_claim(cluster_link::claim_outcome::claimed);
    json welcome = alice.take_one();
    EXPECT_EQ(welcome["type"], "welcome");
    EXPECT_EQ(welcome["re"], 1);
}

TEST(cluster_session, a_name_taken_on_another_node_is_refused_and_freed_here) {
    chat_world world(test_settings(), 1);
    fake_cluster cluster(world);
    test_client& alice = world.connect(0);
    alice.send({{"type", "login"}, {"user", "alice"}, {"id", 1}});
    cluster.answer_claim(cluster_link::claim_outcome::taken);
    EXPECT_TRUE(is_error(alice.take_one(), "username_taken", 1));
    EXPECT_FALSE(world.hub().users().lookup("alice"));
    EXPECT_EQ(cluster.released, (std::vector<std::string>{"alice"}));
    // The session may try another name.
    alice.send({{"type", "login"}, {"user", "alice2"}});
    cluster.answer_claim(cluster_link::claim_outcome::claimed);
    EXPECT_EQ(alice.take_one()["type"], "welcome");
}

TEST(cluster_session, a_session_gone_before_the_answer_frees_the_name) {
    chat_world world(test_settings(), 1);
    fake_cluster cluster(world);
    test_client& alice = world.connect(0);
    alice.send({{"type", "login"}, {"user", "alice"}});
    world.disconnect(alice);
    EXPECT_EQ(cluster.released, (std::vector<std::string>{"alice"}));
    cluster.answer_claim(cluster_link::claim_outcome::claimed);  // finds nobody: nothing happens
    EXPECT_FALSE(world.hub().users().lookup("alice"));
}

TEST(cluster_session, says_go_to_the_cluster_and_are_served_here_while_it_is_unreachable) {
    chat_world world(test_settings(), 1);
    fake_cluster cluster(world);
    test_client& alice = world.connect(0);
    alice.send({{"type", "login"}, {"user", "alice"}});
    cluster.answer_claim(cluster_link::claim_outcome::claimed);
    world.join(alice, "lobby");
    alice.take();

    alice.send({{"type", "say"}, {"room", "lobby"}, {"text", "hi"}, {"id", 3}});
    world.run();
    ASSERT_EQ(cluster.submitted.size(), 1u);
    EXPECT_EQ(cluster.submitted[0].text, "hi");
    EXPECT_EQ(cluster.submitted[0].ack_id, "3");
    EXPECT_TRUE(alice.take().empty()) << "the message comes back through the cluster";

    cluster.up = false;
    alice.send({{"type", "say"}, {"room", "lobby"}, {"text", "alone"}, {"id", 4}});
    world.run();
    auto got = alice.take();
    ASSERT_EQ(got.size(), 3u);
    std::map<std::string, std::size_t> at;
    for (std::size_t i = 0; i < got.size(); ++i) {
        at[got[i]["type"]] = i;
    }
    ASSERT_EQ(at.size(), 3u) << json(got).dump();
    EXPECT_LT(at["joined"], at["message"]) << "the room moves to this node's own epoch first";
    EXPECT_LT(at["ack"], at["message"]);
    EXPECT_EQ(got[at["joined"]]["epoch"], test_epoch + 99);
    EXPECT_EQ(got[at["message"]]["text"], "alone");
    ASSERT_EQ(cluster.kept.size(), 1u);
    EXPECT_EQ(cluster.kept[0].text, "alone");
}

TEST(cluster_session, dms_and_users_reach_other_nodes) {
    chat_world world(test_settings(), 1);
    fake_cluster cluster(world);
    cluster.remote_users = {{"bob", "node-b"}};
    test_client& alice = world.connect(0);
    alice.send({{"type", "login"}, {"user", "alice"}});
    cluster.answer_claim(cluster_link::claim_outcome::claimed);
    alice.take();

    // The cluster's answers are posted back to the session's worker.
    alice.send({{"type", "users"}, {"id", 1}});
    world.run();
    EXPECT_EQ(alice.take_one()["users"], json({"alice", "bob"}));
    alice.send({{"type", "dm"}, {"to", "bob"}, {"text", "psst"}});
    world.run();
    ASSERT_EQ(cluster.dms.size(), 1u);
    EXPECT_EQ(cluster.dms[0].first, "bob");
    EXPECT_EQ(json::parse(cluster.dms[0].second)["text"], "psst");
    EXPECT_EQ(alice.take_one()["type"], "dm") << "the sender's own copy, once bob's node had it";
    alice.send({{"type", "dm"}, {"to", "nobody"}, {"text", "x"}, {"id", 2}});
    world.run();
    EXPECT_TRUE(is_error(alice.take_one(), "user_not_found", 2));
}

}  // namespace
}  // namespace parley::rooms::tests
