#pragma once

#include "protocol/shared_frame.hpp"
#include "server/local_frame_pool.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace parley::server {

// A connection's outgoing frames: references to shared frames in order, with a byte count.
// The references are the worker's local_frames (see local_frame_pool.hpp): queueing and writing
// a frame counts with plain integers, not atomics.
// An idle connection's queue is one null pointer: the storage (the entry vector and its
// counters) is allocated by the first push and given back by release_if_idle(), which the
// worker's housekeeping calls, so a busy connection keeps it between writes and an idle one
// holds 8 bytes. Frames are consumed from a head index and the vector compacted when drained.
// Thread: the owning connection's worker.
class frame_queue {
public:
    frame_queue() = default;
    frame_queue(const frame_queue&) = delete;
    frame_queue& operator=(const frame_queue&) = delete;
    ~frame_queue() { clear(); }

    bool empty() const { return !store_ || store_->head == store_->frames.size(); }
    std::size_t size() const { return store_ ? store_->frames.size() - store_->head : 0; }
    // Bytes not yet written, counting from the front frame's write offset.
    std::size_t bytes() const { return store_ ? store_->bytes - store_->front_offset : 0; }

    // Queues frame, referenced through pool (the same pool for the queue's whole life).
    void push(const protocol::shared_frame& frame, local_frame_pool& pool) {
        if (!store_) {
            store_ = std::make_unique<storage>(pool);
        }
        store_->bytes += frame.size();
        store_->frames.push_back(pool.acquire(frame));
    }

    // The i-th unsent frame (0 = front); requires i < size().
    const protocol::shared_frame& at(std::size_t i) const { return store_->frames[store_->head + i]->frame; }
    std::size_t front_offset() const { return store_ ? store_->front_offset : 0; }
    // Frames the storage holds room for (0 when none is allocated): what the queue costs.
    std::size_t capacity() const { return store_ ? store_->frames.capacity() : 0; }

    // Marks n bytes as written (n <= bytes()), releasing fully written frames; returns how many
    // were released.
    std::size_t consume(std::size_t n) {
        if (n == 0) {
            return 0;
        }
        storage& s = *store_;
        std::size_t released = 0;
        while (n > 0) {
            local_frame* front = s.frames[s.head];
            std::size_t size = front->frame.size();
            std::size_t left = size - s.front_offset;
            if (n < left) {
                s.front_offset += n;
                return released;
            }
            ++released;
            n -= left;
            s.bytes -= size;
            s.pool.release(front);
            s.frames[s.head] = nullptr;
            ++s.head;
            s.front_offset = 0;
        }
        if (empty()) {
            clear();
        } else if (s.head >= 64 && s.head * 2 >= s.frames.size()) {
            // A connection that never fully drains must not grow the vector forever.
            s.frames.erase(s.frames.begin(), s.frames.begin() + static_cast<std::ptrdiff_t>(s.head));
            s.head = 0;
        }
        return released;
    }

    // Drops every frame not yet started; a partly written front frame stays so the stream of
    // frames on the wire remains well-formed.
    void drop_unstarted() {
        if (!store_) {
            return;
        }
        std::size_t keep = store_->front_offset > 0 ? 1 : 0;
        while (size() > keep) {
            local_frame* last = store_->frames.back();
            store_->bytes -= last->frame.size();
            store_->pool.release(last);
            store_->frames.pop_back();
        }
        if (empty()) {
            clear();
        }
    }

    // Frees the storage of an empty queue (see the class comment).
    void release_if_idle() {
        if (store_ && empty()) {
            store_.reset();
        }
    }

    void clear() {
        if (!store_) {
            return;
        }
        for (std::size_t i = store_->head; i < store_->frames.size(); ++i) {
            store_->pool.release(store_->frames[i]);
        }
        // Storage that grew large for a burst goes at once; small storage stays for the next
        // write and goes at the next housekeeping tick if the connection stays idle.
        if (store_->frames.capacity() > 64) {
            store_.reset();
            return;
        }
        store_->frames.clear();
        store_->head = 0;
        store_->bytes = 0;
        store_->front_offset = 0;
    }

private:
    struct storage {
        explicit storage(local_frame_pool& p) : pool(p) {}
        local_frame_pool& pool;
        std::vector<local_frame*> frames;
        std::size_t head = 0;
        std::size_t bytes = 0;  // sum of sizes of frames[head..]
        std::size_t front_offset = 0;
    };
    std::unique_ptr<storage> store_;
};

}  // namespace parley::server
