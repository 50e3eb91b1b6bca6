#include "rooms/room_access.hpp"

#include <algorithm>

namespace parley::rooms {

namespace {

bool matches(std::string_view pattern, std::string_view room) {
    if (!pattern.empty() && pattern.back() == '*') {
        return room.starts_with(pattern.substr(0, pattern.size() - 1));
    }
    return room == pattern;
}

}  // namespace

bool room_grant::names(std::string_view room) const {
    return patterns_ &&
           std::any_of(patterns_->begin(), patterns_->end(), [room](const std::string& p) { return matches(p, room); });
}

room_role room_grant::role_in(std::string_view room) const {
    room_role best = room_role::member;
    for (const auto& [pattern, role] : roles_) {
        if (matches(pattern, room)) {
            best = std::max(best, role);
        }
    }
    return best;
}

room_access::room_access(const config::settings& settings) {
    for (const auto& declared : settings.permanent_rooms) {
        if (declared.is_private) {
            std::vector<std::string> members = declared.members;
            std::sort(members.begin(), members.end());
            private_members_.emplace(declared.name, std::move(members));
        }
    }
}

bool room_access::may_join(std::string_view room, std::string_view user, const room_grant* grant) const {
    if (grant != nullptr && grant->names(room)) {
        return true;
    }
    if (auto it = private_members_.find(room); it != private_members_.end()) {
        return std::binary_search(it->second.begin(), it->second.end(), user);
    }
    // A public room: open unless the token limits this user's rooms.
    return grant == nullptr || !grant->limits_rooms();
}

}  // namespace parley::rooms
