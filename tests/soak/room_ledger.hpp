#pragma once

#include <cstdint>
#include <vector>

namespace parley::soak {

// What one room said at each seq, as first learned by any of its well-behaved clients: the
// sender's ack ("your n-th say got seq s") or a member receiving the message. Every later
// report of the same seq must agree, so a seq delivered to two members with different content,
// or acked for one message and delivered as another, is caught. Thread: the room's own.
class room_ledger {
public:
    // Who said it: the index of a well-behaved member, or hostile for any other sender.
    static constexpr std::int32_t hostile = -1;

    // Records (sender, n) for seq; false when seq was already recorded with something else.
    bool record(std::int64_t seq, std::int32_t sender, std::uint32_t n) {
        if (seq <= 0) {
            return false;
        }
        const auto index = static_cast<std::size_t>(seq);
        if (index >= entries_.size()) {
            entries_.resize(index + 1 + entries_.size() / 2);
        }
        entry& e = entries_[index];
        if (!e.known) {
            e = {sender, n, true};
            return true;
        }
        return e.sender == sender && e.n == n;
    }

private:
    struct entry {
        std::int32_t sender = 0;
        std::uint32_t n = 0;
        bool known = false;
    };
    std::vector<entry> entries_;
};

}  // namespace parley::soak
