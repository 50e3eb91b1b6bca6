#pragma once

// Private to parley_history (it includes sqlite_database.hpp, and so sqlite3.h): only the
// library's own .cpp files and its tests include it.

#include "protocol/shared_frame.hpp"
#include "rooms/history/sqlite_database.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace parley::rooms {

// A new frame for one message already in the chunks table (an edited or deleted message).
struct chunk_revision {
    std::int64_t room = 0;  // the room's row id
    std::int64_t seq = 0;
    protocol::shared_frame frame;  // a complete `message` frame, as room_log holds it
};

// Replaces stored messages in their chunks (history_chunk): the chunk holding a message is read,
// encoded again with the new payload in place of the old, and its row updated. Revisions are
// rare (an edit or a delete by hand), so each chunk is simply rewritten whole; what must hold is
// that the old payload leaves the row. That it also leaves the file's free space and the
// write-ahead log is the connection's part (secure_delete, a checkpoint: the writer's).
// Thread: that of its connection (the writer's), inside a transaction the caller holds.
class sqlite_chunk_rewriter {
public:
    // Statements on the writer's connection (the table exists: see the store's schema).
    explicit sqlite_chunk_rewriter(sqlite_connection& writer_db);

    // Puts each revision's frame in place of its message's; of two for one message the later in
    // `revisions` wins. A chunk is read and updated once however many of its messages change.
    // A message no longer in the file (deleted by retention) is skipped: nothing to replace.
    // Returns how many messages were replaced. Throws sqlite_error (the caller rolls back).
    std::size_t apply(std::vector<chunk_revision> revisions);

private:
    sqlite_statement find_;
    sqlite_statement update_;
};

// A chunk's blob with the payloads of the seqs in `payloads` replaced; every other message keeps
// its bytes, and a damaged tail (a blob cut short) is kept as it was. `replaced` is set to the
// number of messages replaced.
std::string rewrite_chunk_blob(std::string_view blob, const std::map<std::int64_t, std::string_view>& payloads,
                               std::size_t& replaced);

}  // namespace parley::rooms
