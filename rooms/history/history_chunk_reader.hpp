#pragma once

// Private to parley_history (it includes sqlite_database.hpp, and so sqlite3.h): only the
// library's own .cpp files and its tests include it.

#include "protocol/shared_frame.hpp"
#include "rooms/history/sqlite_database.hpp"

#include <cstdint>
#include <vector>

namespace parley::rooms {

// What to read back: messages with after < seq < below, not older than min_ts (Unix ms), and
// not below min_seq (the first seq retention keeps: a chunk may still hold a few below it).
struct chunk_query {
    std::int64_t room = 0;
    std::int64_t after = 0;
    std::int64_t below = 0;
    std::size_t limit = 0;
    std::int64_t min_seq = 0;
    std::int64_t min_ts = 0;
};

struct stored_message {
    std::int64_t seq;
    std::int64_t ts;
    protocol::shared_frame frame;
};

// Reads a room's messages back from the chunks table (see history_chunk), as frames ready to
// send. Each read is one or two index range scans that stop once `limit` messages are found.
// Thread: that of its connection.
class history_chunk_reader {
public:
    explicit history_chunk_reader(sqlite_connection& db);

    // Oldest first: the newest `limit` messages that match.
    std::vector<stored_message> newest(const chunk_query& q);
    // Oldest first: the oldest `limit` messages that match.
    std::vector<stored_message> oldest(const chunk_query& q);

private:
    sqlite_statement straddling_;
    sqlite_statement older_;
    sqlite_statement newer_;
};

// A stored payload back as a frame: the payload under a fresh header, as the encoder makes it.
protocol::shared_frame frame_of_payload(std::string_view payload);

}  // namespace parley::rooms
