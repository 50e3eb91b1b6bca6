#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::rooms {

// A user's standing in one room. Ordered: a higher role may act on a lower one.
enum class room_role : unsigned char { member, moderator, owner };

std::string_view role_name(room_role role);
// nullopt for a name that is not a role.
std::optional<room_role> parse_role(std::string_view name);

// What can be done to a member of a room, or to the room, and who may do it.
enum class moderation_action : unsigned char { kick, ban, unban, mute, unmute, set_role, set_topic, set_slow_mode };

// A ban or a mute: who made it, why, and until when (0: until lifted). Times are Unix ms.
struct sanction {
    std::string by;
    std::string reason;
    std::int64_t until_ms = 0;

    bool active_at(std::int64_t now_ms) const { return until_ms == 0 || now_ms < until_ms; }
};

// One room's moderation state: roles, bans, mutes and slow mode (the topic is the room's), and the rules of who may
// change what. Pure data and rules: no locking, no storage, no clock of its own (every check is
// given the time), so the room keeps it under its lock and the stores persist what changes.
//
// Rules:
// - an owner may do everything, except kick, ban or mute another owner; an owner may change any
//   role, its own too, as long as the room keeps an owner (set_role refuses to remove the last);
// - a moderator may kick, ban, unban, mute and unmute members (not moderators or owners), and
//   set the topic and the slow mode; it never sets roles;
// - a member may do none of these.
// Timed bans and mutes end by themselves: an expired one counts as absent, and prune() drops it.
class room_moderation {
public:
    room_role role_of(std::string_view user) const;
    // Sets or clears (member) a role. Returns false when it would leave the room without an
    // owner although it had one.
    bool set_role(std::string_view user, room_role role);
    const std::map<std::string, room_role, std::less<>>& roles() const { return roles_; }

    // Whether `actor` may do `action` to `target` (empty for actions on the room itself).
    bool allows(std::string_view actor, moderation_action action, std::string_view target) const;

    void ban(std::string_view user, sanction s) { bans_[std::string(user)] = std::move(s); }
    bool unban(std::string_view user);
    // The active ban of user, if any.
    const sanction* ban_of(std::string_view user, std::int64_t now_ms) const;
    bool has_bans() const { return !bans_.empty(); }

    void mute(std::string_view user, sanction s) { mutes_[std::string(user)] = std::move(s); }
    bool unmute(std::string_view user);
    const sanction* mute_of(std::string_view user, std::int64_t now_ms) const;
    // Nobody muted and slow mode off: a say needs no check (the say path's one branch).
    bool says_unchecked() const { return mutes_.empty() && slow_mode_s_ <= 0; }

    std::int64_t slow_mode_s() const { return slow_mode_s_; }
    void set_slow_mode(std::int64_t interval_s) { slow_mode_s_ = interval_s; }
    // Slow mode: whether user may say now (and if so, records the say). Moderators and owners
    // are not slowed.
    bool take_say_turn(std::string_view user, std::int64_t now_ms);

    // Drops expired bans and mutes and slow-mode entries older than the interval; returns the
    // users whose ban or mute ended (for the `unban`/`unmute` events the room emits).
    struct ended {
        std::vector<std::string> bans;
        std::vector<std::string> mutes;
    };
    ended prune(std::int64_t now_ms);

private:
    std::map<std::string, room_role, std::less<>> roles_;  // owners and moderators only
    std::map<std::string, sanction, std::less<>> bans_;
    std::map<std::string, sanction, std::less<>> mutes_;
    std::map<std::string, std::int64_t, std::less<>> last_say_ms_;  // only while slow mode is on
    std::int64_t slow_mode_s_ = 0;
};

}  // namespace parley::rooms
