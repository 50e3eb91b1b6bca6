#include "protocol/message_deflate.hpp"

#include "protocol/frame_encoder.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace parley::protocol {
namespace {

// What every compressed message ends with before its tail is removed (RFC 7692 section 7.2.1),
// and what the receiver appends again before inflating.
constexpr unsigned char flush_tail[4] = {0x00, 0x00, 0xff, 0xff};

// Chat messages are short, and a message compressed on its own costs a fixed 7-10 us of block
// and Huffman-tree work whatever the level; on longer ones (history pages) level 1 takes about
// half the time of level 6 for a few per cent more bytes (tests/bench/deflate_bench.cpp). A
// smaller hash table (memLevel) makes deflateReset, which clears it for every message, cheaper.
constexpr int deflate_level = 1;
constexpr int deflate_mem_level = 5;
constexpr int max_window_bits = 15;

// A thread's buffers past this are given back at the next message (the message limit may be
// tens of megabytes, and such a message is rare).
constexpr std::size_t large_buffer = 1024 * 1024;

constexpr std::uint8_t fin_text = 0x81;
constexpr std::uint8_t rsv1 = 0x40;

// One raw-DEFLATE stream of each kind per thread, made on first use.
struct deflate_stream {
    z_stream z{};
    bool ready = false;
    ~deflate_stream() {
        if (ready) {
            deflateEnd(&z);
        }
    }
    z_stream& get() {
        if (!ready) {
            if (deflateInit2(&z, deflate_level, Z_DEFLATED, -max_window_bits, deflate_mem_level,
                             Z_DEFAULT_STRATEGY) != Z_OK) {
                throw std::bad_alloc();
            }
            ready = true;
        } else {
            deflateReset(&z);
        }
        return z;
    }
};

struct inflate_stream {
    z_stream z{};
    bool ready = false;
    std::string buffer;  // the last inflated message
    ~inflate_stream() {
        if (ready) {
            inflateEnd(&z);
        }
    }
    z_stream& get() {
        if (!ready) {
            if (inflateInit2(&z, -max_window_bits) != Z_OK) {
                throw std::bad_alloc();
            }
            ready = true;
        } else {
            inflateReset(&z);
        }
        return z;
    }
};

thread_local deflate_stream deflater;
thread_local inflate_stream inflater;

}  // namespace

void deflate_message(std::string_view payload, std::string& out) {
    z_stream& z = deflater.get();
    // deflateBound is for a finished stream; a sync flush adds at most its empty stored block.
    out.resize(deflateBound(&z, static_cast<uLong>(payload.size())) + 8);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(payload.data()));
    z.avail_in = static_cast<uInt>(payload.size());
    std::size_t produced = 0;
    for (;;) {
        z.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
        z.avail_out = static_cast<uInt>(out.size() - produced);
        deflate(&z, Z_SYNC_FLUSH);
        produced = out.size() - z.avail_out;
        if (z.avail_out != 0) {
            break;  // all input taken and flushed
        }
        out.resize(out.size() * 2);
    }
    out.resize(produced);
    if (out.size() >= 4 && std::memcmp(out.data() + out.size() - 4, flush_tail, 4) == 0) {
        out.resize(out.size() - 4);
    }
}

inflate_status inflate_message(std::string_view compressed, std::size_t limit, std::string_view& out) {
    z_stream& z = inflater.get();
    std::string& buffer = inflater.buffer;
    if (buffer.size() > large_buffer) {
        std::string{}.swap(buffer);  // one large message does not keep its buffer for good
    }
    // Room for the limit and one byte more, which tells a message of exactly the limit from a
    // longer one; grown as the output needs it, not up front.
    const std::size_t cap = limit + 1;
    std::size_t produced = 0;
    const std::string_view parts[2] = {compressed, {reinterpret_cast<const char*>(flush_tail), 4}};
    for (int part = 0; part < 2; ++part) {
        const std::string_view input = parts[part];
        if (input.empty()) {
            continue;
        }
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
        z.avail_in = static_cast<uInt>(input.size());
        for (;;) {
            if (produced == buffer.size()) {
                if (buffer.size() >= cap) {
                    return inflate_status::too_large;
                }
                buffer.resize(std::min(cap, std::max<std::size_t>(4096, buffer.size() * 2)));
            }
            z.next_out = reinterpret_cast<Bytef*>(buffer.data() + produced);
            z.avail_out = static_cast<uInt>(buffer.size() - produced);
            const int rc = inflate(&z, Z_SYNC_FLUSH);
            produced = buffer.size() - z.avail_out;
            if (produced > limit) {
                return inflate_status::too_large;
            }
            if (rc == Z_STREAM_END) {
                // The sender set BFINAL: the message ends here, and nothing but the tail added
                // here may follow.
                if (part == 0 && z.avail_in != 0) {
                    return inflate_status::corrupt;
                }
                out = std::string_view(buffer.data(), produced);
                return inflate_status::ok;
            }
            if (rc == Z_BUF_ERROR && z.avail_in == 0) {
                break;  // no progress without more input: zlib holds nothing back
            }
            if (rc != Z_OK && !(rc == Z_BUF_ERROR && z.avail_out == 0)) {
                return inflate_status::corrupt;  // bad data, or no progress with room and input
            }
            if (z.avail_in == 0 && z.avail_out != 0) {
                break;  // this part is used up and zlib holds no output back
            }
        }
    }
    out = std::string_view(buffer.data(), produced);
    return inflate_status::ok;
}

shared_frame frame_for_deflate(const shared_frame& plain, std::size_t min_payload, std::uint8_t window_bits) {
    const std::string_view bytes = plain.view();
    if (bytes.size() < 2 || static_cast<std::uint8_t>(bytes[0]) != fin_text) {
        return plain;  // control frames are never compressed
    }
    const std::string_view payload = frame_payload(bytes);
    if (payload.size() < min_payload) {
        return plain;
    }
    if (window_bits < max_window_bits && payload.size() > (std::size_t{1} << window_bits)) {
        return plain;
    }
    if (plain.has_twin()) {
        return plain.twin();
    }
    thread_local std::string compressed;
    deflate_message(payload, compressed);
    if (compressed.size() >= payload.size()) {
        return plain.attach_twin({});
    }
    const std::size_t header = frame_header_size(compressed.size());
    shared_frame twin = shared_frame::allocate(header + compressed.size());
    write_frame_header(twin.fill(), opcode::text, compressed.size());
    twin.fill()[0] = static_cast<char>(static_cast<std::uint8_t>(twin.fill()[0]) | rsv1);
    std::memcpy(twin.fill() + header, compressed.data(), compressed.size());
    if (compressed.capacity() > large_buffer) {
        std::string{}.swap(compressed);  // one large message does not keep its buffer
    }
    return plain.attach_twin(std::move(twin));
}

}  // namespace parley::protocol
