#pragma once

#include "config/settings.hpp"
#include "rooms/room_moderation.hpp"

#include <optional>
#include <utility>

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace parley::rooms {

// What a login token grants its user in rooms: the rooms it may join (its `rooms` claim; absent:
// not limited) and its roles (its `roles` claim). Rooms are named exactly, or by a prefix ending
// in '*' ("team-*" matches every room starting with "team-"; "*" matches all).
class room_grant {
public:
    using role_patterns = std::vector<std::pair<std::string, room_role>>;
    explicit room_grant(std::optional<std::vector<std::string>> patterns, role_patterns roles = {})
        : patterns_(std::move(patterns)), roles_(std::move(roles)) {}
    // Whether its `rooms` claim names room (false without one); limits_rooms: it has one.
    bool names(std::string_view room) const;
    bool limits_rooms() const { return patterns_.has_value(); }
    // The highest role a pattern matching room gives (member: none).
    room_role role_in(std::string_view room) const;

private:
    std::optional<std::vector<std::string>> patterns_;
    role_patterns roles_;
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
