// A member that stops reading is closed with 1008 once its queue passes the bound; the room
// goes on without waiting for it.
#include "test_support.hpp"

namespace parley::integration {
namespace {

class SlowConsumerTest : public parley_test {
protected:
    std::vector<std::string> daemon_args() const override {
        auto args = relaxed_rate_args();
        args.insert(args.end(), {"--write-queue-limit", "65536"});
        return args;
    }
};

TEST_F(SlowConsumerTest, SlowReaderIsClosedAndTheRoomGoesOn) {
    ws_client slow = login("slow", {.receive_buffer = 4096});
    join_room(slow, "r");
    ws_client sender = login("sender");
    ws_client watcher = login("watcher");
    join_room(sender, "r");
    join_room(watcher, "r");
    // From here on nobody reads from slow.

    const std::string filler(3990, 'x');
    constexpr int max_messages = 4000;  // 16 MB: far beyond any socket buffers plus the bound
    constexpr int after_close = 20;     // messages still sent once slow is gone
    bool slow_gone = false;
    bool saw_notice = false;
    int sent = 0;
    int closed_at = 0;
    for (int i = 1; i <= max_messages && (!slow_gone || sent < closed_at + after_close); ++i) {
        const std::string text = std::to_string(i) + ":" + filler;
        sender.send_json({{"type", "say"}, {"room", "r"}, {"text", text}});
        sent = i;
        read_until(sender, is_chat(text));
        // The watcher gets every message, in order, without waiting for slow.
        for (const json& m : read_until(watcher, is_chat(text), milliseconds(5000))) {
            const std::string type = m.value("type", "");
            if (type == "presence" && m.value("user", "") == "slow" && m.value("event", "") == "leave") {
                slow_gone = true;
                closed_at = i;
            } else if (type == "system" && m.value("text", "") == "slow disconnected") {
                saw_notice = true;
            } else if (type == "message") {
                ASSERT_EQ(m["seq"], i) << "watcher missed or reordered a message";
            }
        }
    }
    ASSERT_TRUE(slow_gone) << "slow was not removed from the room after " << sent << " messages of 4 KB";
    EXPECT_TRUE(saw_notice) << "no \"slow disconnected\" notice";

    // slow sees the close only once it drains what was already sent to it, or the reset.
    const auto code = slow.expect_close(milliseconds(10000));
    ASSERT_TRUE(code) << "slow's connection is still open";
    EXPECT_TRUE(*code == 1008 || *code == closed_without_frame) << "close code " << *code;

    const json users = call(watcher, {{"type", "users"}, {"id", 1}});
    EXPECT_EQ(users["users"], json({"sender", "watcher"}));
}

TEST_F(SlowConsumerTest, FastReaderIsNotClosed) {
    ws_client reader = login("reader");
    ws_client sender = login("sender");
    join_room(reader, "r");
    join_room(sender, "r");
    // 2 MB through the room, far above the bound, to a reader that keeps up.
    const std::string filler(3990, 'y');
    for (int i = 1; i <= 500; ++i) {
        const std::string text = std::to_string(i) + ":" + filler;
        sender.send_json({{"type", "say"}, {"room", "r"}, {"text", text}});
        read_until(sender, is_chat(text));
        ASSERT_EQ(wait_type(reader, "message")["seq"], i);
    }
    EXPECT_EQ(call(reader, {{"type", "users"}, {"id", 1}})["users"], json({"reader", "sender"}));
}

}  // namespace
}  // namespace parley::integration
