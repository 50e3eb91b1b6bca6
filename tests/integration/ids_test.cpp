// Request ids: echoed as "re" on every reply, and acks for say and dm.
#include "test_support.hpp"

#include <map>

namespace parley::integration {
namespace {

class IdsTest : public parley_test {};

TEST_F(IdsTest, EveryReplyEchoesStringAndIntegerIds) {
    int round = 0;
    for (const json& id : {json("req-1"), json(17), json(0), json(123456789012345678), json(std::string(64, 'i'))}) {
        const std::string user = "user" + std::to_string(++round);
        ws_client client = connect();
        EXPECT_EQ(call(client, {{"type", "login"}, {"user", user}, {"id", id}}).value("type", ""), "welcome");
        EXPECT_EQ(call(client, {{"type", "join"}, {"room", "r"}, {"id", id}}).value("type", ""), "joined");
        EXPECT_EQ(call(client, {{"type", "users"}, {"id", id}}).value("type", ""), "users");
        EXPECT_EQ(call(client, {{"type", "rooms"}, {"id", id}}).value("type", ""), "rooms");
        EXPECT_EQ(call(client, {{"type", "history"}, {"room", "r"}, {"id", id}}).value("type", ""), "history");
        EXPECT_EQ(call(client, {{"type", "leave"}, {"room", "r"}, {"id", id}}).value("type", ""), "left");
        EXPECT_EQ(call(client, {{"type", "fly"}, {"id", id}}).value("type", ""), "error");
        // The echo keeps the JSON type: "17" is not 17.
        const json reply = call(client, {{"type", "users"}, {"id", id}});
        EXPECT_EQ(reply["re"].is_string(), id.is_string()) << reply;
    }
}

TEST_F(IdsTest, InvalidIdsAreBadRequest) {
    ws_client alice = login("alice");
    for (const json& id : {json(std::string(65, 'i')), json(1234567890123456789), json(1.5), json(true),
                           json::object(), json::array(), json(nullptr)}) {
        alice.send_json({{"type", "users"}, {"id", id}});
        const json reply = expect_type(alice, "error");
        EXPECT_EQ(reply.value("code", ""), "bad_request") << "id " << id << ": " << reply;
    }
    EXPECT_EQ(call(alice, {{"type", "users"}, {"id", 1}})["users"], json({"alice"}));
}

TEST_F(IdsTest, SayWithIdIsAcked) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(bob, "r");
    join_room(alice, "r");  // second, so alice gets no presence
    alice.send_json({{"type", "say"}, {"room", "r"}, {"text", "one"}});
    alice.send_json({{"type", "say"}, {"room", "r"}, {"text", "two"}, {"id", "s2"}});
    // alice: both messages in order plus one ack; where the ack falls among the messages is
    // not specified (it answers the request, the messages come through the room).
    const std::vector<json> got = read_messages(alice, 3);
    std::vector<std::string> texts;
    for (const json& m : got) {
        if (m.value("type", "") == "ack") {
            EXPECT_EQ(m, json({{"type", "ack"}, {"re", "s2"}, {"room", "r"}, {"seq", 2}}));
        } else {
            texts.push_back(m.value("text", ""));
        }
    }
    EXPECT_EQ(count_if(got, is_type("ack")), 1u);
    EXPECT_EQ(texts, (std::vector<std::string>{"one", "two"}));
    // bob: only the two messages, no ack.
    const std::vector<json> bob_got = read_until(bob, is_chat("two"));
    EXPECT_EQ(count_if(bob_got, is_type("ack")), 0u);
    EXPECT_EQ(count_if(bob_got, is_type("message")), 2u);
}

TEST_F(IdsTest, AckSeqMatchesTheMessage) {
    ws_client alice = login("alice");
    join_room(alice, "r");
    for (int i = 1; i <= 5; ++i) {
        alice.send_json({{"type", "say"}, {"room", "r"}, {"text", "m"}, {"id", i}});
    }
    std::map<int, int> ack_seq;
    std::map<int, int> message_seq;
    int messages = 0;
    for (const json& m : read_messages(alice, 10)) {
        if (m.value("type", "") == "ack") {
            ack_seq[m["re"].get<int>()] = m["seq"].get<int>();
        } else {
            ASSERT_EQ(m.value("type", ""), "message") << m;
            message_seq[++messages] = m["seq"].get<int>();
        }
    }
    EXPECT_EQ(ack_seq, message_seq) << "say number i should be acked with the seq of message i";
}

}  // namespace
}  // namespace parley::integration
