#pragma once

#include <zlib.h>

#include <string>
#include <string_view>

namespace parley::load {

// The generator's own permessage-deflate inflater (zlib directly, nothing shared with the
// daemon): one raw-DEFLATE stream per generator thread, reset for every message, since parleyd
// compresses each message without context takeover.
class message_inflater {
public:
    message_inflater() = default;
    message_inflater(const message_inflater&) = delete;
    message_inflater& operator=(const message_inflater&) = delete;
    ~message_inflater() {
        if (ready_) {
            inflateEnd(&z_);
        }
    }

    // Inflates one message (the 00 00 ff ff tail appended again) into out. False when the
    // data is not valid DEFLATE.
    bool inflate(std::string_view compressed, std::string& out) {
        if (!ready_) {
            if (inflateInit2(&z_, -15) != Z_OK) {
                return false;
            }
            ready_ = true;
        } else {
            inflateReset(&z_);
        }
        static const char tail[4] = {0, 0, '\xff', '\xff'};
        std::size_t used = 0;
        for (const std::string_view part : {compressed, std::string_view(tail, 4)}) {
            z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(part.data()));
            z_.avail_in = static_cast<uInt>(part.size());
            for (;;) {
                if (out.size() < used + 4096) {
                    out.resize(used + 4096 + out.size());
                }
                z_.next_out = reinterpret_cast<Bytef*>(out.data() + used);
                z_.avail_out = static_cast<uInt>(out.size() - used);
                const int rc = ::inflate(&z_, Z_SYNC_FLUSH);
                used = out.size() - z_.avail_out;
                if (rc == Z_STREAM_END) {
                    out.resize(used);
                    return true;  // a final block: nothing of the message follows
                }
                if (rc != Z_OK && !(rc == Z_BUF_ERROR && z_.avail_in == 0)) {
                    return false;
                }
                if (z_.avail_in == 0 && z_.avail_out != 0) {
                    break;  // this part is used up and nothing is held back
                }
            }
        }
        out.resize(used);
        return true;
    }

private:
    z_stream z_{};
    bool ready_ = false;
};

}  // namespace parley::load
