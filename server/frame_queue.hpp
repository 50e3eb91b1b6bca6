#pragma once

#include "protocol/shared_frame.hpp"

#include <cstddef>
#include <vector>

namespace parley::server {

// A connection's outgoing frames: references to shared frames in order, with a byte count.
// An idle connection's queue owns no heap memory (std::deque would allocate on construction);
// storage is a vector consumed from a head index and compacted when drained.
// Thread: the owning connection's worker.
class frame_queue {
public:
    bool empty() const { return head_ == frames_.size(); }
    std::size_t size() const { return frames_.size() - head_; }
    // Bytes not yet written, counting from the front frame's write offset.
    std::size_t bytes() const { return bytes_ - front_offset_; }

    void push(protocol::shared_frame frame) {
        bytes_ += frame.size();
        frames_.push_back(std::move(frame));
    }

    // The i-th unsent frame (0 = front).
    const protocol::shared_frame& at(std::size_t i) const { return frames_[head_ + i]; }
    std::size_t front_offset() const { return front_offset_; }

    // Marks n bytes as written, releasing fully written frames; returns how many were released.
    std::size_t consume(std::size_t n) {
        std::size_t released = 0;
        while (n > 0) {
            std::size_t left = frames_[head_].size() - front_offset_;
            if (n < left) {
                front_offset_ += n;
                return released;
            }
            ++released;
            n -= left;
            bytes_ -= frames_[head_].size();
            frames_[head_] = {};
            ++head_;
            front_offset_ = 0;
        }
        if (empty()) {
            clear();
        } else if (head_ >= 64 && head_ * 2 >= frames_.size()) {
            // A connection that never fully drains must not grow the vector forever.
            frames_.erase(frames_.begin(), frames_.begin() + static_cast<std::ptrdiff_t>(head_));
            head_ = 0;
        }
        return released;
    }

    // Drops every frame not yet started; a partly written front frame stays so the stream of
    // frames on the wire remains well-formed.
    void drop_unstarted() {
        std::size_t keep = front_offset_ > 0 ? 1 : 0;
        while (size() > keep) {
            bytes_ -= frames_.back().size();
            frames_.pop_back();
        }
        if (empty()) {
            clear();
        }
    }

    void clear() {
        // Release the storage when it grew large, so a connection that once had a burst does not
        // keep the memory while idle.
        if (frames_.capacity() > 64) {
            std::vector<protocol::shared_frame>().swap(frames_);
        } else {
            frames_.clear();
        }
        head_ = 0;
        bytes_ = 0;
        front_offset_ = 0;
    }

private:
    std::vector<protocol::shared_frame> frames_;
    std::size_t head_ = 0;
    std::size_t bytes_ = 0;  // sum of sizes of frames_[head_..]
    std::size_t front_offset_ = 0;
};

}  // namespace parley::server
