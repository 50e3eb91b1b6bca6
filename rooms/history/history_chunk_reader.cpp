#include "rooms/history/history_chunk_reader.hpp"

#include "protocol/frame_encoder.hpp"
#include "rooms/history/history_chunk.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>

namespace parley::rooms {

using protocol::shared_frame;

shared_frame frame_of_payload(std::string_view payload) {
    std::size_t header = protocol::frame_header_size(payload.size());
    shared_frame frame = shared_frame::allocate(header + payload.size());
    protocol::write_frame_header(frame.fill(), protocol::opcode::text, payload.size());
    std::memcpy(frame.fill() + header, payload.data(), payload.size());
    return frame;
}

namespace {

struct found {
    std::int64_t seq;
    std::int64_t ts;
    std::string_view payload;
};

bool matches(const chunk_query& q, std::int64_t seq, std::int64_t ts) {
    return seq > q.after && seq < q.below && seq >= q.min_seq && ts >= q.min_ts;
}

// The matching messages of one chunk, oldest first (views into the statement's current row).
void matching(const chunk_query& q, std::string_view blob, std::vector<found>& out) {
    out.clear();
    history_chunk::each(blob, [&](std::int64_t seq, std::int64_t ts, std::string_view payload) {
        if (matches(q, seq, ts)) {
            out.push_back({seq, ts, payload});
        }
        return seq < q.below;
    });
}

}  // namespace

history_chunk_reader::history_chunk_reader(sqlite_connection& db)
    : straddling_(db.prepare("SELECT data FROM chunks WHERE room_id = ?1 AND last_seq >= ?2 "
                             "ORDER BY last_seq LIMIT 1")),
      older_(db.prepare("SELECT data, last_seq, last_ts FROM chunks WHERE room_id = ?1 AND last_seq < ?2 "
                        "ORDER BY last_seq DESC")),
      newer_(db.prepare("SELECT data FROM chunks WHERE room_id = ?1 AND last_seq > ?2 ORDER BY last_seq")) {}

std::vector<stored_message> history_chunk_reader::newest(const chunk_query& q) {
    // Collected newest first, reversed at the end.
    std::vector<stored_message> out;
    std::vector<found> in_chunk;
    auto take = [&] {
        for (auto it = in_chunk.rbegin(); it != in_chunk.rend() && out.size() < q.limit; ++it) {
            out.push_back({it->seq, it->ts, frame_of_payload(it->payload)});
        }
    };
    if (q.limit == 0) {
        return out;
    }
    if (q.below != std::numeric_limits<std::int64_t>::max()) {
        // The chunk holding below itself may start before it.
        straddling_.bind(1, q.room).bind(2, q.below);
        if (straddling_.step()) {
            matching(q, straddling_.blob(0), in_chunk);
            take();
        }
        straddling_.reset();
    }
    older_.bind(1, q.room).bind(2, q.below);
    while (out.size() < q.limit && older_.step()) {
        if (older_.integer(1) <= q.after || older_.integer(1) < q.min_seq || older_.integer(2) < q.min_ts) {
            break;  // this chunk and every older one are outside the range
        }
        matching(q, older_.blob(0), in_chunk);
        take();
    }
    older_.reset();
    std::reverse(out.begin(), out.end());
    return out;
}

std::vector<stored_message> history_chunk_reader::oldest(const chunk_query& q) {
    std::vector<stored_message> out;
    if (q.limit == 0) {
        return out;
    }
    newer_.bind(1, q.room).bind(2, q.after);
    bool done = false;
    while (!done && newer_.step()) {
        history_chunk::each(newer_.blob(0), [&](std::int64_t seq, std::int64_t ts, std::string_view payload) {
            if (seq >= q.below) {
                done = true;
                return false;
            }
            if (matches(q, seq, ts)) {
                out.push_back({seq, ts, frame_of_payload(payload)});
                if (out.size() == q.limit) {
                    done = true;
                    return false;
                }
            }
            return true;
        });
    }
    newer_.reset();
    return out;
}

}  // namespace parley::rooms
