#pragma once

#include "protocol/close_code.hpp"
#include "protocol/utf8.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace parley::protocol {

// What the parser hands to its owner. Every view points either into the buffer passed to
// feed() (already unmasked in place) or into the parser's own assembly buffer; it is valid
// only during the callback.
class frame_sink {
public:
    virtual ~frame_sink() = default;
    // A complete text message (one frame, or reassembled fragments), valid UTF-8.
    virtual void on_text(std::string_view message) = 0;
    virtual void on_ping(std::string_view payload) = 0;
    virtual void on_pong(std::string_view payload) = 0;
    // The peer's close frame. code is 1005 (no status) when the frame had no payload.
    virtual void on_close(std::uint16_t code, std::string_view reason) = 0;
};

// The outcome of feed(): ok, or the close code and reason the server must send before closing.
struct parse_result {
    bool ok = true;
    close_code code = close_code::normal;
    const char* reason = "";
};

// Incremental parser for client-to-server WebSocket frames (RFC 6455 section 5), socket-free.
//
// feed() takes whatever bytes arrived (any split, down to one byte at a time), unmasks payloads
// in place, and calls the sink for each complete message or control frame. It keeps only the
// bytes of an unfinished frame between calls, so an idle connection's parser owns no heap memory.
//
// Enforced: client frames must be masked; RSV bits zero, except RSV1 on the first frame of a
// message once compressed messages are allowed (permessage-deflate, allow_compressed()); known
// opcodes only; control frames unfragmented and at most 125 bytes; no continuation without a
// start and no new data frame inside a fragmented message; close payload of 1 byte, or a close
// code that may not be sent on the wire, are errors (1002); text must be valid UTF-8, checked
// incrementally across fragments (1007); binary messages are refused (1003); a message longer
// than max_message bytes is refused from its length header before its payload is read (1009).
// A compressed message is assembled (its compressed size bounded by max_message the same way),
// then inflated by the thread's stream (message_deflate.hpp), stopping at max_message bytes: one
// that inflates to more is a decompression bomb (1009), one that is not DEFLATE data is 1007,
// and its UTF-8 is checked once inflated.
// After an error or a close frame the parser stops: further feed() calls return the same result
// and deliver nothing.
//
// Thread: owned by one connection, used from its worker thread only.
class frame_parser {
public:
    explicit frame_parser(std::size_t max_message = 64 * 1024);

    // Parses data[0..size). May modify the bytes (unmasking in place).
    parse_result feed(char* data, std::size_t size, frame_sink& sink);

    // True after a close frame was delivered: nothing more will be parsed.
    bool closed() const { return state_ == state::done; }

    void set_max_message(std::size_t max_message) { max_message_ = max_message; }

    // Accept messages compressed with permessage-deflate without context takeover (set after a
    // handshake that agreed on it, before the first feed()).
    void allow_compressed() { inflate_ = true; }

private:
    enum class state : std::uint8_t { header, payload, done, failed };
    // (layout is the implementation's business; keep it small: this lives in every connection)
    bool read_header(char*& p, char* end);
    bool check_start(std::uint8_t byte0, std::uint8_t byte1);
    bool start_frame(const unsigned char* header);
    bool read_payload(char*& p, char* end, frame_sink& sink);
    bool finish_control(std::string_view payload, frame_sink& sink);
    bool finish_compressed(std::string_view compressed, frame_sink& sink);
    void release_if_idle();
    bool fail(std::uint8_t error);  // records the error, frees memory, returns false
    parse_result result() const;

    std::string pending_;  // unfinished header bytes, control payload, or message being assembled
    std::size_t max_message_;
    std::uint64_t remaining_ = 0;  // payload bytes still to come in the current frame
    std::uint32_t mask_ = 0;       // key bytes in memory order, rotated to the next payload byte
    utf8_validator utf8_;
    std::uint8_t opcode_ = 0;       // opcode of the current frame
    std::uint8_t header_len_ = 0;   // header bytes collected so far in pending_'s tail
    std::uint8_t control_len_ = 0;  // payload size of the current control frame
    bool fin_ : 1 = false;
    bool in_message_ : 1 = false;   // a fragmented text message is being assembled
    bool inflate_ : 1 = false;      // compressed messages are allowed
    bool compressed_ : 1 = false;   // the current message is compressed
    state state_ = state::header;
    std::uint8_t error_ = 0;        // which error, once state_ is failed
};

}  // namespace parley::protocol
