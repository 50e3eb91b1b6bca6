#pragma once

#include "protocol/shared_frame.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace parley::protocol {

// What an edit or a delete needs to know of an entry of a room's log, read back from its frame
// (as encode_message, encode_revised_message, encode_deleted_message or encode_edited made it).
// Edits and deletes are rare, so the frame is parsed rather than the fields kept beside it.
struct stored_event {
    std::string type;             // "message", "edited", "moderation", ...
    std::string from;             // message: the author
    std::string by;               // edited, deleted: who did it
    std::optional<std::string> text;  // message, edited: absent once deleted
    std::int64_t ts = 0;
    std::int64_t target = 0;      // edited, deleted: the seq of the message they are about
    bool deleted = false;         // message: a tombstone
    // moderation only.
    std::string action;
    std::string user;
    std::string reason;
    std::string role;
    std::optional<std::string> topic;
    std::optional<std::int64_t> until_ms;
    std::optional<std::int64_t> interval_s;
};

// nullopt when the frame does not hold a JSON object (never for frames the server made).
std::optional<stored_event> read_stored_event(const shared_frame& frame);

}  // namespace parley::protocol
