// Moderation, edit and delete on a node of a cluster, with Redis played by the test: each is
// checked here and sent through the say script with what it changes (settings, revised
// messages); the room changes only when the numbered event comes back on the channel, as on
// every node; an edit of a message deleted meanwhile is answered message_not_found, and nothing
// is made on this node alone while Redis is away.

#include "rooms/cluster/cluster_keys.hpp"
#include "tests/token_minter.hpp"
#include "tests/unit/cluster/node_fixture.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace parley::cluster::tests {
namespace {

using rooms::tests::is_error;

// Where an event's own arguments start among the say script's (cluster_scripts.hpp).
constexpr std::size_t event_args_at = 12;

class cluster_moderation_test : public cluster_node_test {
protected:
    cluster_moderation_test() : cluster_node_test(token_settings()) {}

    // Logs user in with a token (roles: the token's roles claim, or none).
    test_client& token_login(std::string_view user, const json& roles = nullptr) {
        json claims = {{"sub", user}, {"exp", test_tokens::now_seconds() + 3600}};
        if (!roles.is_null()) {
            claims["roles"] = roles;
        }
        test_client& c = start_login(user, 0, test_tokens::sign_token(claims));
        if (redis_.count("conversations") > 0) {
            auto load = redis_.take("conversations");
            redis_.answer(*load, array_reply());
            settle();
        }
        EXPECT_EQ(c.take_one().value("type", ""), "welcome");
        return c;
    }

    // What the say script publishes for call when it gives it seq (cluster_scripts.hpp).
    std::string publish(sent_call& call, std::int64_t seq) {
        const std::string n = std::to_string(seq);
        std::string event = call.args.at(1) + n + "\n" + call.args.at(2) + "\n" + call.args.at(3) + "\n" +
                            call.args.at(4) + n + call.args.at(5);
        redis_.answer(call, integer_reply(seq));
        node_.on_channel_message(event);
        settle();
        return event;
    }

    // A say of client's in lobby, numbered seq by the cluster and delivered.
    void say(test_client& client, const std::string& text, std::int64_t seq) {
        client.send({{"type", "say"}, {"room", "lobby"}, {"text", text}});
        settle();
        auto call = redis_.take("say");
        ASSERT_TRUE(call);
        publish(*call, seq);
    }

    // olivia, the owner of lobby by her token, and mike, both in lobby, the cluster in sync.
    void owner_and_member() {
        olivia_ = &token_login("olivia", {{"lobby", "owner"}});
        mike_ = &token_login("mike");
        sync({}, {});
        join_fed(*olivia_, "lobby");
        join_fed(*mike_, "lobby");
        olivia_->take();
        mike_->take();
    }

    test_client* olivia_ = nullptr;
    test_client* mike_ = nullptr;
};

TEST_F(cluster_moderation_test, a_ban_goes_to_redis_with_its_setting_and_changes_the_room_when_numbered) {
    owner_and_member();
    olivia_->send({{"type", "ban"}, {"room", "lobby"}, {"user", "mike"}, {"reason", "spam"}, {"id", 1}});
    settle();
    auto call = redis_.take("say");
    ASSERT_TRUE(call);
    EXPECT_EQ(call->keys, (std::vector<std::string>{keys::room_seq("lobby"), keys::room_stream("lobby"),
                                                    keys::room_settings("lobby"), keys::room_revised("lobby")}));
    const std::vector<std::string> tail(call->args.begin() + event_args_at, call->args.end());
    ASSERT_EQ(tail.size(), 5u);
    EXPECT_EQ(tail[0], "1");
    EXPECT_EQ(tail[1], "ban\nmike");
    EXPECT_NE(tail[2].find("spam"), std::string::npos) << tail[2];
    EXPECT_EQ(tail[3], "0") << "no guard";
    EXPECT_EQ(tail[4], "0") << "no revisions";
    EXPECT_TRUE(olivia_->take().empty()) << "answered before the cluster numbered it";
    EXPECT_TRUE(mike_->received("left").empty()) << "applied before the cluster numbered it";

    publish(*call, 1);
    const auto replies = olivia_->take();
    ASSERT_EQ(replies.size(), 3u) << json(replies).dump();
    EXPECT_EQ(replies[0].value("type", ""), "ack");
    EXPECT_EQ(replies[0].value("seq", 0), 1);
    EXPECT_EQ(replies[1].value("action", ""), "ban");
    EXPECT_EQ(replies[2].value("event", ""), "leave") << "mike left on his worker";
    EXPECT_EQ(mike_->received("left").size(), 1u);
    mike_->take();
    mike_->send({{"type", "join"}, {"room", "lobby"}, {"id", 2}});
    settle();
    EXPECT_TRUE(is_error(mike_->take_one(), "banned", 2));
}

TEST_F(cluster_moderation_test, a_delete_sends_the_tombstone_and_strips_the_messages_earlier_edits) {
    owner_and_member();
    say(*mike_, "my password", 1);
    mike_->send({{"type", "edit"}, {"room", "lobby"}, {"seq", 1}, {"text", "my pass"}, {"id", 1}});
    settle();
    auto edit = redis_.take("say");
    ASSERT_TRUE(edit);
    std::vector<std::string> tail(edit->args.begin() + event_args_at, edit->args.end());
    ASSERT_EQ(tail.size(), 6u);
    EXPECT_EQ(tail[1], "1") << "guarded by its message";
    EXPECT_EQ(tail[2], "1") << "one revision";
    EXPECT_EQ(tail[3], "1") << "the message's seq";
    EXPECT_NE(tail[5].find("\"text\":\"my pass\""), std::string::npos) << tail[5];
    EXPECT_NE(tail[5].find("\"edited\":true"), std::string::npos) << tail[5];
    publish(*edit, 2);

    olivia_->send({{"type", "delete"}, {"room", "lobby"}, {"seq", 1}, {"id", 2}});
    settle();
    auto erase = redis_.take("say");
    ASSERT_TRUE(erase);
    tail.assign(erase->args.begin() + event_args_at, erase->args.end());
    ASSERT_EQ(tail.size(), 9u);
    EXPECT_EQ(tail[2], "2") << "the message and its edit";
    EXPECT_EQ(tail[3], "1");
    EXPECT_NE(tail[5].find("\"deleted\":true"), std::string::npos) << tail[5];
    EXPECT_EQ(tail[6], "2");
    for (const std::string& arg : erase->args) {
        EXPECT_EQ(arg.find("pass"), std::string::npos) << "text sent with the delete: " << arg;
    }
    publish(*erase, 3);
    mike_->take();
    mike_->send({{"type", "history"}, {"room", "lobby"}, {"id", 3}});
    settle();
    const json page = mike_->take_one();
    EXPECT_EQ(page.dump().find("pass"), std::string::npos) << page.dump();
}

TEST_F(cluster_moderation_test, an_edit_of_a_message_deleted_meanwhile_is_answered_message_not_found) {
    owner_and_member();
    say(*mike_, "typo", 1);
    mike_->take();
    mike_->send({{"type", "edit"}, {"room", "lobby"}, {"seq", 1}, {"text", "fixed"}, {"id", 4}});
    settle();
    auto edit = redis_.take("say");
    ASSERT_TRUE(edit);
    redis_.answer(*edit, integer_reply(-1));  // the script found the message deleted
    settle();
    EXPECT_TRUE(is_error(mike_->take_one(), "message_not_found", 4));
}

TEST_F(cluster_moderation_test, nothing_is_made_on_this_node_alone_while_redis_is_away) {
    owner_and_member();
    say(*mike_, "hello", 1);
    mike_->take();
    node_.on_redis_down();
    settle();
    olivia_->take();
    olivia_->send({{"type", "mute"}, {"room", "lobby"}, {"user", "mike"}, {"id", 5}});
    mike_->send({{"type", "delete"}, {"room", "lobby"}, {"seq", 1}, {"id", 6}});
    settle();
    EXPECT_EQ(redis_.count("say"), 0u);
    EXPECT_TRUE(is_error(olivia_->take_one(), "unavailable", 5));
    EXPECT_TRUE(is_error(mike_->take_one(), "unavailable", 6));
    mike_->send({{"type", "say"}, {"room", "lobby"}, {"text", "still heard"}, {"id", 7}});
    settle();
    EXPECT_EQ(mike_->received("ack").size(), 1u) << "not muted: the mute was never made";
}

}  // namespace
}  // namespace parley::cluster::tests
