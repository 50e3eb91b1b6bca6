// A room's batch of says arrives as two publications (header, then block) and is read as one.
#include "rooms/cluster/said_batch_joiner.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace parley::cluster {
namespace {

using delivered = std::vector<std::pair<std::string, std::string>>;

struct joiner_fixture {
    said_batch_joiner joiner;
    delivered out;

    void take(std::string_view channel, std::string_view payload) {
        joiner.take(channel, payload, [this](std::string_view c, std::string_view p) {
            out.emplace_back(std::string(c), std::string(p));
        });
    }
};

constexpr std::string_view block = "node-a:run1\n7\n1700000000000\n0.3.1\nalice\n\"hi\"";

TEST(said_batch_joiner, a_header_and_its_block_are_delivered_as_one_batch_that_reads_back) {
    joiner_fixture f;
    f.take("room-channel", "Y41-1");
    EXPECT_TRUE(f.out.empty());  // held until its block
    f.take("room-channel", block);
    ASSERT_EQ(f.out.size(), 1U);
    EXPECT_EQ(f.out[0].first, "room-channel");
    EXPECT_EQ(f.out[0].second, "Y41-1\n" + std::string(block));
    std::string scratch;
    std::vector<std::int64_t> seqs;
    EXPECT_TRUE(for_each_said(f.out[0].second, "den", scratch, [&](const cluster_event& e) {
        seqs.push_back(e.seq);
        EXPECT_EQ(e.origin, "node-a");
    }));
    EXPECT_EQ(seqs, std::vector<std::int64_t>{41});
}

TEST(said_batch_joiner, events_and_batches_published_in_one_piece_pass_through) {
    joiner_fixture f;
    const std::string event = format_event(event_type::join, "node-b", "den", "bob", "");
    const std::string whole = "Y3-1\n" + std::string(block);
    f.take("c1", event);
    f.take("c1", whole);
    ASSERT_EQ(f.out.size(), 2U);
    EXPECT_EQ(f.out[0].second, event);
    EXPECT_EQ(f.out[1].second, whole);
    EXPECT_EQ(f.joiner.orphaned(), 0U);
}

TEST(said_batch_joiner, a_header_followed_by_an_event_is_dropped_and_the_event_delivered) {
    // The block went with a lost connection; what comes next is read as itself.
    joiner_fixture f;
    const std::string event = format_event(event_type::leave, "node-b", "den", "bob", "");
    f.take("c1", "Y5-2");
    f.take("c1", event);
    ASSERT_EQ(f.out.size(), 1U);
    EXPECT_EQ(f.out[0].second, event);
    EXPECT_EQ(f.joiner.orphaned(), 1U);
}

TEST(said_batch_joiner, a_block_on_another_channel_than_its_header_is_not_joined_to_it) {
    joiner_fixture f;
    f.take("c1", "Y5-1");
    f.take("c2", block);
    // Neither is a batch the node could number: the header's block is missing, and a block
    // without its header is not an event (the node ignores it as malformed).
    ASSERT_EQ(f.out.size(), 1U);
    EXPECT_EQ(f.out[0].first, "c2");
    EXPECT_EQ(f.out[0].second, block);
    EXPECT_EQ(f.joiner.orphaned(), 1U);
}

TEST(said_batch_joiner, a_header_after_a_header_replaces_it_and_joins_with_the_next_block) {
    joiner_fixture f;
    f.take("c1", "Y5-1");
    f.take("c1", "Y9-1");
    f.take("c1", block);
    ASSERT_EQ(f.out.size(), 1U);
    EXPECT_EQ(f.out[0].second, "Y9-1\n" + std::string(block));
    EXPECT_EQ(f.joiner.orphaned(), 1U);
}

TEST(said_batch_joiner, many_batches_in_a_row_each_join_their_own_block) {
    joiner_fixture f;
    for (int i = 1; i <= 50; ++i) {
        const std::string channel = "c" + std::to_string(i % 3);
        f.take(channel, "Y" + std::to_string(i) + "-1");
        f.take(channel, block);
    }
    ASSERT_EQ(f.out.size(), 50U);
    for (int i = 1; i <= 50; ++i) {
        EXPECT_EQ(f.out[i - 1].first, "c" + std::to_string(i % 3));
        EXPECT_EQ(f.out[i - 1].second, "Y" + std::to_string(i) + "-1\n" + std::string(block));
    }
}

}  // namespace
}  // namespace parley::cluster
