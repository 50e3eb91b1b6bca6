// Big rooms: `joined` lists only the start of the member list with member_count, `members`
// pages the rest (members here and on other nodes, in one sorted order), and above
// presence_max_members the members hear presence_count instead of every join and leave.

#include "tests/unit/rooms/chat_world.hpp"

#include "protocol/server_messages.hpp"

#include <gtest/gtest.h>

#include <cstdio>

namespace parley::rooms::tests {
namespace {

std::string member_name(int i) {
    char name[16];  // room for any int, so no compiler sees a truncation
    std::snprintf(name, sizeof name, "u%03d", i);
    return name;
}

// Logs in and joins `count` users u000, u001, ... to `room`, spread over both workers; returns
// them in name order.
std::vector<test_client*> fill(chat_world& world, std::string_view room, int count) {
    std::vector<test_client*> members;
    for (int i = 0; i < count; ++i) {
        test_client& c = world.login(member_name(i), static_cast<std::uint32_t>(i % 2));
        world.join(c, room);
        members.push_back(&c);
    }
    world.clear_all();
    return members;
}

json members_request(std::string_view room, json after = nullptr, json limit = nullptr) {
    json request{{"type", "members"}, {"room", room}, {"id", 9}};
    if (!after.is_null()) {
        request["after"] = after;
    }
    if (!limit.is_null()) {
        request["limit"] = limit;
    }
    return request;
}

TEST(member_list, joined_lists_the_first_names_with_the_count_in_a_big_room) {
    auto s = test_settings();
    s.joined_members_max = 100;
    chat_world world(s);
    fill(world, "big", 249);
    test_client& last = world.login("zed", 1);
    json joined = world.join(last, "big");
    ASSERT_EQ(joined["members"].size(), 100u);
    EXPECT_EQ(joined["members"][0], "u000");
    EXPECT_EQ(joined["members"][99], "u099") << "the start of the sorted list";
    EXPECT_EQ(joined["member_count"], 250);
    EXPECT_EQ(joined["members_truncated"], true);

    test_client& solo = world.login("solo", 0);
    json small = world.join(solo, "small");
    EXPECT_EQ(small["members"], json({"solo"}));
    EXPECT_EQ(small["member_count"], 1);
    EXPECT_FALSE(small.contains("members_truncated")) << "nothing was cut";
}

TEST(member_list, joined_members_max_zero_sends_only_the_count) {
    auto s = test_settings();
    s.joined_members_max = 0;
    chat_world world(s);
    fill(world, "r", 3);
    test_client& d = world.login("d", 0);
    json joined = world.join(d, "r");
    EXPECT_EQ(joined["members"], json::array());
    EXPECT_EQ(joined["member_count"], 4);
    EXPECT_EQ(joined["members_truncated"], true);
}

TEST(member_list, members_pages_through_the_sorted_list_once) {
    chat_world world;
    auto members = fill(world, "big", 250);
    test_client& asker = *members[17];
    std::vector<std::string> seen;
    json after = nullptr;
    for (int page = 0; page < 10; ++page) {
        asker.send(members_request("big", after, 100));
        json reply = asker.take_one();
        ASSERT_EQ(reply["type"], "members") << reply.dump();
        EXPECT_EQ(reply["room"], "big");
        EXPECT_EQ(reply["re"], 9);
        EXPECT_EQ(reply["member_count"], 250);
        for (const auto& name : reply["members"]) {
            seen.push_back(name.get<std::string>());
        }
        if (!reply["more"].get<bool>()) {
            EXPECT_EQ(page, 2) << "250 names in pages of 100";
            break;
        }
        after = seen.back();
    }
    ASSERT_EQ(seen.size(), 250u);
    for (int i = 0; i < 250; ++i) {
        EXPECT_EQ(seen[static_cast<std::size_t>(i)], member_name(i));
    }
    // The default page is 100; after a name that is not a member, the list goes on after it.
    asker.send(members_request("big"));
    EXPECT_EQ(asker.take_one()["members"].size(), 100u);
    asker.send(members_request("big", "u1495", 3));
    EXPECT_EQ(asker.take_one()["members"], json({"u150", "u151", "u152"}));
    asker.send(members_request("big", "u249"));
    json end = asker.take_one();
    EXPECT_EQ(end["members"], json::array());
    EXPECT_EQ(end["more"], false);
}

TEST(member_list, bad_members_requests_get_clear_errors) {
    chat_world world;
    auto members = fill(world, "r", 2);
    test_client& outsider = world.login("outsider", 1);
    outsider.send(members_request("r"));
    EXPECT_TRUE(is_error(outsider.take_one(), "not_in_room", 9)) << "only members see the list";
    test_client& member = *members[0];
    for (json limit : {json(0), json(1001)}) {
        member.send(members_request("r", nullptr, limit));
        EXPECT_TRUE(is_error(member.take_one(), "bad_request", 9)) << limit;
    }
    member.send(members_request("r", nullptr, 1000));
    EXPECT_EQ(member.take_one()["type"], "members") << "1,000 is the largest page";
    member.send(members_request("r", "not a name!"));
    EXPECT_TRUE(is_error(member.take_one(), "invalid_name", 9));
    member.send(members_request("r", 5));
    EXPECT_TRUE(is_error(member.take_one(), "bad_request", 9));
}

TEST(member_list, members_on_other_nodes_are_in_the_pages_and_the_count) {
    chat_world world(test_settings(), 1);
    test_client& alice = world.login("alice", 0);
    test_client& carol = world.login("carol", 0);
    world.join(alice, "lobby");
    world.join(carol, "lobby");
    auto lobby = world.hub().rooms().find("lobby");
    lobby->set_remote_members({{"bob", "node-b"}, {"dave", "node-b"}, {"erin", "node-c"}});
    world.run();
    world.clear_all();

    alice.send(members_request("lobby", nullptr, 2));
    json first = alice.take_one();
    EXPECT_EQ(first["members"], json({"alice", "bob"}));
    EXPECT_EQ(first["member_count"], 5);
    EXPECT_EQ(first["more"], true);
    alice.send(members_request("lobby", "bob", 10));
    json rest = alice.take_one();
    EXPECT_EQ(rest["members"], json({"carol", "dave", "erin"}));
    EXPECT_EQ(rest["more"], false);

    bool more = false;
    protocol::member_list all = lobby->members_page({}, 10, more);
    EXPECT_EQ(all.names, (std::vector<std::string>{"alice", "bob", "carol", "dave", "erin"}));
    EXPECT_EQ(all.count, 5u);
    EXPECT_FALSE(more);
}

TEST(member_list, a_big_room_hears_its_count_at_most_once_per_interval) {
    auto s = test_settings();
    s.presence_max_members = 3;
    chat_world world(s);
    auto members = fill(world, "big", 5);
    room_directory::tick_settings counts{3, 5000};
    auto counts_heard = [&](test_client& c) {
        std::vector<std::int64_t> heard;
        for (const json& m : c.received("presence_count")) {
            EXPECT_EQ(m["room"], "big");
            heard.push_back(m["count"].get<std::int64_t>());
        }
        c.take();
        return heard;
    };

    world.hub().rooms().tick(100'000, nullptr, counts);
    world.run();
    for (test_client* c : members) {
        EXPECT_EQ(counts_heard(*c), std::vector<std::int64_t>{5});
    }
    test_client& sixth = world.login("u005", 0);
    world.join(sixth, "big");
    EXPECT_TRUE(members[0]->received("presence").empty()) << "no presence above presence_max_members";
    world.hub().rooms().tick(102'000, nullptr, counts);
    world.run();
    EXPECT_TRUE(counts_heard(*members[0]).empty()) << "within the interval";
    world.hub().rooms().tick(105'000, nullptr, counts);
    world.run();
    EXPECT_EQ(counts_heard(*members[0]), std::vector<std::int64_t>{6});
    EXPECT_EQ(counts_heard(sixth), std::vector<std::int64_t>{6});

    // A leave and a join cancel out: the count did not change, nothing is sent.
    world.disconnect(*members[4]);
    test_client& again = world.login("u004", 1);
    world.join(again, "big");
    world.hub().rooms().tick(200'000, nullptr, counts);
    world.run();
    EXPECT_TRUE(counts_heard(*members[0]).empty());

    // A room at or below the limit gets presence, never a count.
    test_client& x = world.login("x", 0);
    world.join(x, "small");
    world.hub().rooms().tick(300'000, nullptr, counts);
    world.run();
    EXPECT_TRUE(x.received("presence_count").empty());
}

}  // namespace
}  // namespace parley::rooms::tests
