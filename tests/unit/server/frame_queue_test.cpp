// A connection's write queue: byte accounting across partial writes, the well-formed stream
// after a slow-consumer drop, and no storage held while idle.
#include "server/frame_queue.hpp"

#include <gtest/gtest.h>

#include <string>

namespace parley::server {
namespace {

using protocol::shared_frame;

shared_frame frame_of(std::size_t size, char fill) { return shared_frame::copy_of(std::string(size, fill)); }

TEST(FrameQueueTest, CountsBytesAndReleasesFramesAsTheyAreWritten) {
    local_frame_pool pool;  // outlives the queue, as the worker's does
    frame_queue q;
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.bytes(), 0u);
    q.push(frame_of(10, 'a'), pool);
    q.push(frame_of(20, 'b'), pool);
    q.push(frame_of(30, 'c'), pool);
    EXPECT_EQ(q.size(), 3u);
    EXPECT_EQ(q.bytes(), 60u);

    // A write that ends inside the second frame.
    EXPECT_EQ(q.consume(15), 1u);
    EXPECT_EQ(q.size(), 2u);
    EXPECT_EQ(q.front_offset(), 5u);
    EXPECT_EQ(q.bytes(), 45u);
    EXPECT_EQ(q.at(0).view(), std::string(20, 'b'));

    EXPECT_EQ(q.consume(15), 1u);
    EXPECT_EQ(q.front_offset(), 0u);
    EXPECT_EQ(q.at(0).view(), std::string(30, 'c'));
    EXPECT_EQ(q.consume(30), 1u);
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.bytes(), 0u);
}

TEST(FrameQueueTest, QueuedFramesShareTheBytesOfTheOriginal) {
    local_frame_pool pool;  // outlives the queue, as the worker's does
    frame_queue q;
    shared_frame f = frame_of(8, 'x');
    q.push(f, pool);
    q.push(f, pool);
    EXPECT_EQ(q.at(0).identity(), f.identity());
    EXPECT_EQ(q.at(1).identity(), f.identity());
    EXPECT_EQ(f.use_count(), 2) << "one atomic reference for every entry of this worker";
    q.consume(8);
    EXPECT_EQ(f.use_count(), 2) << "still queued once";
    q.consume(8);
    EXPECT_EQ(f.use_count(), 1) << "written frames are released at once";
}

TEST(FrameQueueTest, QueuesOfOneWorkerShareOneLocalReferencePerFrame) {
    local_frame_pool pool;
    frame_queue a;
    frame_queue b;
    frame_queue c;
    shared_frame f = frame_of(8, 'x');
    shared_frame g = frame_of(4, 'y');
    a.push(f, pool);
    b.push(f, pool);
    c.push(f, pool);
    EXPECT_EQ(f.use_count(), 2);
    a.push(g, pool);  // another frame in between: f is looked up afresh afterwards
    c.push(f, pool);
    EXPECT_EQ(f.use_count(), 3);
    EXPECT_EQ(g.use_count(), 2);
    a.consume(12);
    b.consume(8);
    EXPECT_EQ(g.use_count(), 1);
    EXPECT_EQ(f.use_count(), 3) << "c still holds both of its entries";
    c.consume(16);
    EXPECT_EQ(f.use_count(), 1);
    EXPECT_EQ(pool.spare(), pool.capacity()) << "every reference is back for reuse";
    a.push(g, pool);
    EXPECT_EQ(pool.spare(), pool.capacity() - 1);
    a.clear();
    EXPECT_EQ(g.use_count(), 1) << "clearing a queue releases what it held";
}

TEST(FrameQueueTest, DroppedAndDestroyedQueuesReleaseTheirFrames) {
    local_frame_pool pool;
    shared_frame f = frame_of(8, 'x');
    {
        frame_queue q;
        q.push(f, pool);
        q.push(f, pool);
        q.drop_unstarted();
        EXPECT_EQ(f.use_count(), 1);
        q.push(f, pool);
        EXPECT_EQ(f.use_count(), 2);
    }
    EXPECT_EQ(f.use_count(), 1) << "a queue destroyed with frames in it releases them";
}

TEST(FrameQueueTest, DropKeepsAPartlyWrittenFrameSoTheStreamStaysWellFormed) {
    local_frame_pool pool;  // outlives the queue, as the worker's does
    frame_queue q;
    q.push(frame_of(10, 'a'), pool);
    q.push(frame_of(10, 'b'), pool);
    q.push(frame_of(10, 'c'), pool);
    q.consume(4);
    q.drop_unstarted();
    ASSERT_EQ(q.size(), 1u);
    EXPECT_EQ(q.at(0).view(), std::string(10, 'a'));
    EXPECT_EQ(q.bytes(), 6u);

    frame_queue untouched;
    untouched.push(frame_of(10, 'a'), pool);
    untouched.drop_unstarted();
    EXPECT_TRUE(untouched.empty());
    EXPECT_EQ(untouched.bytes(), 0u);
}

TEST(FrameQueueTest, IdleQueueGivesItsStorageBackAndWorksAfterwards) {
    local_frame_pool pool;  // outlives the queue, as the worker's does
    frame_queue q;
    q.release_if_idle();  // nothing to release
    q.push(frame_of(5, 'a'), pool);
    q.release_if_idle();  // not idle: the frame must stay
    ASSERT_EQ(q.size(), 1u);
    q.consume(5);
    EXPECT_GT(q.capacity(), 0u) << "an emptied queue keeps its storage until idle";
    q.release_if_idle();
    EXPECT_EQ(q.capacity(), 0u);
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.size(), 0u);
    EXPECT_EQ(q.bytes(), 0u);
    EXPECT_EQ(q.front_offset(), 0u);
    q.push(frame_of(7, 'b'), pool);
    EXPECT_EQ(q.bytes(), 7u);
    EXPECT_EQ(q.consume(7), 1u);
}

TEST(FrameQueueTest, AQueueThatNeverDrainsDoesNotGrowWithoutBound) {
    local_frame_pool pool;  // outlives the queue, as the worker's does
    frame_queue q;
    // Keep about 10 frames queued while 10,000 pass through: consumed slots must be reclaimed.
    for (int i = 0; i < 10; ++i) {
        q.push(frame_of(1, 'x'), pool);
    }
    for (int i = 0; i < 10000; ++i) {
        q.push(frame_of(1, 'x'), pool);
        ASSERT_EQ(q.consume(1), 1u);
    }
    EXPECT_EQ(q.size(), 10u);
    EXPECT_EQ(q.bytes(), 10u);
    EXPECT_LT(q.capacity(), 256u);
}

TEST(FrameQueueTest, StorageGrownForABurstIsFreedWhenItDrains) {
    local_frame_pool pool;  // outlives the queue, as the worker's does
    frame_queue q;
    for (int i = 0; i < 1000; ++i) {
        q.push(frame_of(1, 'x'), pool);
    }
    EXPECT_GE(q.capacity(), 1000u);
    q.consume(1000);
    EXPECT_EQ(q.capacity(), 0u);
}

}  // namespace
}  // namespace parley::server
