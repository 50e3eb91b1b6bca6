#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace parley::rooms {

// The messages one write puts in the history file for one room, as one blob: per message its
// seq, its time (Unix ms) and its payload (the message object's JSON), oldest first.
//
// Why blobs and not a row per message: a row costs the writer about 4 us (b-tree insert,
// record building, statement step), which on the core the workers share was half of the say
// throughput of 100 rooms of 10 (performance.md, "Durable history"). One row per room per
// write spreads that over every message of the interval; what is left per message is copying
// its bytes.
//
// Layout per message: seq (8 bytes), ts (8 bytes), payload size (4 bytes), all little-endian
// as this machine stores them, then the payload.
class history_chunk {
public:
    static constexpr std::size_t header_bytes = 20;

    void add(std::int64_t seq, std::int64_t ts, std::string_view payload) {
        if (count_ == 0) {
            first_seq_ = seq;
        }
        last_seq_ = seq;
        last_ts_ = ts;
        ++count_;
        auto size = static_cast<std::uint32_t>(payload.size());
        char header[header_bytes];
        std::memcpy(header, &seq, 8);
        std::memcpy(header + 8, &ts, 8);
        std::memcpy(header + 16, &size, 4);
        bytes_.append(header, header_bytes);
        bytes_.append(payload);
    }
    void clear() {
        bytes_.clear();
        count_ = 0;
    }
    // Also gives the buffer back: an idle room's log keeps no batch-sized buffer.
    void release() {
        std::string().swap(bytes_);
        count_ = 0;
    }

    bool empty() const { return count_ == 0; }
    std::size_t count() const { return count_; }
    std::size_t size_bytes() const { return bytes_.size(); }
    std::int64_t first_seq() const { return first_seq_; }
    std::int64_t last_seq() const { return last_seq_; }
    std::int64_t last_ts() const { return last_ts_; }
    std::string_view bytes() const { return bytes_; }

    // Calls f(seq, ts, payload) for each message of a stored blob, oldest first, while f returns
    // true. Returns false when the blob is cut short (a damaged row): the messages before the
    // damage were given.
    template <typename F>
    static bool each(std::string_view blob, F&& f) {
        while (!blob.empty()) {
            if (blob.size() < header_bytes) {
                return false;
            }
            std::int64_t seq = 0;
            std::int64_t ts = 0;
            std::uint32_t size = 0;
            std::memcpy(&seq, blob.data(), 8);
            std::memcpy(&ts, blob.data() + 8, 8);
            std::memcpy(&size, blob.data() + 16, 4);
            blob.remove_prefix(header_bytes);
            if (blob.size() < size) {
                return false;
            }
            if (!f(seq, ts, blob.substr(0, size))) {
                return true;
            }
            blob.remove_prefix(size);
        }
        return true;
    }

private:
    std::string bytes_;
    std::size_t count_ = 0;
    std::int64_t first_seq_ = 0;
    std::int64_t last_seq_ = 0;
    std::int64_t last_ts_ = 0;
};

}  // namespace parley::rooms
