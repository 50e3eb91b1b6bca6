// Writes the seed corpus of every fuzz target: small valid inputs (and a few that each break one
// rule) from which the fuzzer mutates. The files are committed; run this after changing it:
//   cmake --build build --target parley-fuzz-seeds && build/tests/fuzz/parley-fuzz-seeds tests/fuzz/corpus

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace {

namespace fs = std::filesystem;

constexpr std::uint8_t op_continuation = 0x0;
constexpr std::uint8_t op_text = 0x1;
constexpr std::uint8_t op_binary = 0x2;
constexpr std::uint8_t op_close = 0x8;
constexpr std::uint8_t op_ping = 0x9;
constexpr std::uint8_t op_pong = 0xA;

// A client frame (masked, RFC 6455 section 5.2) in the shortest length form unless `wide`.
std::string frame(std::uint8_t opcode, std::string_view payload, bool fin = true, bool wide = false,
                  std::string_view key = "\x37\xfa\x21\x3d") {
    std::string out;
    out.push_back(static_cast<char>((fin ? 0x80 : 0x00) | opcode));
    const std::size_t n = payload.size();
    if (n < 126 && !wide) {
        out.push_back(static_cast<char>(0x80 | n));
    } else if (n <= 0xFFFF && !wide) {
        out.push_back(static_cast<char>(0x80 | 126));
        out.push_back(static_cast<char>(n >> 8));
        out.push_back(static_cast<char>(n & 0xFF));
    } else {
        out.push_back(static_cast<char>(0x80 | 127));
        for (int i = 7; i >= 0; --i) {
            out.push_back(static_cast<char>((static_cast<std::uint64_t>(n) >> (8 * i)) & 0xFF));
        }
    }
    out.append(key);
    for (std::size_t i = 0; i < n; ++i) {
        out.push_back(static_cast<char>(payload[i] ^ key[i % 4]));
    }
    return out;
}

std::string text(std::string_view payload) { return frame(op_text, payload); }

std::string close_frame(std::uint16_t code, std::string_view reason) {
    std::string payload;
    payload.push_back(static_cast<char>(code >> 8));
    payload.push_back(static_cast<char>(code & 0xFF));
    payload.append(reason);
    return frame(op_close, payload);
}

const std::string upgrade_request =
    "GET /ws HTTP/1.1\r\n"
    "Host: localhost:8080\r\n"
    "Upgrade: websocket\r\n"
    "Connection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    "Sec-WebSocket-Version: 13\r\n"
    "\r\n";

const std::string login = text(R"({"type":"login","user":"ann","id":1})");
const std::string join_lobby = text(R"({"type":"join","room":"lobby","id":"j"})");

void write(const fs::path& dir, std::string_view name, std::string_view bytes) {
    fs::create_directories(dir);
    std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
        std::fprintf(stderr, "cannot write %s\n", (dir / name).c_str());
        std::exit(1);
    }
}

void frame_parser_seeds(const fs::path& dir) {
    write(dir, "text", text("hello"));
    write(dir, "text_empty", text(""));
    write(dir, "text_utf8", text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
    write(dir, "text_16bit_length", text(std::string(300, 'a')));
    write(dir, "text_64bit_length", frame(op_text, "wide", true, true));
    write(dir, "fragments_with_ping",
          frame(op_text, "frag", false) + frame(op_ping, "p") + frame(op_continuation, "men", false) +
              frame(op_continuation, "ted"));
    write(dir, "utf8_split_across_fragments",
          frame(op_text, "\xe2\x82", false) + frame(op_continuation, "\xac\xf0\x9f", false) +
              frame(op_continuation, "\x98\x80"));
    write(dir, "ping_pong", frame(op_ping, "are you there") + frame(op_pong, "yes"));
    write(dir, "close_with_reason", text("bye") + close_frame(1000, "done"));
    write(dir, "close_empty", frame(op_close, ""));
    write(dir, "requests", login + join_lobby + text(R"({"type":"say","room":"lobby","text":"hi"})"));
    // One rule broken each.
    write(dir, "bad_unmasked", std::string("\x81\x02hi", 4));
    write(dir, "bad_binary", frame(op_binary, "\x01\x02"));
    write(dir, "bad_utf8", text("\xc3\x28"));
    write(dir, "bad_close_one_byte", frame(op_close, "\x03"));
    write(dir, "bad_close_code", close_frame(1005, ""));
    write(dir, "bad_reserved_bits", std::string("\xc1\x80\x00\x00\x00\x00", 6));
    write(dir, "bad_continuation", frame(op_continuation, "x"));
    write(dir, "bad_control_fragmented", frame(op_ping, "x", false));
    write(dir, "too_big_from_header", std::string("\x81\xff\x00\x00\x00\x00\x00\x01\x11\x70\x00\x00\x00\x00", 14));
}

void request_seeds(const fs::path& dir) {
    write(dir, "login", R"({"type":"login","user":"ann","token":"t0k","id":1})");
    write(dir, "join", R"({"type":"join","room":"lobby","after":3,"epoch":1700000000000,"id":"j1"})");
    write(dir, "leave", R"({"type":"leave","room":"lobby"})");
    write(dir, "say", R"({"type":"say","room":"lobby","text":"hello \u00e9 \ud83d\ude00 \"q\" \\ \n","id":-5})");
    write(dir, "dm", R"({"type":"dm","to":"bob","text":"psst","id":"d"})");
    write(dir, "users", R"({"type":"users"})");
    write(dir, "rooms", R"({"id":null,"type":"rooms"})");
    write(dir, "history", R"({"type":"history","room":"lobby","before":10,"limit":5})");
    write(dir, "typing", R"({"type":"typing","room":"lobby"})");
    write(dir, "dm_history", R"({"type":"dm_history","with":"bob","after":2,"limit":5,"id":4})");
    write(dir, "read_room", R"({"type":"read","room":"lobby","seq":12})");
    write(dir, "read_with", R"({"type":"read","with":"bob","seq":0,"id":"r"})");
    write(dir, "nested_and_ignored",
          "\xef\xbb\xbf {\"x\":[1,{\"a\":[true,false,null]},-0.5e3],\"type\":\"users\",\"type\":\"rooms\"}\n");
    write(dir, "escaped_keys", R"({"\u0074ype":"say","ro\u006fm":"r","text":"t"})");
    write(dir, "nul_then_anything", std::string(R"({"type":"users"})") + std::string("\0garbage", 8));
    write(dir, "bad_json", R"({"type":"say",})");
    write(dir, "unknown_type", R"({"type":"shout","id":"x"})");
    write(dir, "before_and_after", R"({"type":"history","room":"r","before":1,"after":2})");
    write(dir, "long_id", R"({"type":"users","id":1234567890123456789})");
    write(dir, "kick", R"({"type":"kick","room":"lobby","user":"bob","reason":"spam","id":1})");
    write(dir, "ban", R"({"type":"ban","room":"lobby","user":"bob","reason":"r","duration_s":3600,"id":"b"})");
    write(dir, "unban", R"({"type":"unban","room":"lobby","user":"bob"})");
    write(dir, "mute", R"({"type":"mute","room":"lobby","user":"bob","duration_s":60})");
    write(dir, "unmute", R"({"type":"unmute","room":"lobby","user":"bob","id":2})");
    write(dir, "set_role", R"({"type":"set_role","room":"lobby","user":"carol","role":"moderator","id":3})");
    write(dir, "set_topic", R"({"type":"set_topic","room":"lobby","text":"Release day"})");
    write(dir, "set_slow_mode", R"({"type":"set_slow_mode","room":"lobby","interval_s":30,"id":4})");
    write(dir, "edit", R"({"type":"edit","room":"lobby","seq":17,"text":"fixed","id":5})");
    write(dir, "delete", R"({"type":"delete","room":"lobby","seq":17,"id":6})");
}

void connection_seeds(const fs::path& dir) {
    // The first byte is the piece size the stream arrives in (0: in one piece).
    const std::string chat = upgrade_request + login + join_lobby +
                             text(R"({"type":"say","room":"lobby","text":"hi all","id":"s1"})") +
                             text(R"({"type":"typing","room":"lobby"})") +
                             text(R"({"type":"dm","to":"bob","text":"hello bob","id":2})") +
                             text(R"({"type":"history","room":"lobby","limit":2})") + text(R"({"type":"users"})") +
                             text(R"({"type":"rooms"})") + text(R"({"type":"leave","room":"lobby"})") +
                             close_frame(1000, "bye");
    write(dir, "chat", std::string(1, '\0') + chat);
    write(dir, "chat_in_pieces_of_7", std::string(1, '\7') + chat);
    write(dir, "rejoin_after_seq",
          std::string(1, '\0') + upgrade_request + login + join_lobby +
              text(R"({"type":"say","room":"lobby","text":"one"})") + text(R"({"type":"leave","room":"lobby"})") +
              text(R"({"type":"join","room":"lobby","after":0,"epoch":1700000000000})") +
              text(R"({"type":"join","room":"side"})") + text(R"({"type":"say","room":"side","text":"two"})"));
    write(dir, "fragmented_say_and_ping_byte_by_byte",
          std::string(1, '\1') + upgrade_request + login + frame(op_text, R"({"type":"join",)", false) +
              frame(op_ping, "ping") + frame(op_continuation, R"("room":"lobby"})") + frame(op_close, ""));
    write(dir, "keep_alive_then_upgrade",
          std::string(1, '\0') + "GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n" + upgrade_request + login);
    write(dir, "errors_before_login",
          std::string(1, '\0') + upgrade_request + text(R"({"type":"say","room":"lobby","text":"x"})") +
              text("not json") + text(R"({"type":"login","user":"bob"})") + text(R"({"type":"login","user":"b@d"})"));
    write(dir, "limits",
          std::string(1, '\0') + upgrade_request + login + text(R"({"type":"join","room":"crowd","id":1})") +
              text(R"({"type":"join","room":"a"})") + text(R"({"type":"join","room":"b"})") +
              text(R"({"type":"join","room":"c"})") + text(R"({"type":"join","room":"d"})") +
              text(R"({"type":"join","room":"e"})") +
              text(R"({"type":"say","room":"a","text":")" + std::string(65, 'x') + R"("})") +
              text(R"({"type":"dm","to":"dave","text":""})"));
    write(dir, "protocol_error", std::string(1, '\0') + upgrade_request + login + std::string("\x81\x02hi", 4));
    write(dir, "moderation",
          std::string(1, '\0') + upgrade_request + login + join_lobby +
              text(R"({"type":"say","room":"lobby","text":"typo","id":1})") +
              text(R"({"type":"edit","room":"lobby","seq":1,"text":"fixed","id":2})") +
              text(R"({"type":"delete","room":"lobby","seq":1,"id":3})") +
              text(R"({"type":"set_topic","room":"lobby","text":"t","id":4})") +
              text(R"({"type":"mute","room":"lobby","user":"bob","duration_s":5,"id":5})") +
              text(R"({"type":"set_role","room":"lobby","user":"bob","role":"king","id":6})"));
    write(dir, "bad_key", std::string(1, '\0') +
                              "GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              "Sec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n\r\n");
    write(dir, "old_version", std::string(1, '\0') +
                                  "GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n");
    write(dir, "foreign_origin", std::string(1, '\0') +
                                     "GET /ws HTTP/1.1\r\nHost: chat.example\r\nOrigin: https://evil.example\r\n"
                                     "Upgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n"
                                     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
}

// What a Redis server sends the cluster's connections: replies of every kind, nested stream
// entries, subscription confirmations and messages.
void redis_reply_seeds(const fs::path& dir) {
    write(dir, "simple", "+OK\r\n:7\r\n$5\r\nhello\r\n");
    write(dir, "message", "*3\r\n$7\r\nmessage\r\n$13\r\nparley:events\r\n$11\r\nM\nn1\nr\nu\n5\r\n");
    write(dir, "sharded", "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n*3\r\n$8\r\nsmessage\r\n$1\r\nc\r\n$0\r\n\r\n");
    write(dir, "nested",
          "*2\r\n*2\r\n$3\r\n1-1\r\n*4\r\n$1\r\nj\r\n$2\r\n{}\r\n$1\r\nt\r\n$1\r\n5\r\n$-1\r\n*-1\r\n-ERR no\r\n*0\r\n");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    const fs::path root = argv[1];
    frame_parser_seeds(root / "frame_parser");
    request_seeds(root / "request");
    connection_seeds(root / "connection");
    redis_reply_seeds(root / "redis_reply");
    return 0;
}
