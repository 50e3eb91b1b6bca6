#include "rooms/room_moderation.hpp"

#include <algorithm>
#include <iterator>

namespace parley::rooms {

std::string_view role_name(room_role role) {
    switch (role) {
    case room_role::member: return "member";
    case room_role::moderator: return "moderator";
    case room_role::owner: return "owner";
    }
    return "member";
}

std::optional<room_role> parse_role(std::string_view name) {
    for (room_role role : {room_role::member, room_role::moderator, room_role::owner}) {
        if (role_name(role) == name) {
            return role;
        }
    }
    return std::nullopt;
}

namespace {

room_role role_in(const room_moderation::role_map& roles, std::string_view user) {
    auto it = roles.find(user);
    return it == roles.end() ? room_role::member : it->second;
}

}  // namespace

room_role room_moderation::role_of(std::string_view user) const {
    return std::max({role_in(roles_, user), role_in(configured_, user), role_in(claimed_, user)});
}

room_moderation::role_map room_moderation::roles() const {
    role_map all = roles_;
    for (const role_map* more : {&configured_, &claimed_}) {
        for (const auto& [user, role] : *more) {
            room_role& held = all[user];
            held = std::max(held, role);
        }
    }
    return all;
}

void room_moderation::claim_role(std::string_view user, room_role role) {
    if (role == room_role::member) {
        return;
    }
    room_role& held = claimed_[std::string(user)];
    held = std::max(held, role);
}

bool room_moderation::set_role(std::string_view user, room_role role) {
    auto it = roles_.find(user);
    if (role_of(user) == room_role::owner && role != room_role::owner) {
        // Whoever else owns the room, from any source, keeps it owned.
        const role_map all = roles();
        const auto owners = std::count_if(all.begin(), all.end(),
                                          [](const auto& entry) { return entry.second == room_role::owner; });
        // The user stays an owner anyway when the configuration or a token makes it one.
        const bool stays = std::max(role_in(configured_, user), role_in(claimed_, user)) == room_role::owner;
        if (owners == 1 && !stays) {
            return false;
        }
    }
    if (role == room_role::member) {
        if (it != roles_.end()) {
            roles_.erase(it);
        }
    } else if (it != roles_.end()) {
        it->second = role;
    } else {
        roles_.emplace(std::string(user), role);
    }
    return true;
}

bool room_moderation::allows(std::string_view actor, moderation_action action, std::string_view target) const {
    const room_role by = role_of(actor);
    if (by == room_role::member) {
        return false;
    }
    switch (action) {
    case moderation_action::set_topic:
    case moderation_action::set_slow_mode:
        return true;
    case moderation_action::set_role:
        return by == room_role::owner;
    case moderation_action::kick:
    case moderation_action::ban:
    case moderation_action::mute:
    case moderation_action::unban:
    case moderation_action::unmute: {
        const room_role on = role_of(target);
        // Above the target: an owner over moderators and members, a moderator over members.
        return by > on;
    }
    }
    return false;
}

bool room_moderation::has_timed() const {
    auto timed = [](const auto& entry) { return entry.second.until_ms != 0; };
    return std::any_of(bans_.begin(), bans_.end(), timed) || std::any_of(mutes_.begin(), mutes_.end(), timed);
}

bool room_moderation::unban(std::string_view user) {
    auto it = bans_.find(user);
    if (it == bans_.end()) {
        return false;
    }
    bans_.erase(it);
    return true;
}

const sanction* room_moderation::ban_of(std::string_view user, std::int64_t now_ms) const {
    auto it = bans_.find(user);
    return it != bans_.end() && it->second.active_at(now_ms) ? &it->second : nullptr;
}

bool room_moderation::unmute(std::string_view user) {
    auto it = mutes_.find(user);
    if (it == mutes_.end()) {
        return false;
    }
    mutes_.erase(it);
    return true;
}

const sanction* room_moderation::mute_of(std::string_view user, std::int64_t now_ms) const {
    auto it = mutes_.find(user);
    return it != mutes_.end() && it->second.active_at(now_ms) ? &it->second : nullptr;
}

bool room_moderation::take_say_turn(std::string_view user, std::int64_t now_ms) {
    if (slow_mode_s_ <= 0 || role_of(user) != room_role::member) {
        return true;
    }
    auto it = last_say_ms_.find(user);
    if (it != last_say_ms_.end() && now_ms - it->second < slow_mode_s_ * 1000) {
        return false;
    }
    if (it != last_say_ms_.end()) {
        it->second = now_ms;
    } else {
        last_say_ms_.emplace(std::string(user), now_ms);
    }
    return true;
}

room_moderation::ended room_moderation::prune(std::int64_t now_ms) {
    ended gone;
    auto drop_expired = [now_ms](std::map<std::string, sanction, std::less<>>& sanctions,
                                 std::vector<std::string>& users) {
        for (auto it = sanctions.begin(); it != sanctions.end();) {
            if (!it->second.active_at(now_ms)) {
                users.push_back(it->first);
                it = sanctions.erase(it);
            } else {
                ++it;
            }
        }
    };
    drop_expired(bans_, gone.bans);
    drop_expired(mutes_, gone.mutes);
    // Entries older than the interval no longer slow anyone: what slow mode keeps stays within
    // the users who said something in the last interval.
    const std::int64_t window_ms = std::max<std::int64_t>(slow_mode_s_, 0) * 1000;
    for (auto it = last_say_ms_.begin(); it != last_say_ms_.end();) {
        it = now_ms - it->second >= window_ms ? last_say_ms_.erase(it) : std::next(it);
    }
    return gone;
}

}  // namespace parley::rooms
