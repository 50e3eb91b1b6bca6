#pragma once

#include "protocol/error_code.hpp"
#include "protocol/shared_frame.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::protocol {

// Builders for every server message of protocol v1. Each returns a complete, unmasked WebSocket
// text frame (header and JSON payload) ready to be queued on any number of connections.
// `re` is the request's id as JSON text (empty: no "re" field).
// Thread: any; they only use a thread-local scratch buffer.

shared_frame encode_welcome(std::string_view user, std::string_view re);

// history holds message frames (as made by encode_message); their payloads are embedded as is.
// topic: the room's topic from the configuration; empty: no "topic" field.
shared_frame encode_joined(std::string_view room, std::int64_t epoch, const std::vector<std::string>& members,
                           const std::vector<shared_frame>& history, std::optional<bool> recovered,
                           std::string_view re, std::string_view topic = {});

shared_frame encode_left(std::string_view room, std::string_view re);

shared_frame encode_message(std::string_view room, std::string_view from, std::string_view text, std::int64_t seq,
                            std::int64_t ts);

// A `message` whose seq is not known yet (a cluster assigns it): the JSON text before and after
// the seq's digits, so whoever assigns the seq completes the text without encoding it again.
struct message_text_around_seq {
    std::string before;  // {"type":"message",...,"seq":
    std::string after;   // }
};
message_text_around_seq encode_message_around_seq(std::string_view room, std::string_view from,
                                                  std::string_view text, std::int64_t ts);

// A complete text frame around a server message's JSON text encoded elsewhere (another node).
shared_frame frame_of_json(std::string_view json);

shared_frame encode_dm(std::string_view from, std::string_view to, std::string_view text, std::int64_t ts);

shared_frame encode_presence(std::string_view room, std::string_view user, bool joined);

shared_frame encode_typing(std::string_view room, std::string_view user);

shared_frame encode_system(std::string_view text);

shared_frame encode_users(const std::vector<std::string>& users, std::string_view re);

shared_frame encode_rooms(const std::vector<std::pair<std::string, std::size_t>>& rooms, std::string_view re);

shared_frame encode_history(std::string_view room, const std::vector<shared_frame>& messages, std::string_view re);

// ack for a say (room and seq) or, with room empty, for a dm.
shared_frame encode_ack(std::string_view re, std::string_view room, std::int64_t seq);

shared_frame encode_error(error_code code, std::string_view message, std::string_view re);

}  // namespace parley::protocol
