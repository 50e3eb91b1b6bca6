#pragma once

#include "registry/session_handle.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::registry {

// The online users: name -> the sessions that hold it, sharded by the name's hash and
// read-mostly. A name is usually held by one session; where a deployment lets one user be
// logged in from several places (tabs, devices), each session is an entry of its own, so a
// lookup still reads one bucket and a login or logout still copies only that bucket.
//
// Thread safety: every method may be called from any thread at once.
// - lookup() never takes a global lock and never waits for another lookup.
// - try_register() is one atomic check-and-insert: of concurrent callers for one name exactly
//   as many win as the name has room for (one, unless max_sessions says more). Writes to one shard are serialized; writes to different shards do not contend.
// - Storage a write replaces is freed by a later write to the same shard (or the destructor) once
//   no lookup can still be reading it; lookups never wait for that.
// - The destructor must not run while another thread is still calling into the registry.
class user_registry {
public:
    explicit user_registry(std::size_t shard_count = 64);
    ~user_registry();
    user_registry(const user_registry&) = delete;
    user_registry& operator=(const user_registry&) = delete;

    enum class outcome { registered, name_taken, session_limit, invalid_name };

    // Inserts name -> handle unless max_sessions sessions hold the name already. With
    // max_sessions 1 a held name is `name_taken`; above 1 a full one is `session_limit`.
    // Names are 1 to 32 bytes; an empty or longer name is `invalid_name`.
    outcome try_register(std::string_view name, session_handle handle, std::size_t max_sessions);

    // Removes this handle's hold on name (a stale logout never evicts another session).
    bool unregister(std::string_view name, session_handle handle);

    // One session holding name, if any.
    std::optional<session_handle> lookup(std::string_view name) const;

    // Every session holding name, appended to out (in no particular order); returns how many.
    std::size_t lookup_all(std::string_view name, std::vector<session_handle>& out) const;

    // All online names, sorted, each once however many sessions hold it.
    std::vector<std::string> names() const;

    // Online names (users), and the sessions holding them.
    std::size_t size() const;
    std::size_t session_count() const;

private:
    struct shard;
    shard& shard_for(std::uint64_t hash) const;
    std::size_t shard_count_;
    shard* shards_;
};

}  // namespace parley::registry
