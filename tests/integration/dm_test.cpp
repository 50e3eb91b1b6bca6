// Direct messages through the user registry.
#include "test_support.hpp"

namespace parley::integration {
namespace {

class DmTest : public parley_test {};

TEST_F(DmTest, ReachesRecipientAndSender) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    alice.send_json({{"type", "dm"}, {"to", "bob"}, {"text", "psst"}});
    for (ws_client* client : {&bob, &alice}) {
        const json dm = expect_type(*client, "dm");
        EXPECT_EQ(dm.value("from", ""), "alice") << dm;
        EXPECT_EQ(dm.value("to", ""), "bob") << dm;
        EXPECT_EQ(dm.value("text", ""), "psst") << dm;
        ASSERT_TRUE(dm.contains("ts") && dm["ts"].is_number_integer()) << dm;
        EXPECT_NEAR(static_cast<double>(dm["ts"].get<std::int64_t>()), static_cast<double>(now_unix_ms()), 60'000.0);
    }
}

TEST_F(DmTest, AckCarriesOnlyRe) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    alice.send_json({{"type", "dm"}, {"to", "bob"}, {"text", "hello"}, {"id", 42}});
    const std::vector<json> replies = read_messages(alice, 2);
    EXPECT_EQ(count_if(replies, is_type("dm")), 1u);
    const std::size_t acks = count_if(replies, [](const json& m) { return m == json({{"type", "ack"}, {"re", 42}}); });
    EXPECT_EQ(acks, 1u) << replies[0] << " " << replies[1];
    EXPECT_EQ(expect_type(bob, "dm").value("text", ""), "hello");
}

TEST_F(DmTest, UnknownRecipientIsUserNotFound) {
    ws_client alice = login("alice");
    const json error = expect_error_reply(alice, {{"type", "dm"}, {"to", "nobody"}, {"text", "x"}, {"id", "d"}},
                                          "user_not_found");
    EXPECT_EQ(error["re"], "d");
}

TEST_F(DmTest, RecipientWhoLeftIsUserNotFound) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    bob.close_socket();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    json reply;
    for (int id = 1;; ++id) {
        reply = call(alice, {{"type", "dm"}, {"to", "bob"}, {"text", "still there?"}, {"id", id}});
        if (reply.value("code", "") == "user_not_found" || std::chrono::steady_clock::now() >= deadline) {
            break;
        }
        std::this_thread::sleep_for(milliseconds(20));
    }
    EXPECT_EQ(reply.value("code", ""), "user_not_found") << reply;
}

TEST_F(DmTest, DmToSelfArrivesOnce) {
    ws_client alice = login("alice");
    alice.send_json({{"type", "dm"}, {"to", "alice"}, {"text", "first"}});
    alice.send_json({{"type", "dm"}, {"to", "alice"}, {"text", "second"}});
    const std::vector<json> seen =
        read_until(alice, [](const json& m) { return m.value("type", "") == "dm" && m.value("text", "") == "second"; });
    ASSERT_EQ(seen.size(), 2u) << "expected exactly one copy of each dm";
    EXPECT_EQ(seen[0], json({{"type", "dm"}, {"from", "alice"}, {"to", "alice"}, {"text", "first"}, {"ts", seen[0]["ts"]}}));
}

TEST_F(DmTest, DmNeedsNoSharedRoom) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "only-alice");
    bob.send_json({{"type", "dm"}, {"to", "alice"}, {"text", "out of the blue"}});
    EXPECT_EQ(wait_type(alice, "dm").value("text", ""), "out of the blue");
}

TEST_F(DmTest, BadDmsAreRefused) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    expect_error_reply(alice, {{"type", "dm"}, {"to", "bob"}, {"text", ""}, {"id", 1}}, "bad_request");
    expect_error_reply(alice, {{"type", "dm"}, {"text", "x"}, {"id", 2}}, "bad_request");
    expect_error_reply(alice, {{"type", "dm"}, {"to", "bob"}, {"id", 3}}, "bad_request");
    expect_error_reply(alice, {{"type", "dm"}, {"to", 7}, {"text", "x"}, {"id", 4}}, "bad_request");
    expect_error_reply(alice, {{"type", "dm"}, {"to", "bob"}, {"text", std::string(4097, 'x')}, {"id", 5}},
                       "too_large");
    // Nothing of that reached bob: the next thing he gets is this.
    alice.send_json({{"type", "dm"}, {"to", "bob"}, {"text", "ok"}});
    EXPECT_EQ(expect_type(bob, "dm").value("text", ""), "ok");
}

}  // namespace
}  // namespace parley::integration
