// Hostile clients after the upgrade: frames that break RFC 6455, requests that are not what the
// protocol asks for, floods past the rate limit, a client that stops reading, silent clients,
// and connections reset in the middle of something.
#include "hostile_rounds.hpp"

#include <chrono>
#include <exception>
#include <thread>

namespace parley::soak {

using integration::frame_options;
using integration::json;
using integration::ws_client;
namespace opcode = integration::opcode;
using clock = std::chrono::steady_clock;

namespace {

constexpr milliseconds reply_wait{10000};

// A frame header announcing a masked text frame of `size` bytes, and the mask.
std::string masked_header(std::uint64_t size) {
    std::string header;
    header.push_back(static_cast<char>(0x80 | opcode::text));
    header.push_back(static_cast<char>(0x80 | 127));
    for (int shift = 56; shift >= 0; shift -= 8) {
        header.push_back(static_cast<char>((size >> shift) & 0xFF));
    }
    header.append("\x11\x22\x33\x44", 4);
    return header;
}

struct frame_abuse {
    const char* name;
    std::uint16_t expected;  // the close code RFC 6455 and docs/protocol.md give
    void (*send)(ws_client&, const hostile_round&);
};

const frame_abuse frame_abuses[] = {
    {"unmasked", 1002, [](ws_client& c, const hostile_round&) { c.send_frame(opcode::text, "{}", {.mask = false}); }},
    {"rsv_bit", 1002, [](ws_client& c, const hostile_round&) { c.send_frame(opcode::text, "{}", {.rsv = 4}); }},
    {"reserved_opcode", 1002, [](ws_client& c, const hostile_round&) { c.send_frame(0x3, "x"); }},
    {"orphan_continuation", 1002, [](ws_client& c, const hostile_round&) { c.send_frame(opcode::continuation, "x"); }},
    {"fragmented_ping", 1002,
     [](ws_client& c, const hostile_round&) { c.send_frame(opcode::ping, "x", {.fin = false}); }},
    {"long_ping", 1002, [](ws_client& c, const hostile_round&) { c.send_frame(opcode::ping, std::string(126, 'p')); }},
    {"text_inside_message", 1002,
     [](ws_client& c, const hostile_round&) {
         std::string frames = c.encode_frame(opcode::text, "{\"ty", {.fin = false});
         frames.append(c.encode_frame(opcode::text, "pe\"}"));
         c.send_raw(frames);
     }},
    {"one_byte_close", 1002, [](ws_client& c, const hostile_round&) { c.send_frame(opcode::close, "\x03"); }},
    {"reserved_close_code", 1002,
     [](ws_client& c, const hostile_round&) { c.send_frame(opcode::close, std::string("\x03\xED", 2)); }},  // 1005
    {"binary", 1003, [](ws_client& c, const hostile_round&) { c.send_frame(opcode::binary, "\x01\x02\x03"); }},
    {"invalid_utf8", 1007,
     [](ws_client& c, const hostile_round&) { c.send_frame(opcode::text, "{\"x\":\"\xC3\x28\"}"); }},
    {"invalid_utf8_split", 1007,
     [](ws_client& c, const hostile_round&) {
         // E2 82 starts a three-byte sequence the next fragment breaks.
         std::string frames = c.encode_frame(opcode::text, "ab\xE2\x82", {.fin = false});
         frames.append(c.encode_frame(opcode::continuation, "("));
         c.send_raw(frames);
     }},
    {"oversize_header", 1009,
     [](ws_client& c, const hostile_round& r) {
         // Only the header: the server must decide from the announced length, not wait for it.
         c.send_raw(masked_header(r.env().limits.max_message_bytes + 1));
     }},
    {"oversize_fragments", 1009,
     [](ws_client& c, const hostile_round& r) {
         const std::string piece(4096, 'a');
         std::string frames = c.encode_frame(opcode::text, piece, {.fin = false});
         for (std::size_t sent = piece.size(); sent <= r.env().limits.max_message_bytes; sent += piece.size()) {
             frames.append(c.encode_frame(opcode::continuation, piece, {.fin = false}));
         }
         c.send_raw(frames);
     }},
    {"huge_length", 1009, [](ws_client& c, const hostile_round&) { c.send_raw(masked_header(0x7FFFFFFFFFFFFFFFull)); }},
};

}  // namespace

void bad_frames(hostile_round& r) {
    ws_client c = r.rng()() % 2 == 0 ? r.upgraded() : r.logged_in();
    std::string variant;
    std::uint16_t expected = 0;
    if (r.rng()() % 8 == 0) {
        // Random bytes as frames: any close code will do, as long as the server survives.
        std::uniform_int_distribution<std::size_t> size(1, 512);
        c.send_raw(r.random_bytes(size(r.rng())));
        variant = "random";
    } else {
        std::uniform_int_distribution<std::size_t> pick(0, std::size(frame_abuses) - 1);
        const frame_abuse& abuse = frame_abuses[pick(r.rng())];
        abuse.send(c, r);
        variant = abuse.name;
        expected = abuse.expected;
    }
    const auto code = c.expect_close(reply_wait);
    r.count_close(variant, code);
    if (expected != 0 && code != expected) {
        r.count("wrong_close_code");
    }
    // A round takes a millisecond or two: unpaced, two threads made a thousand connections a
    // second and crowded out the other behaviours on a two-core machine.
    pause(milliseconds(10));
}

void bad_requests(hostile_round& r) {
    ws_client c = r.logged_in();
    // Each is answered with an error (or, for the deep array, perhaps served); none closes the
    // connection. Fewer than the rate limit's burst, so none is refused for the rate.
    std::string deep = "{\"type\":\"users\",\"x\":";
    const std::size_t depth = (r.env().limits.max_message_bytes - 64) / 2;
    deep.append(depth, '[');
    deep.append(depth, ']');
    deep.push_back('}');
    const std::string requests[] = {
        "not json at all",
        "[1,2,3]",
        "\"a string\"",
        "{\"type\":",
        "{\"type\":5}",
        "{\"type\":\"shout\"}",
        "{\"type\":\"say\",\"room\":\"soak-0\"}",
        "{\"type\":\"say\",\"room\":\"soak-0\",\"text\":\"\\ud800\"}",
        "{\"type\":\"users\",\"id\":1e400}",
        "{\"type\":\"join\",\"room\":\"" + std::string(100, 'r') + "\"}",
        "{\"type\":\"say\",\"room\":\"nowhere\",\"text\":\"hi\"}",
        deep,
    };
    for (const std::string& request : requests) {
        c.send_text(request);
    }
    for (std::size_t i = 0; i < std::size(requests); ++i) {
        auto reply = c.recv_until([](const json& m) { return m.value("type", "") != "presence"; }, reply_wait);
        if (!reply) {
            r.count("no_reply");
            return;
        }
        const std::string type = reply->value("type", "");
        r.count(type == "error" ? "error_" + reply->value("code", "") : "reply_" + type);
    }
    // Still a working connection: it answers a proper request, then closes politely.
    c.send_json({{"type", "users"}, {"id", 1}});
    auto users = c.recv_until([](const json& m) { return m.contains("re"); }, reply_wait);
    r.count(users && users->value("type", "") == "users" ? "still_usable" : "unusable");
    c.send_close(1000);
    r.count_close("goodbye", c.expect_close(reply_wait));
    // Let the bucket refill before the next round.
    pause(milliseconds(2000));
}

void flood(hostile_round& r) {
    ws_client c = r.logged_in();
    r.join_busy_room(c);
    // Far more requests than the bucket holds, without reading: the ones past the burst are
    // refused, and a run of refusals past the strike limit closes the connection with 1008.
    std::string burst;
    const int requests = r.env().limits.rate_burst * 10;
    for (int i = 0; i < requests; ++i) {
        json request;
        switch (i % 3) {
        case 0: request = {{"type", "say"}, {"room", r.env().busy_room}, {"text", "flood " + std::to_string(i)}}; break;
        case 1: request = {{"type", "typing"}, {"room", r.env().busy_room}}; break;
        default: request = {{"type", "users"}}; break;
        }
        burst.append(c.encode_frame(opcode::text, request.dump()));
    }
    try {
        c.send_raw(burst);
    } catch (const std::exception&) {
        r.count("cut_off_while_sending");
    }
    std::uint64_t refused = 0;
    const auto deadline = clock::now() + reply_wait;
    while (auto message = c.recv_json(std::chrono::duration_cast<milliseconds>(deadline - clock::now()))) {
        if (message->value("type", "") == "error" && message->value("code", "") == "rate_limited") {
            ++refused;
        }
    }
    r.count("rate_limited_replies", refused);
    r.count_close("", c.close_code() ? c.close_code() : (c.eof() ? std::optional<std::uint16_t>(1006) : std::nullopt));
    pause(milliseconds(200));
}

void slow_consumer(hostile_round& r) {
    // A small receive buffer, so our side of the connection absorbs next to nothing.
    ws_client c = r.logged_in({.receive_buffer = 4096});
    r.join_busy_room(c);
    // Ask for the room's whole history again and again and never read. On loopback the server's
    // socket buffer grows to the kernel's maximum (tcp_wmem, 4 MB here), so the replies first
    // fill that, then pile up in the server's queue for this client until it passes
    // write_queue_limit_bytes; the server then drops the queue and closes the connection, and
    // our next request meets a reset. The pace stays under the rate limit: this client is slow,
    // not a flooder.
    const auto start = clock::now();
    const auto pace = milliseconds(1000) * 11 / (10 * static_cast<int>(r.env().limits.rate_per_second));
    bool hung_up = false;
    int asked = 0;
    while (clock::now() - start < slack * 6) {
        if (!r.running()) {
            r.count("stopped_by_the_soak");  // the hostile phase ended first
            return;
        }
        try {
            c.send_json({{"type", "history"},
                         {"room", r.env().busy_room},
                         {"limit", r.env().limits.history_max_limit},
                         {"id", ++asked}});
        } catch (const std::exception&) {
            hung_up = true;
            break;
        }
        pause(asked < r.env().limits.rate_burst / 2 ? milliseconds(0) : pace);
    }
    r.count(hung_up ? "server_hung_up" : "still_open");
    r.count("history_requests", static_cast<std::uint64_t>(asked));
    // What is left: the bytes the kernel held for us, then the close frame or the reset.
    r.count_close("", c.expect_close(reply_wait));
}

void silent(hostile_round& r) {
    std::vector<ws_client> anonymous;
    for (int i = 0; i < 4; ++i) {
        anonymous.push_back(r.upgraded());
    }
    std::vector<ws_client> quiet;
    for (int i = 0; i < 2; ++i) {
        quiet.push_back(r.logged_in());
    }
    // expect_close reads frames without answering pings: the quiet ones stay silent.
    for (ws_client& c : anonymous) {
        r.count_close("never_logged_in", c.expect_close(r.env().limits.login_timeout + slack));
    }
    for (ws_client& c : quiet) {
        r.count_close("logged_in_then_silent", c.expect_close(r.env().limits.idle_timeout + slack));
    }
}

void reset_midway(hostile_round& r) {
    std::uniform_int_distribution<int> pick(0, 5);
    switch (pick(r.rng())) {
    case 0: {
        ws_client c = r.open();
        const std::string request = c.upgrade_request();
        c.send_raw(std::string_view(request).substr(0, request.size() / 2));
        c.reset_socket();
        r.count("mid_request");
        break;
    }
    case 1: {
        ws_client c = r.upgraded();
        c.reset_socket();
        r.count("after_upgrade");
        break;
    }
    case 2: {
        ws_client c = r.logged_in();
        std::string request = "{\"type\":\"users\",\"pad\":\"";
        request.append(200, 'p');
        request.append("\"}");
        const std::string frame = c.encode_frame(opcode::text, request);
        c.send_raw(std::string_view(frame).substr(0, frame.size() / 2));
        c.reset_socket();
        r.count("mid_frame");
        break;
    }
    case 3: {
        ws_client c = r.logged_in();
        c.send_frame(opcode::text, "{\"type\":\"us", {.fin = false});
        c.reset_socket();
        r.count("mid_fragmented_message");
        break;
    }
    case 4: {
        // Reset while the server is writing a lot to us: its send fails mid-reply.
        ws_client c = r.logged_in();
        r.join_busy_room(c);
        for (int i = 0; i < 3; ++i) {
            c.send_json(
                {{"type", "history"}, {"room", r.env().busy_room}, {"limit", r.env().limits.history_max_limit}});
        }
        pause(milliseconds(2));
        c.reset_socket();
        r.count("mid_reply");
        break;
    }
    default: {
        // Reset right behind a say: the room must deliver it to everyone all the same.
        ws_client c = r.logged_in();
        r.join_busy_room(c);
        c.send_json({{"type", "say"}, {"room", r.env().busy_room}, {"text", "said and gone"}});
        c.reset_socket();
        r.count("after_say");
        break;
    }
    }
    pause(milliseconds(20));
}

}  // namespace parley::soak
