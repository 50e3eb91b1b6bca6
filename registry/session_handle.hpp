#pragma once

#include <cstdint>

namespace parley::registry {

// Who holds a name: the worker that owns the connection and the connection's id on that worker.
// Small and trivially copyable so a lookup copies eight bytes, never a string.
struct session_handle {
    std::uint32_t worker = 0;
    std::uint32_t session = 0;

    friend bool operator==(const session_handle&, const session_handle&) = default;
};

}  // namespace parley::registry
