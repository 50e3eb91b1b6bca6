#include "rooms/history/sqlite_chunk_rewrite.hpp"

#include "protocol/frame_encoder.hpp"
#include "rooms/history/history_chunk.hpp"

#include <algorithm>
#include <utility>

namespace parley::rooms {

std::string rewrite_chunk_blob(std::string_view blob, const std::map<std::int64_t, std::string_view>& payloads,
                               std::size_t& replaced) {
    replaced = 0;
    history_chunk chunk;
    std::size_t consumed = 0;
    history_chunk::each(blob, [&](std::int64_t seq, std::int64_t ts, std::string_view payload) {
        consumed += history_chunk::header_bytes + payload.size();
        if (auto it = payloads.find(seq); it != payloads.end()) {
            chunk.add(seq, ts, it->second);
            ++replaced;
        } else {
            chunk.add(seq, ts, payload);
        }
        return true;
    });
    std::string out(chunk.bytes());
    // Whatever follows the last whole message stays: reads stop there as before, and a message
    // this could not parse is not this rewrite's to drop.
    out.append(blob.substr(consumed));
    return out;
}

sqlite_chunk_rewriter::sqlite_chunk_rewriter(sqlite_connection& writer_db)
    // The chunk that holds seq, if any: the first whose last_seq reaches it (the index's order),
    // provided its first_seq is not above it (seqs of a room's chunks never overlap).
    : find_(writer_db.prepare("SELECT id, first_seq, last_seq, data FROM chunks WHERE room_id = ?1 AND last_seq >= ?2 "
                              "ORDER BY last_seq LIMIT 1")),
      update_(writer_db.prepare("UPDATE chunks SET data = ?2 WHERE id = ?1")) {}

std::size_t sqlite_chunk_rewriter::apply(std::vector<chunk_revision> revisions) {
    // By room and seq; a stable sort keeps two revisions of one message in the order they came.
    std::stable_sort(revisions.begin(), revisions.end(), [](const chunk_revision& a, const chunk_revision& b) {
        return a.room != b.room ? a.room < b.room : a.seq < b.seq;
    });
    std::size_t replaced_total = 0;
    std::map<std::int64_t, std::string_view> payloads;  // views into the revisions' frames
    std::size_t i = 0;
    while (i < revisions.size()) {
        const std::int64_t room = revisions[i].room;
        find_.bind(1, room).bind(2, revisions[i].seq);
        if (!find_.step() || find_.integer(1) > revisions[i].seq) {
            find_.reset();
            ++i;  // not in the file (any more): retention took it, nothing to replace
            continue;
        }
        const std::int64_t id = find_.integer(0);
        const std::int64_t last = find_.integer(2);
        // Every revision of this chunk at once; assigning in order lets the later one win.
        payloads.clear();
        for (; i < revisions.size() && revisions[i].room == room && revisions[i].seq <= last; ++i) {
            payloads[revisions[i].seq] = protocol::frame_payload(revisions[i].frame.view());
        }
        std::size_t replaced = 0;
        std::string blob = rewrite_chunk_blob(find_.blob(3), payloads, replaced);
        find_.reset();  // the row's blob is copied: the statement may let it go
        if (replaced > 0) {
            update_.bind(1, id).bind_blob(2, blob).run();
            replaced_total += replaced;
        }
    }
    return replaced_total;
}

}  // namespace parley::rooms
