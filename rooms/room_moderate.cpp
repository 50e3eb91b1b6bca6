// room's moderation: roles, bans, mutes, topic and slow mode, each action an event in the
// room's sequence (room.hpp, "moderation").

#include "protocol/server_messages.hpp"
#include "rooms/room.hpp"
#include "rooms/room_directory.hpp"
#include "rooms/room_settings.hpp"

namespace parley::rooms {

using protocol::shared_frame;

namespace {

std::string_view action_name(moderation_action action) {
    switch (action) {
    case moderation_action::kick: return "kick";
    case moderation_action::ban: return "ban";
    case moderation_action::unban: return "unban";
    case moderation_action::mute: return "mute";
    case moderation_action::unmute: return "unmute";
    case moderation_action::set_role: return "set_role";
    case moderation_action::set_topic: return "set_topic";
    case moderation_action::set_slow_mode: return "set_slow_mode";
    }
    return "";
}

}  // namespace

room::moderation_outcome room::moderate(const moderation_request& request, std::int64_t ts, session_output* ack_to,
                                        std::string_view ack_id) {
    std::lock_guard lock(mutex_);
    if (closed_) {
        return moderation_outcome::gone;
    }
    const bool about_user = request.action != moderation_action::set_topic &&
                            request.action != moderation_action::set_slow_mode;
    // Without identities a role, ban or mute would pass to the next holder of the name (a kick
    // keeps nothing).
    if ((about_user && request.action != moderation_action::kick && !identities_) ||
        (!request.as_admin && (!identities_ || !moderation_.allows(request.actor, request.action, request.target)))) {
        return moderation_outcome::forbidden;
    }
    const bool adds_setting = request.action == moderation_action::ban || request.action == moderation_action::mute ||
                              (request.action == moderation_action::set_role && request.role != room_role::member);
    if (adds_setting && moderation_.sanction_count() + moderation_.own_roles().size() >= max_settings) {
        return moderation_outcome::too_many;
    }
    protocol::moderation_event event;
    event.room = name_;
    event.action = action_name(request.action);
    event.by = request.actor;
    event.user = request.target;
    switch (request.action) {
    case moderation_action::kick:
        if (members_.find(request.target) == members_.end() &&
            remote_members_.find(request.target) == remote_members_.end()) {
            return moderation_outcome::not_a_member;
        }
        event.reason = request.reason;
        break;
    case moderation_action::ban:
    case moderation_action::mute: {
        const bool ban = request.action == moderation_action::ban;
        sanction s{std::string(request.actor), std::string(request.reason), request.until_ms.value_or(0)};
        save_locked(sanction_setting(ban, request.target, &s));
        if (ban) {
            moderation_.ban(request.target, std::move(s));
        } else {
            moderation_.mute(request.target, std::move(s));
        }
        event.reason = request.reason;
        event.until_ms = request.until_ms;
        break;
    }
    case moderation_action::unban:
        if (!moderation_.unban(request.target)) {
            return moderation_outcome::unchanged;
        }
        save_locked(sanction_setting(true, request.target, nullptr));
        break;
    case moderation_action::unmute:
        if (!moderation_.unmute(request.target)) {
            return moderation_outcome::unchanged;
        }
        save_locked(sanction_setting(false, request.target, nullptr));
        break;
    case moderation_action::set_role:
        if (!moderation_.set_role(request.target, request.role)) {
            return moderation_outcome::last_owner;
        }
        save_locked(role_setting(request.target, request.role));
        event.role = role_name(request.role);
        break;
    case moderation_action::set_topic:
        if (request.topic.empty()) {
            own_topic_.reset();  // back to the configuration's, if any
        } else {
            own_topic_ = std::string(request.topic);
        }
        save_locked(topic_setting(request.topic));
        event.topic = topic_locked();
        break;
    case moderation_action::set_slow_mode:
        moderation_.set_slow_mode(request.interval_s);
        save_locked(slow_mode_setting(request.interval_s));
        event.interval_s = request.interval_s;
        break;
    }
    note_care_locked();
    const std::int64_t seq = log_->last_seq() + 1;
    shared_frame frame = protocol::encode_moderation(event, seq, ts);
    log_->append(seq, ts, frame);
    if (ack_to != nullptr) {
        ack_to->send(protocol::encode_ack(ack_id, name_, seq));
    }
    broadcast_locked(frame, registry::session_handle{});
    return moderation_outcome::done;
}

void room::grant_role(std::string_view user, room_role role) {
    std::lock_guard lock(mutex_);
    moderation_.set_role(user, role);
    save_locked(role_setting(user, role));
}

room_role room::role_of(std::string_view user) const {
    std::lock_guard lock(mutex_);
    return moderation_.role_of(user);
}

void room::end_expired_sanctions(std::int64_t now_ms) {
    std::lock_guard lock(mutex_);
    if (closed_) {
        return;
    }
    const room_moderation::ended gone = moderation_.prune(now_ms);
    auto emit = [&](std::string_view action, const std::vector<std::string>& users) {
        for (const std::string& user : users) {
            save_locked(sanction_setting(action == "unban", user, nullptr));
            protocol::moderation_event event;
            event.room = name_;
            event.action = action;
            event.user = user;
            const std::int64_t seq = log_->last_seq() + 1;
            shared_frame frame = protocol::encode_moderation(event, seq, now_ms);
            log_->append(seq, now_ms, frame);
            broadcast_locked(frame, registry::session_handle{});
        }
    };
    emit("unban", gone.bans);
    emit("unmute", gone.mutes);
    note_care_locked();
}

}  // namespace parley::rooms
