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

// Limits of what a moderation request may carry (the protocol's and the admin API's).
// A ban or mute lasts at most a year when timed (absent: until lifted); slow mode at most a day.
constexpr std::int64_t max_sanction_s = 366LL * 24 * 3600;
constexpr std::int64_t max_slow_mode_s = 24 * 3600;
// A reason is shown to everyone in the room and kept in its history: a line, not a text.
constexpr std::size_t max_reason_bytes = 256;
constexpr std::size_t max_topic_bytes = 512;

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
//
// Roles come from three places, and a user's role is the highest of them: the room's own (set by
// set_role, the creator's ownership; stored), the configuration's owners and moderators of a
// permanent room, and the `roles` claim of a member's token. set_role changes only the room's
// own: a role the configuration or a token gives is changed there.
class room_moderation {
public:
    using role_map = std::map<std::string, room_role, std::less<>>;

    room_role role_of(std::string_view user) const;
    // Sets or clears (member) the room's own role of user. Returns false when it would leave the
    // room without an owner although it had one.
    bool set_role(std::string_view user, room_role role);
    // The room's own roles (owners and moderators; what is stored).
    const role_map& own_roles() const { return roles_; }
    // Everyone with a role above member, from every source, with the highest.
    role_map roles() const;
    // Takes the stored part of other's state (its own roles, bans, mutes, slow mode), keeping the
    // configuration's and the tokens' roles held here.
    void replace_own(room_moderation other) {
        roles_ = std::move(other.roles_);
        bans_ = std::move(other.bans_);
        mutes_ = std::move(other.mutes_);
        slow_mode_s_ = other.slow_mode_s_;
        last_say_ms_.clear();
    }
    // The configuration's roles (replaced on every reload).
    void set_configured_roles(role_map roles) { configured_ = std::move(roles); }
    // A token's claim, recorded when its holder joins (kept while the room exists: every login
    // presents the token again).
    void claim_role(std::string_view user, room_role role);

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

    // Bans and mutes, for `joined` (expired ones included until prune()).
    const std::map<std::string, sanction, std::less<>>& bans() const { return bans_; }
    const std::map<std::string, sanction, std::less<>>& mutes() const { return mutes_; }
    std::size_t sanction_count() const { return bans_.size() + mutes_.size(); }
    // Whether some ban or mute ends by itself (prune() has work some day).
    bool has_timed() const;

private:
    role_map roles_;       // the room's own: owners and moderators only
    role_map configured_;  // from the configuration
    role_map claimed_;     // from members' tokens
    std::map<std::string, sanction, std::less<>> bans_;
    std::map<std::string, sanction, std::less<>> mutes_;
    std::map<std::string, std::int64_t, std::less<>> last_say_ms_;  // only while slow mode is on
    std::int64_t slow_mode_s_ = 0;
};

}  // namespace parley::rooms
