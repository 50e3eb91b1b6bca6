#pragma once

#include <optional>
#include <string>
#include <vector>

namespace parley::cluster {

// A Redis reply (RESP2), owned: read out of the connection's buffer (resp_protocol.hpp), so a
// callback may keep it after the buffer has moved on.
struct redis_reply {
    enum class kind { nil, integer, string, status, error, array };
    kind type = kind::nil;
    long long integer = 0;                // integer
    std::string text;                     // string (binary-safe), status, error
    std::vector<redis_reply> elements;    // array

    bool is_error() const { return type == kind::error; }
    bool is_nil() const { return type == kind::nil; }
    bool is_integer() const { return type == kind::integer; }
    bool is_string() const { return type == kind::string; }
    bool is_status() const { return type == kind::status; }
    bool is_array() const { return type == kind::array; }

    // A one-line rendering for logs and test failures: nil, 42, "text" (escaped), +OK, -ERR ...,
    // [a, b]. Not a wire format.
    std::string describe() const;
};

// An answer that came and is not an error.
inline bool is_ok(const std::optional<redis_reply>& reply) { return reply && !reply->is_error(); }

}  // namespace parley::cluster
