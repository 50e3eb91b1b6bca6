#pragma once

#include <atomic>
#include <cstddef>
#include <cstring>
#include <new>
#include <string_view>
#include <utility>

namespace parley::protocol {

// An immutable, reference-counted byte buffer holding one complete server frame (header and
// payload). A room encodes a broadcast into one shared_frame and every member's write queue
// holds a reference to the same bytes; nobody ever copies them.
//
// One allocation holds the count, the size and the bytes. Copying is an atomic increment, so a
// frame may be handed between worker threads; the bytes never change after make().
//
// A frame may also carry one twin: the same message as sent to connections that negotiated
// permessage-deflate (message_deflate.hpp). The first such connection to send the frame makes it
// and attaches it here; every later one, on any worker, sends the same twin. Attaching is a
// compare-and-swap of a pointer that starts null, so two workers racing both hold a valid twin
// and one of them is kept.
class shared_frame {
public:
    shared_frame() = default;
    shared_frame(const shared_frame& other) noexcept : block_(other.block_) { retain(); }
    shared_frame(shared_frame&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
    shared_frame& operator=(shared_frame other) noexcept {
        std::swap(block_, other.block_);
        return *this;
    }
    ~shared_frame() { release(); }

    // Copies bytes into a new frame.
    static shared_frame copy_of(std::string_view bytes) {
        shared_frame f = allocate(bytes.size());
        if (!bytes.empty()) {
            std::memcpy(f.block_->data(), bytes.data(), bytes.size());
        }
        return f;
    }

    // A frame of size bytes whose contents the caller fills once through fill() before sharing.
    static shared_frame allocate(std::size_t size) {
        void* raw = ::operator new(sizeof(block) + size);
        shared_frame f;
        f.block_ = new (raw) block{{1}, size, {nullptr}};
        return f;
    }
    char* fill() { return block_->data(); }

    const char* data() const { return block_ ? block_->data() : nullptr; }
    std::size_t size() const { return block_ ? block_->size : 0; }
    std::string_view view() const { return {data(), size()}; }
    explicit operator bool() const { return block_ != nullptr; }
    // Identity, for tests that prove a broadcast was encoded once.
    const void* identity() const { return block_; }
    long use_count() const { return block_ ? block_->refs.load(std::memory_order_relaxed) : 0; }

    // The twin attached so far: not attached yet (has_twin() false), the frame itself (a
    // message not worth compressing is sent as it is), or another frame.
    bool has_twin() const { return block_ && block_->twin.load(std::memory_order_acquire) != nullptr; }
    shared_frame twin() const {
        block* t = block_ ? block_->twin.load(std::memory_order_acquire) : nullptr;
        shared_frame f;
        f.block_ = t;
        f.retain();
        return f;
    }
    // Attaches `twin` unless one is attached already, and returns the twin in force. An empty
    // `twin` (or this frame itself) marks the frame as its own twin. Thread: any, also on a frame
    // already shared.
    shared_frame attach_twin(shared_frame twin) const {
        if (!block_) {
            return twin;
        }
        block* expected = nullptr;
        block* offered = twin.block_ ? twin.block_ : block_;
        if (block_->twin.compare_exchange_strong(expected, offered, std::memory_order_acq_rel) &&
            offered != block_) {
            twin.block_ = nullptr;  // its reference now belongs to this frame's block
        }
        return this->twin();
    }

private:
    struct block {
        std::atomic<long> refs;
        std::size_t size;
        // The twin: null, this block (send as is), or another block this one holds a reference to.
        std::atomic<block*> twin{nullptr};
        char* data() { return reinterpret_cast<char*>(this + 1); }
    };
    void retain() {
        if (block_) {
            block_->refs.fetch_add(1, std::memory_order_relaxed);
        }
    }
    void release() {
        if (block_ && block_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            block* t = block_->twin.load(std::memory_order_acquire);
            if (t != nullptr && t != block_) {
                shared_frame owned;
                owned.block_ = t;  // released by owned's destructor
            }
            block_->~block();
            ::operator delete(block_);
        }
    }
    block* block_ = nullptr;
};

}  // namespace parley::protocol
