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

room::moderation_outcome room::vet_locked(const moderation_request& request) const {
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
    switch (request.action) {
    case moderation_action::kick:
        if (members_.find(request.target) == members_.end() &&
            remote_members_.find(request.target) == remote_members_.end()) {
            return moderation_outcome::not_a_member;
        }
        break;
    case moderation_action::unban:
        return moderation_.bans().count(request.target) != 0 ? moderation_outcome::done : moderation_outcome::unchanged;
    case moderation_action::unmute:
        return moderation_.mutes().count(request.target) != 0 ? moderation_outcome::done
                                                                : moderation_outcome::unchanged;
    case moderation_action::set_role: {
        room_moderation trial = moderation_;
        return trial.set_role(request.target, request.role) ? moderation_outcome::done : moderation_outcome::last_owner;
    }
    default: break;
    }
    return moderation_outcome::done;
}

room::moderation_outcome room::check_moderation(const moderation_request& request) const {
    std::lock_guard lock(mutex_);
    return vet_locked(request);
}

protocol::shared_frame room::moderation_event_frame_locked(const moderation_request& request, std::int64_t seq,
                                                           std::int64_t ts) const {
    protocol::moderation_event event;
    event.room = name_;
    event.action = action_name(request.action);
    event.by = request.actor;
    event.user = request.target;
    if (request.action == moderation_action::kick || request.action == moderation_action::ban ||
        request.action == moderation_action::mute) {
        event.reason = request.reason;
    }
    if (request.action == moderation_action::ban || request.action == moderation_action::mute) {
        event.until_ms = request.until_ms;
    }
    if (request.action == moderation_action::set_role) {
        event.role = role_name(request.role);
    }
    std::string topic;
    if (request.action == moderation_action::set_topic) {
        topic = request.topic.empty() ? configured_topic_ : std::string(request.topic);
        event.topic = topic;
    }
    if (request.action == moderation_action::set_slow_mode) {
        event.interval_s = request.interval_s;
    }
    return protocol::encode_moderation(event, seq, ts);
}

std::vector<room_setting> room::settings_changed_by_locked(const moderation_request& request) const {
    switch (request.action) {
    case moderation_action::ban:
    case moderation_action::mute: {
        const sanction s{std::string(request.actor), std::string(request.reason), request.until_ms.value_or(0)};
        return {sanction_setting(request.action == moderation_action::ban, request.target, &s)};
    }
    case moderation_action::unban: return {sanction_setting(true, request.target, nullptr)};
    case moderation_action::unmute: return {sanction_setting(false, request.target, nullptr)};
    case moderation_action::set_role: return {role_setting(request.target, request.role)};
    case moderation_action::set_topic:
        return {topic_setting(request.topic == configured_topic_ ? std::string_view() : request.topic)};
    case moderation_action::set_slow_mode: return {slow_mode_setting(request.interval_s)};
    case moderation_action::kick: break;
    }
    return {};
}

cluster_link::numbered_event room::cluster_event(const moderation_request& request, std::int64_t ts) const {
    std::lock_guard lock(mutex_);
    return cluster_event_locked(request, ts);
}

cluster_link::numbered_event room::cluster_event_locked(const moderation_request& request, std::int64_t ts) const {
    cluster_link::numbered_event event;
    event.room = name_;
    event.ts = ts;
    protocol::message_text_around_seq json = protocol::split_around_seq(moderation_event_frame_locked(request, 0, ts));
    event.json_before = std::move(json.before);
    event.json_after = std::move(json.after);
    event.settings = settings_changed_by_locked(request);
    return event;
}

cluster_link::numbered_event room::ownership_event(std::string_view user, std::int64_t ts) const {
    moderation_request request;
    request.actor = user;
    request.action = moderation_action::set_role;
    request.target = user;
    request.role = room_role::owner;
    cluster_link::numbered_event event = cluster_event(request, ts);
    event.new_room_only = true;
    return event;
}

void room::replace_settings(const std::vector<room_setting>& rows) {
    loaded_settings loaded = load_settings(rows);
    std::lock_guard lock(mutex_);
    moderation_.replace_own(std::move(loaded.moderation));
    own_topic_ = std::move(loaded.topic);
    for (const room_setting& row : rows) {
        save_locked(row);
    }
    note_care_locked();
}

room::moderation_outcome room::moderate(const moderation_request& request, std::int64_t ts, session_output* ack_to,
                                        std::string_view ack_id) {
    std::lock_guard lock(mutex_);
    if (const moderation_outcome vetted = vet_locked(request); vetted != moderation_outcome::done) {
        return vetted;
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
    report_locked(protocol::webhook_event::moderation, request.actor, frame, ts);
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

void room::end_expired_sanctions(std::int64_t now_ms, cluster_link* cluster) {
    std::lock_guard lock(mutex_);
    if (closed_) {
        return;
    }
    if (cluster != nullptr) {
        // Over here already (an ended sanction holds nobody back); the event that says so, and
        // that takes it out of the cluster's settings, is offered to the cluster.
        std::vector<cluster_link::numbered_event> ends;
        for (const bool ban : {true, false}) {
            for (const auto& [user, s] : ban ? moderation_.bans() : moderation_.mutes()) {
                if (s.active_at(now_ms)) {
                    continue;
                }
                moderation_request request;
                request.action = ban ? moderation_action::unban : moderation_action::unmute;
                request.target = user;
                cluster_link::numbered_event end = cluster_event_locked(request, now_ms);
                end.only_if_stored = sanction_setting(ban, user, &s).value;
                ends.push_back(std::move(end));
            }
        }
        const room_moderation::ended gone = moderation_.prune(now_ms);
        for (const std::string& user : gone.bans) {
            save_locked(sanction_setting(true, user, nullptr));
        }
        for (const std::string& user : gone.mutes) {
            save_locked(sanction_setting(false, user, nullptr));
        }
        note_care_locked();
        if (cluster->sequencing(name_)) {
            for (cluster_link::numbered_event& end : ends) {
                cluster->submit_event(std::move(end), registry::session_handle{}, {});
            }
        }
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
            report_locked(protocol::webhook_event::moderation, {}, frame, now_ms);
            broadcast_locked(frame, registry::session_handle{});
        }
    };
    emit("unban", gone.bans);
    emit("unmute", gone.mutes);
    note_care_locked();
}

}  // namespace parley::rooms
