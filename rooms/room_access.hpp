#pragma once

#include "config/settings.hpp"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace parley::rooms {

// The rooms a login token lets its user join (its `rooms` claim): exact room names, or a prefix
// ending in '*' ("team-*" matches every room starting with "team-"; "*" matches all).
class room_grant {
public:
    explicit room_grant(std::vector<std::string> patterns) : patterns_(std::move(patterns)) {}
    bool allows(std::string_view room) const;

private:
    std::vector<std::string> patterns_;
};

// Who may join which room, from one settings snapshot: rooms declared private admit only their
// listed members and users whose grant names them; a user with a grant may join only the rooms
// it names. Immutable once built, so a worker reads it without a lock; rebuilt on reload.
class room_access {
public:
    explicit room_access(const config::settings& settings);

    // grant: the session's token claim, or null when its rooms are not limited.
    bool may_join(std::string_view room, std::string_view user, const room_grant* grant) const;

    // Whether any room is private (a `rooms` listing then leaves out those the user may not join).
    bool has_private_rooms() const { return !private_members_.empty(); }

private:
    struct name_hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };
    // Private room -> its members, sorted (a join looks one up by binary search).
    std::unordered_map<std::string, std::vector<std::string>, name_hash, std::equal_to<>> private_members_;
};

}  // namespace parley::rooms
