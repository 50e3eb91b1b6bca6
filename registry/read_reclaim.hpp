#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace parley::registry {

namespace detail {
struct reader_slot;
}

// Deferred freeing for structures that readers walk without a lock. Writers replace immutable
// blocks by publishing a pointer to a new block; the block they replaced is retired, and freed
// only once no reader that might have loaded a pointer to it is still reading.
//
// Readers: any thread, any number at once. A reader opens a read_section, loads the published
// pointers with memory_order_seq_cst, uses what they point to, and closes the section. Opening
// and closing write only the reader thread's own slot (one cache line): readers never wait, never
// take a lock (except once, on a thread's first section ever, to add its slot to the process-wide
// list), and share nothing that is written with other readers. Sections do not nest.
//
// Writers: a retire_list belongs to whatever serializes the writers of one structure (a shard's
// mutex, say); its methods must not run on two threads at once. A writer
//   1. calls reserve() (the one step that may throw, so nothing is unpublished half way),
//   2. publishes the replacement with a seq_cst store, so the old block is unreachable for any
//      section that opens from then on,
//   3. calls retire() with the blocks it just unpublished.
// retire() notes which read sections are open at that moment; only those can hold the blocks.
// The blocks are freed, each by its own free function, on the first reclaim() (or retire(), or
// the destructor) after each of those sections has closed: nothing is freed while a reader that
// could see it is still inside its section, and every retired block is freed eventually, at the
// latest by the destructor. Freeing runs on the writer's thread, never on a reader's.
//
// The slots of reader threads live for the whole process (a thread's slot is handed to a later
// thread when it exits), so a read section may open even while static objects are destroyed.

// Opens a read section on this thread for its lifetime. Cheap: two stores to the thread's own
// slot (the first one seq_cst) and one thread-local load.
class read_section {
public:
    read_section();
    ~read_section();
    read_section(const read_section&) = delete;
    read_section& operator=(const read_section&) = delete;

private:
    detail::reader_slot& slot_;
    std::uint64_t seq_;
};

// One unpublished block and how to free it.
struct retired_block {
    const void* block = nullptr;
    void (*free)(const void*) noexcept = nullptr;
};

class retire_list {
public:
    retire_list() = default;
    // Frees every block still waiting, whatever the readers: the owner is destroyed only when no
    // thread can be reading the structure any more.
    ~retire_list();
    retire_list(const retire_list&) = delete;
    retire_list& operator=(const retire_list&) = delete;

    // Makes room for one more retire() so that it need not allocate its entry. Throws bad_alloc
    // and changes nothing then; call it before unpublishing anything.
    void reserve();

    // `blocks` were just unpublished by a seq_cst store. Frees them at once when no read section
    // is open, else keeps them until the sections open now have closed. Also reclaims whatever
    // is due. noexcept: the blocks are already unreachable and must not be lost, so running out
    // of memory here (noting the open sections) ends the process.
    void retire(std::vector<retired_block> blocks) noexcept;
    void retire(retired_block block) noexcept { retire(std::vector<retired_block>{block}); }

    // Frees the blocks whose readers have all left; returns how many blocks it freed.
    std::size_t reclaim() noexcept;

    // Blocks retired and not yet freed.
    std::size_t pending() const noexcept;

private:
    // Blocks retired together, and the read sections open when they were: each reader's slot
    // with the (odd) sequence number it had then.
    struct batch {
        std::vector<retired_block> blocks;
        std::vector<std::pair<const detail::reader_slot*, std::uint64_t>> readers;
        bool quiescent() const noexcept;  // every one of those sections has closed
        void free() const noexcept;
    };
    std::vector<batch> batches_;
};

// A retired_block whose free function destroys a `T` allocated with plain `new`.
template <typename T>
retired_block retired_object(const T* object) {
    return {object, [](const void* p) noexcept { delete static_cast<const T*>(p); }};
}

}  // namespace parley::registry
