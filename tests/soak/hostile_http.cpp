// Hostile clients that never become WebSockets: they leave at once, stall, drip, send garbage,
// send upgrades the server must refuse, or open more connections than their address may hold.
#include "hostile_rounds.hpp"

#include "http_response.hpp"

#include <chrono>
#include <exception>
#include <thread>

namespace parley::soak {

using integration::ws_client;
using clock = std::chrono::steady_clock;

namespace {

// Waits for the server to end each of the held connections and counts how: closed after the
// handshake timeout (the expected answer), closed before it, or still open after it and the slack.
void count_server_hangups(hostile_round& r, std::vector<ws_client>& held, clock::time_point opened) {
    const milliseconds limit = r.env().limits.handshake_timeout;
    for (ws_client& c : held) {
        const auto waited = std::chrono::duration_cast<milliseconds>(clock::now() - opened);
        const milliseconds left = limit + slack > waited ? limit + slack - waited : milliseconds(0);
        if (!c.wait_eof(left)) {
            r.count("still_open");
            continue;
        }
        const auto took = clock::now() - opened;
        // The server's deadline starts after its accept, so it cannot fire before the timeout
        // counted from our connect; a tenth of slack covers the clocks' rounding.
        r.count(took >= limit * 9 / 10 ? "closed_by_server" : "closed_early");
    }
}

// The status of an HTTP response, or a word for its absence.
std::string answer_of(ws_client& c, const std::string& raw) {
    const int status = integration::parse_http_response(raw).status;
    if (status != 0) {
        return "http_" + std::to_string(status);
    }
    return c.eof() ? "closed_without_answer" : "no_answer";
}

}  // namespace

void connect_and_leave(hostile_round& r) {
    ws_client c = r.open();
    if (r.rng()() % 2 == 0) {
        c.reset_socket();
        r.count("reset");
    } else {
        c.close_socket();
        r.count("closed");
    }
    pause(milliseconds(10));
}

void stall_before_request(hostile_round& r) {
    std::vector<ws_client> held;
    const auto opened = clock::now();
    for (int i = 0; i < 8; ++i) {
        held.push_back(r.open());
    }
    r.count("opened", held.size());
    count_server_hangups(r, held, opened);
}

void stall_mid_request(hostile_round& r) {
    std::vector<ws_client> held;
    const auto opened = clock::now();
    for (int i = 0; i < 8; ++i) {
        ws_client c = r.open();
        const std::string request = c.upgrade_request();
        // Cut anywhere before the blank line that ends the head.
        std::uniform_int_distribution<std::size_t> cut(1, request.size() - 3);
        c.send_raw(std::string_view(request).substr(0, cut(r.rng())));
        held.push_back(std::move(c));
    }
    r.count("opened", held.size());
    count_server_hangups(r, held, opened);
}

void drip_request(hostile_round& r) {
    // Slowloris: each byte keeps the connection busy, but the handshake timeout counts from the
    // connect, not from the last byte, so the server drops it all the same.
    ws_client c = r.open();
    const std::string request = c.upgrade_request();
    const auto opened = clock::now();
    const milliseconds limit = r.env().limits.handshake_timeout;
    std::size_t sent = 0;
    while (sent + 4 < request.size() && clock::now() - opened < limit + slack) {
        try {
            c.send_raw(std::string_view(request).substr(sent, 1));
        } catch (const std::exception&) {
            break;  // the server hung up: our byte met a reset
        }
        ++sent;
        if (c.wait_eof(milliseconds(100))) {
            break;
        }
    }
    std::vector<ws_client> held;
    held.push_back(std::move(c));
    r.count("opened");
    count_server_hangups(r, held, opened);
}

void garbage_http(hostile_round& r) {
    ws_client c = r.open();
    std::string bytes;
    if (r.rng()() % 2 == 0) {
        std::uniform_int_distribution<std::size_t> size(1, 2000);
        bytes = r.random_bytes(size(r.rng()));
        r.count("sent_random");
    } else {
        // A request line, then junk where the headers belong.
        bytes = "GET /ws HTTP/1.1\r\n";
        bytes.append(r.random_bytes(300));
        bytes.append("\r\n\r\n");
        r.count("sent_junk_headers");
    }
    const std::string raw = c.raw_http(bytes, milliseconds(5000));
    const std::string answer = answer_of(c, raw);
    r.count(answer);
    if (answer == "no_answer") {
        // Random bytes may look like the start of a request that never ends: then the
        // handshake timeout must close it.
        r.count(c.wait_eof(r.env().limits.handshake_timeout + slack) ? "closed_by_timeout" : "still_open");
    }
    pause(milliseconds(20));
}

void bad_upgrade(hostile_round& r) {
    struct variant {
        const char* name;
        int expected;
        std::string (*request)(ws_client&, const hostile_round&);
    };
    static const variant variants[] = {
        {"version_12", 426,
         [](ws_client& c, const hostile_round&) {
             std::string req = c.upgrade_request();
             req.replace(req.find("Version: 13"), 11, "Version: 12");
             return req;
         }},
        {"no_key", 400,
         [](ws_client&, const hostile_round&) {
             return std::string("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                                "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n");
         }},
        {"short_key", 400,
         [](ws_client&, const hostile_round&) {
             return std::string("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                "Sec-WebSocket-Key: c2hvcnQ=\r\nSec-WebSocket-Version: 13\r\n\r\n");
         }},
        {"post", 400,
         [](ws_client& c, const hostile_round&) {
             std::string req = c.upgrade_request();
             req.replace(0, 3, "POST");
             return req;
         }},
        {"http_1_0", 400,
         [](ws_client& c, const hostile_round&) {
             std::string req = c.upgrade_request();
             req.replace(req.find("HTTP/1.1"), 8, "HTTP/1.0");
             return req;
         }},
        {"huge_header", 431,
         [](ws_client& c, const hostile_round& round) {
             std::string req = c.upgrade_request();
             std::string pad = "X-Pad: ";
             pad.append(round.env().limits.max_request_header_bytes + 1000, 'a');
             pad.append("\r\n");
             req.insert(req.find("\r\n") + 2, pad);
             return req;
         }},
    };
    std::uniform_int_distribution<std::size_t> pick(0, std::size(variants) - 1);
    const variant& v = variants[pick(r.rng())];
    ws_client c = r.open();
    const std::string raw = c.raw_http(v.request(c, r), milliseconds(5000));
    const std::string answer = answer_of(c, raw);
    std::string outcome = v.name;
    outcome.push_back(' ');
    outcome.append(answer);
    r.count(outcome);
    // A different status is a wrong answer; no answer at all can be a reset that overtook it.
    if (answer.starts_with("http_") && answer != "http_" + std::to_string(v.expected)) {
        r.count("wrong_status");
    }
    pause(milliseconds(20));
}

void per_ip_hog(hostile_round& r) {
    // More connections from one address than max_connections_per_ip: the extra ones are refused
    // with 503, the admitted ones become WebSockets that never log in and are closed by the
    // login timeout.
    const std::size_t want = r.env().limits.max_connections_per_ip + 8;
    std::vector<ws_client> held;
    for (std::size_t i = 0; i < want; ++i) {
        ws_client c = r.open();
        c.send_raw(c.upgrade_request());
        held.push_back(std::move(c));
    }
    std::vector<ws_client*> upgraded;
    for (ws_client& c : held) {
        // The request went out above: this only reads the response.
        const std::string answer = answer_of(c, c.raw_http("", milliseconds(5000)));
        r.count(answer);
        if (answer == "http_101") {
            upgraded.push_back(&c);
        }
    }
    for (ws_client* c : upgraded) {
        r.count_close("upgraded", c->expect_close(r.env().limits.login_timeout + slack));
    }
}

}  // namespace parley::soak
