#include "rooms/room_access.hpp"

#include <algorithm>

namespace parley::rooms {

bool room_grant::allows(std::string_view room) const {
    return std::any_of(patterns_.begin(), patterns_.end(), [room](const std::string& p) {
        if (!p.empty() && p.back() == '*') {
            return room.starts_with(std::string_view(p).substr(0, p.size() - 1));
        }
        return room == p;
    });
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
    if (grant != nullptr && grant->allows(room)) {
        return true;
    }
    if (auto it = private_members_.find(room); it != private_members_.end()) {
        return std::binary_search(it->second.begin(), it->second.end(), user);
    }
    // A public room: open unless the token limits this user's rooms.
    return grant == nullptr;
}

}  // namespace parley::rooms
