// Big rooms against the real daemon: `joined` lists the start of the member list with
// member_count, `members` pages the whole sorted list, and above presence_max_members the
// members hear presence_count instead of each join.
#include "test_support.hpp"

#include <cstdio>

namespace parley::integration {
namespace {

class MemberListTest : public parley_test {
protected:
    // Small limits, so a few dozen connections make a "big" room.
    std::string daemon_config() const override {
        return "[rooms]\njoined_members_max = 10\npresence_max_members = 20\npresence_count_interval_ms = 1000\n";
    }

    static std::string member_name(int i) {
        char name[16];  // room for any int, so no compiler sees a truncation
        std::snprintf(name, sizeof name, "m%02d", i);
        return name;
    }

    // count members m00, m01, ... in room, joined in that order.
    std::vector<ws_client> fill(const std::string& room, int count) {
        std::vector<ws_client> members;
        for (int i = 0; i < count; ++i) {
            members.push_back(login(member_name(i)));
            join_room(members.back(), room);
        }
        return members;
    }
};

TEST_F(MemberListTest, JoinedListsTheFirstNamesAndTheCount) {
    auto members = fill("big", 15);
    ws_client late = login("zz");
    const json joined = join_room(late, "big");
    ASSERT_EQ(joined["members"].size(), 10u);
    EXPECT_EQ(joined["members"].front(), "m00");
    EXPECT_EQ(joined["members"].back(), "m09");
    EXPECT_EQ(joined["member_count"], 16);
    EXPECT_EQ(joined["members_truncated"], true);

    ws_client solo = login("solo");
    const json small = join_room(solo, "small");
    EXPECT_EQ(small["members"], json({"solo"}));
    EXPECT_EQ(small["member_count"], 1);
    EXPECT_FALSE(small.contains("members_truncated"));
}

TEST_F(MemberListTest, MembersPagesTheSortedListToItsEnd) {
    auto members = fill("big", 25);
    std::vector<std::string> names;
    json request = {{"type", "members"}, {"room", "big"}, {"limit", 7}, {"id", 1}};
    for (int page = 0; page < 10; ++page) {
        const json reply = call(members[3], request);
        ASSERT_EQ(reply["type"], "members") << reply.dump();
        EXPECT_EQ(reply["member_count"], 25);
        for (const auto& n : reply["members"]) {
            names.push_back(n.get<std::string>());
        }
        if (!reply["more"].get<bool>()) {
            break;
        }
        request["after"] = names.back();
    }
    ASSERT_EQ(names.size(), 25u);
    for (int i = 0; i < 25; ++i) {
        EXPECT_EQ(names[static_cast<std::size_t>(i)], member_name(i));
    }
}

TEST_F(MemberListTest, BadMembersRequestsAreRefusedClearly) {
    auto members = fill("r", 2);
    ws_client outsider = login("outsider");
    expect_error_reply(outsider, {{"type", "members"}, {"room", "r"}, {"id", 1}}, "not_in_room");
    expect_error_reply(members[0], {{"type", "members"}, {"room", "r"}, {"limit", 0}, {"id", 2}}, "bad_request");
    expect_error_reply(members[0], {{"type", "members"}, {"room", "r"}, {"limit", 1001}, {"id", 3}}, "bad_request");
    expect_error_reply(members[0], {{"type", "members"}, {"room", "r"}, {"after", 12}, {"id", 4}}, "bad_request");
    expect_error_reply(members[0], {{"type", "members"}, {"room", "r"}, {"after", "no such name!"}, {"id", 5}},
                       "invalid_name");
    // The connection still serves.
    EXPECT_EQ(call(members[0], {{"type", "members"}, {"room", "r"}, {"id", 6}})["members"], json({"m00", "m01"}));
}

TEST_F(MemberListTest, ABigRoomHearsItsCountInsteadOfPresence) {
    auto members = fill("big", 21);  // above presence_max_members = 20
    ws_client newcomer = login("zz");
    join_room(newcomer, "big");
    // m00 hears the count (22 once every join has landed), and no presence for the joins past 20.
    json count;
    const std::vector<json> seen = read_until(members[0], [&](const json& m) {
        if (m.value("type", "") == "presence_count" && m.value("count", 0) == 22) {
            count = m;
            return true;
        }
        return false;
    }, std::chrono::seconds(10));
    EXPECT_EQ(count, json({{"type", "presence_count"}, {"room", "big"}, {"count", 22}}));
    for (const json& m : seen) {
        if (m.value("type", "") == "presence") {
            EXPECT_NE(m["user"], "zz") << "a join past presence_max_members was announced";
        }
    }
}

}  // namespace
}  // namespace parley::integration
