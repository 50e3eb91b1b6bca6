// The partition scheme: stable partitions, hash tags, jump consistent hash, Redis Cluster slots.

#include "rooms/cluster/partitions.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace parley::cluster {
namespace {

TEST(Partitions, NamesSpreadOverEveryPartitionAndNeverMove) {
    // Fixed values: a partition that changed between versions would lose every room's history.
    EXPECT_EQ(partition_of("lobby"), partition_of(std::string("lob") + "by"));
    EXPECT_EQ(partition_of(""), 14695981039346656037ULL % partition_count);
    std::vector<int> count(partition_count);
    for (int i = 0; i < 128000; ++i) {
        const std::uint32_t p = partition_of("room-" + std::to_string(i));
        ASSERT_LT(p, partition_count);
        ++count[p];
    }
    for (std::uint32_t p = 0; p < partition_count; ++p) {
        EXPECT_GT(count[p], 800) << "partition " << p;
        EXPECT_LT(count[p], 1200) << "partition " << p;
    }
}

TEST(Partitions, TagIsWhatRedisClusterHashes) {
    EXPECT_EQ(partition_tag(17), "{p17}");
    EXPECT_EQ(key_slot("parley:" + partition_tag(17) + ":room:lobby:log"), key_slot("p17"));
    EXPECT_EQ(key_slot("parley:" + partition_tag(17) + ":user:ann"), key_slot("p17"));
}

TEST(Partitions, SlotsAreRedisClusters) {
    // The Redis Cluster specification's CRC16 check value, and slots Redis itself reports.
    EXPECT_EQ(key_slot("123456789"), 0x31C3 % 16384);
    EXPECT_EQ(key_slot("foo"), 12182);
    EXPECT_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
    EXPECT_EQ(key_slot("{user1000}.followers"), key_slot("user1000"));
    // An empty tag does not count: the whole key is hashed. Only the first tag counts.
    EXPECT_NE(key_slot("foo{}{bar}"), key_slot("bar"));
    EXPECT_EQ(key_slot("foo{{bar}}zap"), key_slot("{bar"));
    EXPECT_EQ(key_slot("foo{bar}{zap}"), key_slot("bar"));
}

TEST(Partitions, JumpHashMovesOnlyToTheNewShard) {
    for (std::uint32_t shards = 1; shards < 8; ++shards) {
        std::vector<int> per_shard(shards + 1);
        for (std::uint32_t p = 0; p < 10000; ++p) {
            const std::uint32_t before = jump_hash(p, shards);
            const std::uint32_t after = jump_hash(p, shards + 1);
            ASSERT_LT(before, shards);
            ASSERT_LT(after, shards + 1);
            if (after != before) {
                EXPECT_EQ(after, shards) << "key " << p << " moved between old shards";
            }
            ++per_shard[after];
        }
        for (int n : per_shard) {
            EXPECT_GT(n, 10000 / static_cast<int>(shards + 1) * 8 / 10);
        }
    }
    EXPECT_EQ(jump_hash(12345, 1), 0u);
}

TEST(Partitions, OneShardTakesEveryPartition) {
    std::set<std::uint32_t> shards;
    for (std::uint32_t p = 0; p < partition_count; ++p) {
        shards.insert(jump_hash(p, 1));
    }
    EXPECT_EQ(shards, std::set<std::uint32_t>{0});
}

}  // namespace
}  // namespace parley::cluster
