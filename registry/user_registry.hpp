#pragma once

#include "registry/session_handle.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::registry {

// The online users: name -> session_handle, sharded by the name's hash and read-mostly.
//
// Thread safety: every method may be called from any thread at once.
// - lookup() never takes a global lock and never waits for another lookup.
// - try_register() is one atomic check-and-insert: of concurrent callers for one name exactly
//   one wins. Writes to one shard are serialized; writes to different shards do not contend.
// - Storage a write replaces is freed by a later write to the same shard (or the destructor) once
//   no lookup can still be reading it; lookups never wait for that.
// - The destructor must not run while another thread is still calling into the registry.
class user_registry {
public:
    explicit user_registry(std::size_t shard_count = 64);
    ~user_registry();
    user_registry(const user_registry&) = delete;
    user_registry& operator=(const user_registry&) = delete;

    // Inserts name -> handle unless the name is held; true when this call inserted it.
    // Names are 1 to 32 bytes; an empty or longer name is never held, so it is refused (false).
    bool try_register(std::string_view name, session_handle handle);

    // Removes name if it is held by this handle (a stale logout never evicts a newer owner).
    bool unregister(std::string_view name, session_handle handle);

    std::optional<session_handle> lookup(std::string_view name) const;

    // All online names, sorted.
    std::vector<std::string> names() const;

    std::size_t size() const;

private:
    struct shard;
    shard& shard_for(std::uint64_t hash) const;
    std::size_t shard_count_;
    shard* shards_;
};

}  // namespace parley::registry
