#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace parley::server {

// Fixed-size slots carved from 64 KiB blocks, with a free list.
//
// Why: an open connection's largest object is allocated while hundreds of handshakes are in
// flight, each with a dozen short-lived allocations (Beast's parser fields, buffers, the
// response). In the general heap the long-lived objects end up scattered between those, and the
// holes the handshakes leave behind stay resident (see docs/performance.md). Slots of one size
// in their own blocks keep the long-lived objects dense, and a slot needs no malloc header.
//
// One pool per slot size for the process, under a mutex: it is used once per connection opened
// and once per connection closed, never per message, so the lock costs nothing measurable and
// a connection may be freed by any thread (teardown frees them from the main thread). Blocks
// are kept for reuse until the process exits: the pool holds its peak, as the heap would.
template <std::size_t Size, std::size_t Align>
class slab {
public:
    static void* allocate() {
        state& s = instance();
        std::lock_guard lock(s.mutex);
        if (s.free_list == nullptr) {
            s.grow();
        }
        free_slot* slot = s.free_list;
        s.free_list = slot->next;
        return slot;
    }

    static void deallocate(void* p) noexcept {
        state& s = instance();
        std::lock_guard lock(s.mutex);
        auto* slot = static_cast<free_slot*>(p);
        slot->next = s.free_list;
        s.free_list = slot;
    }

private:
    struct free_slot {
        free_slot* next;
    };
    static constexpr std::size_t slot_align = Align < alignof(free_slot) ? alignof(free_slot) : Align;
    static constexpr std::size_t slot_size =
        ((Size < sizeof(free_slot) ? sizeof(free_slot) : Size) + slot_align - 1) / slot_align * slot_align;
    static constexpr std::size_t block_size = 64 * 1024;
    static_assert(slot_size <= block_size, "slab slots are for small objects");

    struct block_deleter {
        void operator()(std::byte* p) const noexcept { ::operator delete(p, std::align_val_t{slot_align}); }
    };

    struct state {
        std::mutex mutex;
        free_slot* free_list = nullptr;
        std::vector<std::unique_ptr<std::byte, block_deleter>> blocks;

        void grow() {
            auto* raw = static_cast<std::byte*>(::operator new(block_size, std::align_val_t{slot_align}));
            blocks.emplace_back(raw);
            // Thread the new slots onto the free list, lowest address first.
            for (std::size_t offset = block_size / slot_size * slot_size; offset >= slot_size; offset -= slot_size) {
                auto* slot = reinterpret_cast<free_slot*>(raw + offset - slot_size);
                slot->next = free_list;
                free_list = slot;
            }
        }
    };

    static state& instance() {
        static state s;
        return s;
    }
};

}  // namespace parley::server
