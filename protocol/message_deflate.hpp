#pragma once

#include "protocol/shared_frame.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace parley::protocol {

// permessage-deflate's compression of single messages (RFC 7692 section 7.2), always without
// context takeover (deflate_offer.hpp): each message is raw DEFLATE on its own, so the streams
// belong to the thread, not to a connection. Each thread that compresses or inflates keeps one
// zlib stream of each kind (made on first use, reset per message, freed when the thread ends).

// Compresses payload as one message: raw DEFLATE, flushed to a byte boundary, without the final
// 00 00 ff ff (section 7.2.1). Replaces out's contents.
void deflate_message(std::string_view payload, std::string& out);

enum class inflate_status : std::uint8_t {
    ok,
    too_large,  // the message inflates to more than the limit (a decompression bomb): 1009
    corrupt,    // not valid DEFLATE data: 1007
};

// Inflates one compressed message (its frames' payloads joined) into a buffer of this thread's,
// stopping as soon as the output would pass `limit` bytes. On ok, `out` views the message until
// the next inflate_message() on this thread.
inflate_status inflate_message(std::string_view compressed, std::size_t limit, std::string_view& out);

// The frame a connection that negotiated permessage-deflate sends for `plain`, with the twin of
// shared_frame made here on first use: plain itself unless plain is a text frame of at least
// `min_payload` payload bytes whose compressed form is smaller; then the compressed frame (RSV1
// set). window_bits is the connection's server_window_bits: a client that limited the window
// below 15 bits gets compressed frames only for messages that fit its window (a message
// compressed on its own never refers further back than its own length), the others as they are.
shared_frame frame_for_deflate(const shared_frame& plain, std::size_t min_payload, std::uint8_t window_bits);

}  // namespace parley::protocol
