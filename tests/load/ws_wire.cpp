#include "ws_wire.hpp"

#include <boost/beast/websocket/detail/hybi13.hpp>

#include <cctype>
#include <cstring>

namespace parley::load {

void append_masked_frame(std::string& out, ws_op op, std::string_view payload, fast_rng& rng) {
    const std::size_t n = payload.size();
    char header[14];
    std::size_t h = 0;
    header[h++] = static_cast<char>(0x80 | static_cast<std::uint8_t>(op));
    if (n < 126) {
        header[h++] = static_cast<char>(0x80 | n);
    } else if (n < 65536) {
        header[h++] = static_cast<char>(0x80 | 126);
        header[h++] = static_cast<char>(n >> 8);
        header[h++] = static_cast<char>(n & 0xff);
    } else {
        header[h++] = static_cast<char>(0x80 | 127);
        for (int i = 7; i >= 0; --i) {
            header[h++] = static_cast<char>((static_cast<std::uint64_t>(n) >> (8 * i)) & 0xff);
        }
    }
    const auto mask = static_cast<std::uint32_t>(rng.next());
    std::memcpy(header + h, &mask, 4);
    unsigned char key[8];
    std::memcpy(key, &mask, 4);
    std::memcpy(key + 4, &mask, 4);
    h += 4;

    const std::size_t start = out.size();
    out.resize(start + h + n);
    char* dst = out.data() + start;
    std::memcpy(dst, header, h);
    dst += h;
    std::memcpy(dst, payload.data(), n);
    // XOR eight bytes at a time; the pattern repeats every four bytes so an 8-byte key lines up.
    std::uint64_t key64;
    std::memcpy(&key64, key, 8);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, dst + i, 8);
        w ^= key64;
        std::memcpy(dst + i, &w, 8);
    }
    for (; i < n; ++i) {
        dst[i] = static_cast<char>(dst[i] ^ static_cast<char>(key[i & 3]));
    }
}

std::size_t frame_need(const char* data, std::size_t size, frame_header& h) {
    if (size < 2) {
        return 2;
    }
    const auto b0 = static_cast<std::uint8_t>(data[0]);
    const auto b1 = static_cast<std::uint8_t>(data[1]);
    std::size_t header = 2;
    const unsigned len7 = b1 & 0x7f;
    if (len7 == 126) {
        header += 2;
    } else if (len7 == 127) {
        header += 8;
    }
    const bool masked = (b1 & 0x80) != 0;
    if (masked) {
        header += 4;
    }
    if (size < header) {
        return header;
    }
    std::uint64_t len = len7;
    if (len7 == 126) {
        len = (static_cast<std::uint64_t>(static_cast<std::uint8_t>(data[2])) << 8) | static_cast<std::uint8_t>(data[3]);
    } else if (len7 == 127) {
        len = 0;
        for (int i = 0; i < 8; ++i) {
            len = (len << 8) | static_cast<std::uint8_t>(data[2 + i]);
        }
    }
    h.header_size = header;
    h.payload_size = len;
    h.opcode = b0 & 0x0f;
    h.fin = (b0 & 0x80) != 0;
    h.rsv1 = (b0 & 0x40) != 0;
    h.masked = masked;
    return header + static_cast<std::size_t>(len);
}

std::string make_ws_key(fast_rng& rng) {
    static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned char raw[18] = {};
    const std::uint64_t a = rng.next();
    const std::uint64_t b = rng.next();
    std::memcpy(raw, &a, 8);
    std::memcpy(raw + 8, &b, 8);
    std::string key;
    key.reserve(24);
    for (int i = 0; i < 18; i += 3) {
        const std::uint32_t v = (std::uint32_t{raw[i]} << 16) | (std::uint32_t{raw[i + 1]} << 8) | raw[i + 2];
        key.push_back(alphabet[(v >> 18) & 63]);
        key.push_back(alphabet[(v >> 12) & 63]);
        key.push_back(alphabet[(v >> 6) & 63]);
        key.push_back(alphabet[v & 63]);
    }
    // 16 bytes encode to 22 characters plus "==".
    key.resize(22);
    key += "==";
    return key;
}

std::string expected_accept(std::string_view key) {
    // An independent implementation (Beast's) of the server's computation, so the check is real.
    boost::beast::websocket::detail::sec_ws_accept_type accept;
    boost::beast::websocket::detail::make_sec_ws_accept(accept, boost::beast::string_view(key.data(), key.size()));
    return std::string(accept.data(), accept.size());
}

std::string upgrade_request(std::string_view host, std::uint16_t port, std::string_view key, bool deflate) {
    std::string r;
    r.reserve(160);
    r += "GET /ws HTTP/1.1\r\nHost: ";
    r += host;
    r += ':';
    append_uint(r, port);
    r += "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ";
    r += key;
    r += "\r\nSec-WebSocket-Version: 13\r\n";
    if (deflate) {
        r += "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n";
    }
    r += "\r\n";
    return r;
}

namespace {

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
            return false;
        }
    }
    return true;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return s;
}

}  // namespace

bool check_upgrade_response(std::string_view head, std::string_view accept, const char*& reason) {
    std::size_t eol = head.find("\r\n");
    if (eol == std::string_view::npos) {
        reason = "no status line";
        return false;
    }
    const std::string_view status = head.substr(0, eol);
    if (status.substr(0, 9) != "HTTP/1.1 " || status.substr(9, 3) != "101") {
        reason = "status is not 101";
        return false;
    }
    bool upgrade_ok = false;
    bool accept_ok = false;
    std::size_t pos = eol + 2;
    // Bounded by the head's length: each step moves past one line.
    while (pos < head.size()) {
        eol = head.find("\r\n", pos);
        if (eol == std::string_view::npos) {
            eol = head.size();
        }
        const std::string_view line = head.substr(pos, eol - pos);
        pos = eol + 2;
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) {
            continue;
        }
        const std::string_view name = trim(line.substr(0, colon));
        const std::string_view value = trim(line.substr(colon + 1));
        if (iequals(name, "upgrade")) {
            upgrade_ok = iequals(value, "websocket");
        } else if (iequals(name, "sec-websocket-accept")) {
            accept_ok = value == accept;
        }
    }
    if (!upgrade_ok) {
        reason = "missing Upgrade: websocket";
        return false;
    }
    if (!accept_ok) {
        reason = "wrong or missing Sec-WebSocket-Accept";
        return false;
    }
    return true;
}

}  // namespace parley::load
