// room's moderation: roles, bans, mutes, topic and slow mode, each action an event in the
// room's sequence (room.hpp, "moderation").

#include "protocol/server_messages.hpp"
#include "rooms/room.hpp"

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
    if (!moderation_.allows(request.actor, request.action, request.target)) {
        return moderation_outcome::forbidden;
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
        moderation_.ban(request.target, {std::string(request.actor), std::string(request.reason),
                                         request.until_ms.value_or(0)});
        event.reason = request.reason;
        event.until_ms = request.until_ms;
        break;
    case moderation_action::mute:
        moderation_.mute(request.target, {std::string(request.actor), std::string(request.reason),
                                          request.until_ms.value_or(0)});
        event.reason = request.reason;
        event.until_ms = request.until_ms;
        break;
    case moderation_action::unban:
        if (!moderation_.unban(request.target)) {
            return moderation_outcome::unchanged;
        }
        break;
    case moderation_action::unmute:
        if (!moderation_.unmute(request.target)) {
            return moderation_outcome::unchanged;
        }
        break;
    case moderation_action::set_role:
        if (!moderation_.set_role(request.target, request.role)) {
            return moderation_outcome::last_owner;
        }
        event.role = role_name(request.role);
        break;
    case moderation_action::set_topic:
        topic_ = std::string(request.topic);
        event.topic = request.topic;
        break;
    case moderation_action::set_slow_mode:
        moderation_.set_slow_mode(request.interval_s);
        event.interval_s = request.interval_s;
        break;
    }
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
}

}  // namespace parley::rooms
