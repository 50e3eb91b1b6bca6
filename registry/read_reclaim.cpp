#include "registry/read_reclaim.hpp"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <mutex>

namespace parley::registry {

// Each reader thread owns a slot whose sequence number is odd while it is inside a read section.
// retire() notes which slots are odd right after the blocks were unpublished; a block may be freed
// once each of those slots has moved on from the number noted.
struct alignas(64) detail::reader_slot {
    std::atomic<std::uint64_t> seq{0};
    std::atomic<bool> in_use{false};
    reader_slot* next = nullptr;  // written once before the slot is published, then immutable
};

namespace {

using detail::reader_slot;

class reader_domain {
public:
    // Never destroyed: threads may still open sections while statics are torn down at exit.
    static reader_domain& instance() {
        static reader_domain* const domain = new reader_domain;
        return *domain;
    }

    reader_slot* acquire() {
        for (reader_slot* s = head_.load(std::memory_order_seq_cst); s; s = s->next) {
            bool expected = false;
            if (!s->in_use.load(std::memory_order_relaxed) &&
                s->in_use.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
                return s;
            }
        }
        auto* s = new reader_slot;
        s->in_use.store(true, std::memory_order_relaxed);
        std::lock_guard lock(append_mutex_);
        s->next = head_.load(std::memory_order_relaxed);
        // seq_cst, like every access to head_: a writer's scan that misses this slot is then ordered
        // before the slot's first read section, which therefore sees the writer's new pointers.
        head_.store(s, std::memory_order_seq_cst);
        return s;
    }

    void release(reader_slot* s) noexcept { s->in_use.store(false, std::memory_order_release); }

    reader_slot* first() const noexcept { return head_.load(std::memory_order_seq_cst); }

private:
    std::mutex append_mutex_;
    std::atomic<reader_slot*> head_{nullptr};
};

// A plain pointer (constant-initialized, so reading it costs one TLS load with no init check); the
// object that hands the slot back at thread exit is only touched on a thread's first section.
thread_local reader_slot* this_thread_slot = nullptr;
thread_local bool this_thread_exited = false;

struct slot_owner {
    reader_slot* slot = nullptr;
    ~slot_owner() {
        if (slot) {
            reader_domain::instance().release(slot);
        }
        this_thread_slot = nullptr;
        this_thread_exited = true;
    }
};

reader_slot& register_this_thread() {
    if (this_thread_exited) {
        // A section opened from another thread_local's destructor after ours ran: take a slot for
        // good rather than touch the destroyed owner. It is one cache line, once per such thread.
        this_thread_slot = reader_domain::instance().acquire();
        return *this_thread_slot;
    }
    thread_local slot_owner owner;
    owner.slot = reader_domain::instance().acquire();
    this_thread_slot = owner.slot;
    return *owner.slot;
}

}  // namespace

read_section::read_section() : slot_(this_thread_slot ? *this_thread_slot : register_this_thread()) {
    const std::uint64_t seq = slot_.seq.load(std::memory_order_relaxed);
    assert((seq & 1) == 0 && "read sections do not nest");
    seq_ = seq + 1;
    // seq_cst pairs with the writer's seq_cst publish and scan: either the writer sees this slot
    // odd, or this thread's next loads see the new pointers.
    slot_.seq.store(seq_, std::memory_order_seq_cst);
}

read_section::~read_section() { slot_.seq.store(seq_ + 1, std::memory_order_release); }

bool retire_list::batch::quiescent() const noexcept {
    // acquire: a reader's end-of-section store then happens-before the free.
    return std::all_of(readers.begin(), readers.end(), [](const auto& r) {
        return r.first->seq.load(std::memory_order_acquire) != r.second;
    });
}

void retire_list::batch::free() const noexcept {
    for (const retired_block& b : blocks) {
        b.free(b.block);
    }
}

retire_list::~retire_list() {
    for (const batch& b : batches_) {
        b.free();
    }
}

void retire_list::reserve() {
    if (batches_.size() == batches_.capacity()) {
        batches_.reserve(std::max<std::size_t>(4, 2 * batches_.capacity()));
    }
}

void retire_list::retire(std::vector<retired_block> blocks) noexcept {
    // The blocks were unpublished before this scan, and both sides are seq_cst: a section that
    // opens after the scan loads the new pointers, so only the sections seen open here can hold
    // the blocks.
    batch b{std::move(blocks), {}};
    for (const reader_slot* s = reader_domain::instance().first(); s; s = s->next) {
        const std::uint64_t seq = s->seq.load(std::memory_order_seq_cst);
        if (seq & 1) {
            b.readers.emplace_back(s, seq);
        }
    }
    reclaim();
    if (b.readers.empty()) {
        b.free();
    } else {
        batches_.push_back(std::move(b));  // room made by reserve(), or this allocates
    }
}

std::size_t retire_list::reclaim() noexcept {
    std::size_t freed = 0;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < batches_.size(); ++i) {
        if (batches_[i].quiescent()) {
            batches_[i].free();
            freed += batches_[i].blocks.size();
        } else if (kept++ != i) {
            // Never self-move: a vector moved onto itself comes out empty.
            batches_[kept - 1] = std::move(batches_[i]);
        }
    }
    batches_.resize(kept);
    return freed;
}

std::size_t retire_list::pending() const noexcept {
    std::size_t n = 0;
    for (const batch& b : batches_) {
        n += b.blocks.size();
    }
    return n;
}

}  // namespace parley::registry
