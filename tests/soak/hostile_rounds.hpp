#pragma once

// One round of each hostile behaviour (see hostile_behaviours() for who runs them). Each counts
// what it did and what the server answered; none of them throws on a server refusal, only on
// an unexpected failure of its own socket (counted as "exception" by the caller).

#include "hostile.hpp"

#include <chrono>
#include <thread>

namespace parley::soak {

// Bounded waits for the server's own timeouts: generous, because the machine may be busy.
inline constexpr milliseconds slack{10000};

inline void pause(milliseconds ms) { std::this_thread::sleep_for(ms); }

// Before the upgrade (hostile_http.cpp).
void connect_and_leave(hostile_round& r);     // connect, then close or reset at once
void stall_before_request(hostile_round& r);  // connect and send nothing
void stall_mid_request(hostile_round& r);     // send half a request head, then nothing
void drip_request(hostile_round& r);          // send a valid request head a byte at a time
void garbage_http(hostile_round& r);          // random bytes instead of HTTP
void bad_upgrade(hostile_round& r);           // upgrade requests the server must refuse
void per_ip_hog(hostile_round& r);            // more connections from one address than allowed

// After the upgrade (hostile_ws.cpp).
void bad_frames(hostile_round& r);    // frames that break RFC 6455: the server closes with its code
void bad_requests(hostile_round& r);  // bad JSON and bad requests: error replies, connection stays
void flood(hostile_round& r);         // requests far past the rate limit
void slow_consumer(hostile_round& r); // asks for a lot, reads nothing
void silent(hostile_round& r);        // never logs in; logs in and goes silent
void reset_midway(hostile_round& r);  // TCP reset mid-request, mid-frame, mid-reply
}  // namespace parley::soak
