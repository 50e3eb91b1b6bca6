#pragma once

// permessage-deflate as a peer of the daemon does it, with zlib directly and no code shared with
// the daemon: one message at a time, without context takeover (what parley asks of clients).
// The unit tests check the daemon's compression against it; the integration tests' client and
// the soak test speak it.

#include <zlib.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace parley::tests {

// client_deflate: raw DEFLATE of one message, sync-flushed, the 00 00 ff ff tail removed (RFC
// 7692 section 7.2.1). client_inflate: one compressed message inflated with a window of
// window_bits (the tail appended again); throws std::runtime_error when the data is not valid
// DEFLATE or needs a larger window.


inline std::string client_deflate(std::string_view message) {
    z_stream z{};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        throw std::runtime_error("deflateInit2 failed");
    }
    std::string out(deflateBound(&z, static_cast<uLong>(message.size())) + 16, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(message.data()));
    z.avail_in = static_cast<uInt>(message.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z, Z_SYNC_FLUSH);
    out.resize(out.size() - z.avail_out);
    deflateEnd(&z);
    if (rc != Z_OK || out.size() < 4 || out.compare(out.size() - 4, 4, std::string("\x00\x00\xff\xff", 4)) != 0) {
        throw std::runtime_error("deflate did not end with a sync flush");
    }
    out.resize(out.size() - 4);
    return out;
}

inline std::string client_inflate(std::string_view compressed, int window_bits = 15) {
    z_stream z{};
    if (inflateInit2(&z, -window_bits) != Z_OK) {
        throw std::runtime_error("inflateInit2 failed");
    }
    std::string input(compressed);
    input.append("\x00\x00\xff\xff", 4);
    z.next_in = reinterpret_cast<Bytef*>(input.data());
    z.avail_in = static_cast<uInt>(input.size());
    std::string out;
    std::size_t used = 0;
    int rc = Z_OK;
    for (;;) {
        out.resize(used + 65536);
        z.next_out = reinterpret_cast<Bytef*>(out.data() + used);
        z.avail_out = 65536;
        rc = inflate(&z, Z_SYNC_FLUSH);
        used = out.size() - z.avail_out;
        if (rc != Z_OK || (z.avail_in == 0 && z.avail_out != 0)) {
            break;
        }
    }
    out.resize(used);
    inflateEnd(&z);
    if (rc != Z_OK && rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && z.avail_in == 0)) {
        throw std::runtime_error("server sent a compressed message that does not inflate (zlib " +
                                 std::to_string(rc) + ")");
    }
    return out;
}


}  // namespace parley::tests
