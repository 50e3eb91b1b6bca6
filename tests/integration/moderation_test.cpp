// Moderation in the real daemon, in token mode with the SQLite history: a ban and the owner's
// role survive a restart, a mute answers `muted` while the room goes on, a timed mute ends by
// itself as an event, and a member's moderation request is refused.
#include "temp_dir.hpp"
#include "test_support.hpp"
#include "tests/token_minter.hpp"

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

namespace parley::integration {
namespace {

using namespace std::chrono_literals;

class ModerationTest : public parley_test {
protected:
    std::vector<std::string> daemon_args() const override {
        auto args = relaxed_rate_args();
        args.insert(args.end(), {"--history-path", dir_.file("history.db")});
        return args;
    }
    std::string daemon_config() const override {
        return "[auth]\nmode = \"token\"\ntoken_secret = \"" + test_tokens::token_secret + "\"\n";
    }

    ws_client signed_in(const std::string& user) {
        ws_client client = connect();
        const json reply =
            call(client, {{"type", "login"}, {"user", user}, {"token", test_tokens::token_for(user)}, {"id", "in"}});
        EXPECT_EQ(reply.value("type", ""), "welcome") << reply;
        return client;
    }

    // Whether the history file or its write-ahead log holds bytes anywhere. The log is read
    // first: a checkpoint copies its pages into the file before the log starts over, so bytes
    // that left the log by the time the file is read are in the file. (Read the other way
    // round, a checkpoint between the two reads could hide them from both.)
    bool store_holds(const std::string& bytes) const {
        for (const std::string& name : {std::string("history.db-wal"), std::string("history.db")}) {
            std::ifstream in(dir_.file(name), std::ios::binary);
            const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            if (content.find(bytes) != std::string::npos) {
                return true;
            }
        }
        return false;
    }

    temp_dir dir_;
};

TEST_F(ModerationTest, ABanAndTheOwnersRoleSurviveARestart) {
    {
        ws_client olivia = signed_in("olivia");
        ws_client mike = signed_in("mike");
        join_room(olivia, "den");
        join_room(mike, "den");
        const json ack = call(olivia, {{"type", "ban"}, {"room", "den"}, {"user", "mike"}, {"reason", "spam"}, {"id", 1}});
        ASSERT_EQ(ack.value("type", ""), "ack") << ack;
        const json event = wait_type(mike, "moderation");
        EXPECT_EQ(event.value("action", ""), "ban");
        EXPECT_EQ(event.value("by", ""), "olivia");
        EXPECT_EQ(event.value("seq", 0), ack.value("seq", -1));
        const json left = wait_type(mike, "left");
        EXPECT_EQ(left.value("room", ""), "den") << "a ban removes the member";
        expect_error_reply(mike, {{"type", "join"}, {"room", "den"}, {"id", "j"}}, "banned");
    }
    restart_daemon();
    ws_client mike = signed_in("mike");
    expect_error_reply(mike, {{"type", "join"}, {"room", "den"}, {"id", "j"}}, "banned");
    ws_client olivia = signed_in("olivia");
    const json joined = join_room(olivia, "den");
    EXPECT_EQ(joined["roles"].value("olivia", ""), "owner") << joined;
    ASSERT_EQ(joined["bans"].size(), 1u) << joined;
    EXPECT_EQ(joined["bans"][0].value("reason", ""), "spam");
    bool ban_in_history = false;
    for (const json& m : joined["history"]) {
        ban_in_history = ban_in_history || (m.value("type", "") == "moderation" && m.value("action", "") == "ban");
    }
    EXPECT_TRUE(ban_in_history) << "the ban is kept in the room's history: " << joined;
    const json ack = call(olivia, {{"type", "unban"}, {"room", "den"}, {"user", "mike"}, {"id", 2}});
    EXPECT_EQ(ack.value("type", ""), "ack") << ack;
    EXPECT_EQ(join_room(mike, "den").value("type", ""), "joined");
}

TEST_F(ModerationTest, AMutedMemberReadsButCannotSayUntilTheTimedMuteEnds) {
    ws_client olivia = signed_in("olivia");
    ws_client mike = signed_in("mike");
    join_room(olivia, "den");
    join_room(mike, "den");
    expect_error_reply(mike, {{"type", "mute"}, {"room", "den"}, {"user", "olivia"}, {"id", "m"}}, "forbidden");
    const json ack = call(olivia, {{"type", "mute"}, {"room", "den"}, {"user", "mike"}, {"duration_s", 1}, {"id", 1}});
    ASSERT_EQ(ack.value("type", ""), "ack") << ack;
    expect_error_reply(mike, {{"type", "say"}, {"room", "den"}, {"text", "let me talk"}, {"id", 2}}, "muted");
    call(olivia, {{"type", "say"}, {"room", "den"}, {"text", "still open"}, {"id", 3}});
    read_until(mike, is_chat("still open"));
    // The mute ends by itself: an unmute event by nobody, then mike may say again.
    const std::vector<json> seen = read_until(
        mike, [](const json& m) { return m.value("type", "") == "moderation" && m.value("action", "") == "unmute"; },
        5s);
    EXPECT_FALSE(seen.back().contains("by") && !seen.back()["by"].get<std::string>().empty()) << seen.back();
    const json said = call(mike, {{"type", "say"}, {"room", "den"}, {"text", "thanks"}, {"id", 4}});
    EXPECT_EQ(said.value("type", ""), "ack") << said;
}

TEST_F(ModerationTest, ADeletedMessagesTextLeavesTheSqliteFile) {
    const std::string secret = "my password is Tr0ub4dor-7731";
    ws_client mike = signed_in("mike");
    ws_client nina = signed_in("nina");
    join_room(mike, "den");
    join_room(nina, "den");
    const json said = call(mike, {{"type", "say"}, {"room", "den"}, {"text", secret}, {"id", 1}});
    const std::int64_t seq = said.at("seq").get<std::int64_t>();
    const json edited = call(mike, {{"type", "edit"}, {"room", "den"}, {"seq", seq}, {"text", secret + "!"}, {"id", 2}});
    ASSERT_EQ(edited.value("type", ""), "ack") << edited;
    // Written by the writer within its flush interval: the text is in the file now.
    auto wait_for = [&](bool present) {
        for (int i = 0; i < 100 && store_holds(secret) != present; ++i) {
            std::this_thread::sleep_for(50ms);
        }
        return store_holds(secret) == present;
    };
    ASSERT_TRUE(wait_for(true)) << "the message never reached the file";
    const json deleted = call(mike, {{"type", "delete"}, {"room", "den"}, {"seq", seq}, {"id", 3}});
    ASSERT_EQ(deleted.value("type", ""), "ack") << deleted;
    const json event = read_until(nina, is_type("deleted")).back();
    EXPECT_EQ(event.value("target", 0), seq);
    EXPECT_TRUE(wait_for(false)) << "the deleted text is still in the file or its log";

    restart_daemon();
    ws_client back = signed_in("nina");
    const json joined = join_room(back, "den");
    EXPECT_EQ(joined.dump().find("Tr0ub4dor"), std::string::npos) << joined;
    bool tombstone = false;
    for (const json& m : joined.at("history")) {
        tombstone = tombstone || (m.value("seq", 0) == seq && m.value("deleted", false) && !m.contains("text"));
    }
    EXPECT_TRUE(tombstone) << joined;
    EXPECT_FALSE(store_holds(secret));
}

}  // namespace
}  // namespace parley::integration
