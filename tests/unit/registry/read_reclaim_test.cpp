// The deferred freeing under the registry: retired blocks outlive every read section that could
// still see them, and are all freed in the end. Run these in the thread and address sanitizer
// builds too.

#include "registry/read_reclaim.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <latch>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace parley::registry {
namespace {

// A block that records its "free" instead of giving its memory back, so that a reader may still
// look at it after a wrong free and the test sees the mistake instead of undefined behaviour. The
// test owns the memory and releases it at the end.
struct tracked {
    explicit tracked(std::uint64_t v) : value(v) {}
    std::uint64_t value;
    std::atomic<bool> freed{false};
};

std::atomic<std::size_t> frees{0};

void free_tracked(const void* p) noexcept {
    const auto* t = static_cast<const tracked*>(p);
    const_cast<tracked*>(t)->freed.store(true, std::memory_order_relaxed);
    frees.fetch_add(1, std::memory_order_relaxed);
}

retired_block retired(const tracked* t) { return {t, &free_tracked}; }

class read_reclaim : public ::testing::Test {
protected:
    void SetUp() override { frees.store(0); }

    // A block published by this test, kept alive (as memory) until the test ends.
    tracked* make(std::uint64_t value) {
        std::lock_guard lock(pool_mutex_);
        pool_.push_back(std::make_unique<tracked>(value));
        return pool_.back().get();
    }

private:
    std::mutex pool_mutex_;
    std::deque<std::unique_ptr<tracked>> pool_;
};

// Another thread inside a read section from construction until close() (or destruction).
class open_reader {
public:
    open_reader()
        : thread_([this] {
              read_section section;
              opened_.count_down();
              closing_.wait();
          }) {
        opened_.wait();
    }
    ~open_reader() { close(); }
    void close() {
        if (thread_.joinable()) {
            closing_.count_down();
            thread_.join();
        }
    }

private:
    std::latch opened_{1};
    std::latch closing_{1};
    std::thread thread_;
};

TEST_F(read_reclaim, with_no_reader_a_retired_block_is_freed_at_once) {
    retire_list list;
    list.reserve();
    list.retire(retired(make(1)));
    EXPECT_EQ(frees.load(), 1u);
    EXPECT_EQ(list.pending(), 0u);
}

TEST_F(read_reclaim, a_block_waits_for_the_section_open_when_it_was_retired) {
    std::atomic<const tracked*> shared{make(1)};
    std::latch reading(1);
    std::latch retired_one(1);
    bool seen_alive = false;
    std::thread reader([&] {
        read_section section;
        const tracked* t = shared.load(std::memory_order_seq_cst);
        reading.count_down();
        retired_one.wait();
        seen_alive = !t->freed.load(std::memory_order_relaxed) && t->value == 1;
    });
    reading.wait();
    retire_list list;
    list.reserve();
    const tracked* old = shared.exchange(make(2), std::memory_order_seq_cst);
    list.retire(retired(old));
    EXPECT_EQ(list.pending(), 1u);
    EXPECT_EQ(list.reclaim(), 0u) << "the reader's section is still open";
    EXPECT_EQ(frees.load(), 0u);
    retired_one.count_down();
    reader.join();
    EXPECT_TRUE(seen_alive);
    EXPECT_EQ(list.reclaim(), 1u);
    EXPECT_EQ(list.pending(), 0u);
    EXPECT_EQ(frees.load(), 1u);
}

TEST_F(read_reclaim, a_section_opened_after_the_retire_does_not_hold_the_block) {
    open_reader reader;
    retire_list list;
    list.reserve();
    list.retire(retired(make(1)));
    EXPECT_EQ(list.pending(), 1u) << "the open section holds the first block";
    reader.close();
    // A new section on this thread, opened and closed, sees nothing of the old block.
    { read_section section; }
    list.retire(retired(make(2)));
    EXPECT_EQ(frees.load(), 2u) << "the reader left: both are freed";
    EXPECT_EQ(list.pending(), 0u);
}

TEST_F(read_reclaim, the_destructor_frees_what_still_waits) {
    open_reader reader;
    {
        retire_list list;
        list.reserve();
        list.retire({retired(make(1)), retired(make(2)), retired(make(3))});
        EXPECT_EQ(list.pending(), 3u);
    }
    EXPECT_EQ(frees.load(), 3u) << "while the reader is still inside its section";
}

// Readers on several threads keep reading the current block of two structures while a writer per
// structure replaces and retires blocks as fast as it can. No reader may ever find a block freed
// while its section is open, and when the readers stop every retired block is freed.
TEST_F(read_reclaim, readers_never_see_a_freed_block_and_everything_is_freed) {
    constexpr std::size_t reader_count = 4;
    constexpr std::size_t writer_count = 2;
    constexpr std::uint64_t writes_per_writer = 20000;
    std::array<std::atomic<const tracked*>, writer_count> current{};
    for (auto& c : current) {
        c.store(make(0));
    }
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> freed_while_read{0};
    std::atomic<std::uint64_t> reads{0};
    std::latch start(reader_count + writer_count);
    std::vector<std::thread> readers;
    for (std::size_t r = 0; r < reader_count; ++r) {
        readers.emplace_back([&, r] {
            start.arrive_and_wait();
            std::uint64_t n = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                read_section section;
                const tracked* t = current[(n + r) % writer_count].load(std::memory_order_seq_cst);
                // Look twice, with some time between, to give a wrong free the chance to land.
                bool bad = t->freed.load(std::memory_order_relaxed);
                for (int spin = 0; spin < 64; ++spin) {
                    std::atomic_signal_fence(std::memory_order_seq_cst);
                }
                bad = bad || t->freed.load(std::memory_order_relaxed);
                freed_while_read.fetch_add(bad ? 1 : 0, std::memory_order_relaxed);
                ++n;
            }
            reads.fetch_add(n);
        });
    }
    std::array<retire_list, writer_count> lists;
    std::vector<std::thread> writers;
    for (std::size_t w = 0; w < writer_count; ++w) {
        writers.emplace_back([&, w] {
            start.arrive_and_wait();
            for (std::uint64_t i = 1; i <= writes_per_writer; ++i) {
                lists[w].reserve();
                const tracked* old = current[w].exchange(make(i), std::memory_order_seq_cst);
                lists[w].retire(retired(old));
            }
        });
    }
    for (auto& t : writers) {
        t.join();
    }
    stop.store(true);
    for (auto& t : readers) {
        t.join();
    }
    EXPECT_EQ(freed_while_read.load(), 0u);
    EXPECT_GT(reads.load(), 0u);
    for (auto& list : lists) {
        list.reclaim();
        EXPECT_EQ(list.pending(), 0u) << "no reader is left, so nothing may wait";
    }
    EXPECT_EQ(frees.load(), writer_count * writes_per_writer) << "every retired block is freed once";
    for (auto& c : current) {
        EXPECT_FALSE(c.load()->freed.load()) << "the published block is never freed";
    }
}

TEST(read_reclaim_objects, retired_object_deletes_with_its_type) {
    struct counted {
        explicit counted(int& d) : deaths(d) {}
        ~counted() { ++deaths; }
        int& deaths;
    };
    int deaths = 0;
    retire_list list;
    list.reserve();
    list.retire(retired_object(new counted(deaths)));
    EXPECT_EQ(deaths, 1);
}

}  // namespace
}  // namespace parley::registry
