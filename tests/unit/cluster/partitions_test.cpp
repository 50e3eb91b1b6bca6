// The partition scheme: stable partitions, hash tags, jump consistent hash, Redis Cluster slots.

#include "rooms/cluster/partitions.hpp"

#include "rooms/cluster/cluster_keys.hpp"

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

TEST(Partitions, KnownNamesKeepTheirPartitions) {
    // Pinned: the keys in every cluster's Redis are named by these (and migrate_layout's Lua
    // computes the same), so a change here would orphan every room's history.
    EXPECT_EQ(partition_of("lobby"), 51u);
    EXPECT_EQ(partition_of("kitchen"), 15u);
    EXPECT_EQ(partition_of("dm:alice:bob"), 17u);
    EXPECT_EQ(partition_of("alice"), 7u);
    EXPECT_EQ(partition_of("g\xc3\xa9n\xc3\xa9ral"), 15u);  // bytes above 127 count whole
}

TEST(Partitions, EveryKeyOfARoomConversationOrUserSharesItsSlot) {
    EXPECT_EQ(keys::room_stream("lobby"), "parley:{p51}:room:lobby:log");
    EXPECT_EQ(keys::room_seq("lobby"), "parley:{p51}:room:lobby:seq");
    EXPECT_EQ(keys::room_settings("lobby"), "parley:{p51}:room:lobby:settings");
    EXPECT_EQ(keys::room_revised("lobby"), "parley:{p51}:room:lobby:revised");
    EXPECT_EQ(keys::room_channel("lobby"), "parley:{p51}:room:lobby:events");
    EXPECT_EQ(keys::conversation_seq("dm:alice:bob"), "parley:{p17}:dm:alice:bob:seq");
    EXPECT_EQ(keys::conversation_stream("dm:alice:bob"), "parley:{p17}:dm:alice:bob:log");
    EXPECT_EQ(keys::user_markers("alice"), "parley:{p7}:user:alice:read");
    EXPECT_EQ(keys::name_lease("alice"), "parley:{p7}:name:alice");
    for (const std::string room : {"lobby", "kitchen", "a:b:c", "{x}"}) {
        const std::uint16_t slot = key_slot(keys::room_seq(room));
        EXPECT_EQ(slot, key_slot("p" + std::to_string(partition_of(room)))) << room;
        for (const std::string& key : {keys::room_stream(room), keys::room_settings(room), keys::room_revised(room),
                                       keys::room_channel(room)}) {
            EXPECT_EQ(key_slot(key), slot) << key;
        }
    }
    // A conversation's revised set (edits of dms) is named as a room's, in the conversation's slot.
    EXPECT_EQ(key_slot(keys::room_revised("dm:alice:bob")), key_slot(keys::conversation_stream("dm:alice:bob")));
}

TEST(Partitions, ARoomsChannelNamesItsRoom) {
    EXPECT_EQ(keys::room_of_channel(keys::room_channel("lobby")), "lobby");
    EXPECT_EQ(keys::room_of_channel(keys::room_channel("a:b:events")), "a:b:events");
    EXPECT_EQ(keys::room_of_channel(keys::room_channel("}:room:x")), "}:room:x");
    EXPECT_EQ(keys::room_of_channel(keys::channel), "");
    EXPECT_EQ(keys::room_of_channel("parley:room:lobby:events"), "") << "the first layout's channel";
    EXPECT_EQ(keys::room_of_channel("parley:{p51}:room::events"), "") << "no room";
    EXPECT_EQ(keys::room_of_channel("parley:{}:room:lobby:events"), "") << "no partition";
    EXPECT_EQ(keys::room_of_channel("parley:{p51}:user:lobby:events"), "");
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
