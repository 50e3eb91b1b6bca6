// chat_session's moderation requests: kick, ban, unban, mute, unmute, set_role, set_topic,
// set_slow_mode (room.hpp, "moderation"; docs/protocol.md).
//
// The actor must be in the room, and its role there must allow the action (room_moderation).
// Roles exist only where a name is an identity (token mode): without tokens nobody holds a role,
// so every moderation request is answered `forbidden` and the admin API is the only moderator
// (docs/security.md).

#include "protocol/names.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/admin_actions.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/history/unix_clock.hpp"
#include "rooms/room.hpp"
#include "rooms/session_task.hpp"
#include "rooms/worker_context.hpp"

#include <string>

namespace parley::rooms {

using protocol::error_code;
using protocol::request_type;

namespace {

moderation_action action_of(request_type type) {
    switch (type) {
    case request_type::kick: return moderation_action::kick;
    case request_type::ban: return moderation_action::ban;
    case request_type::unban: return moderation_action::unban;
    case request_type::mute: return moderation_action::mute;
    case request_type::unmute: return moderation_action::unmute;
    case request_type::set_role: return moderation_action::set_role;
    case request_type::set_topic: return moderation_action::set_topic;
    default: return moderation_action::set_slow_mode;
    }
}

bool about_user(moderation_action action) {
    return action != moderation_action::set_topic && action != moderation_action::set_slow_mode;
}

}  // namespace

void chat_session::on_moderate(request& req) {
    auto found = room_of(req);
    if (found == rooms_.end()) {
        return;
    }
    room& target_room = *found->joined;
    const moderation_action action = action_of(req.type);
    if (!keeps_identities()) {
        fail(error_code::forbidden,
             "without login tokens nobody holds a role in a room; administrators moderate through the admin API",
             req.id);
        return;
    }

    room::moderation_request mr;
    mr.actor = user_;
    mr.action = action;
    if (about_user(action) && !protocol::valid_user_name(req.user)) {
        fail(error_code::invalid_name, protocol::user_name_rule(), req.id);
        return;
    }
    mr.target = req.user;
    if (req.reason.size() > max_reason_bytes) {
        fail(error_code::too_large, "a reason is at most " + std::to_string(max_reason_bytes) + " bytes", req.id);
        return;
    }
    mr.reason = req.reason;
    const std::int64_t now = unix_millis();
    if (req.duration_s) {
        if (*req.duration_s < 1 || *req.duration_s > max_sanction_s) {
            fail(error_code::bad_request,
                 "duration_s must be from 1 to " + std::to_string(max_sanction_s) + " (absent: until lifted)", req.id);
            return;
        }
        mr.until_ms = now + *req.duration_s * 1000;
    }
    if (action == moderation_action::set_role) {
        const std::optional<room_role> role = parse_role(req.role);
        if (!role) {
            fail(error_code::bad_request, "role must be owner, moderator or member", req.id);
            return;
        }
        mr.role = *role;
    }
    if (action == moderation_action::set_topic) {
        if (req.text.size() > max_topic_bytes) {
            fail(error_code::too_large, "a topic is at most " + std::to_string(max_topic_bytes) + " bytes", req.id);
            return;
        }
        mr.topic = req.text;
    }
    if (action == moderation_action::set_slow_mode) {
        if (*req.interval_s > max_slow_mode_s) {
            fail(error_code::bad_request, "interval_s must be from 0 (off) to " + std::to_string(max_slow_mode_s),
                 req.id);
            return;
        }
        mr.interval_s = *req.interval_s;
    }

    cluster_link* cluster = worker_.hub().cluster();
    if (cluster != nullptr && !cluster->sequencing(req.room)) {
        fail(error_code::unavailable, "the cluster cannot take moderation just now; send it again later", req.id);
        return;
    }
    const room::moderation_outcome outcome =
        cluster != nullptr ? target_room.check_moderation(mr)
                           : target_room.moderate(mr, now, req.id.empty() ? nullptr : &output_, req.id);
    switch (outcome) {
    case room::moderation_outcome::done: break;
    case room::moderation_outcome::forbidden:
        fail(error_code::forbidden, "your role in '" + target_room.name() + "' does not allow that", req.id);
        return;
    case room::moderation_outcome::not_a_member:
        fail(error_code::user_not_found, "'" + req.user + "' is not in '" + target_room.name() + "'", req.id);
        return;
    case room::moderation_outcome::unchanged:
        fail(error_code::user_not_found,
             "'" + req.user + "' is not " + (action == moderation_action::unban ? "banned" : "muted") + " in '" +
                 target_room.name() + "'",
             req.id);
        return;
    case room::moderation_outcome::last_owner:
        fail(error_code::bad_request, "'" + target_room.name() + "' would be left without an owner", req.id);
        return;
    case room::moderation_outcome::too_many:
        fail(error_code::bad_request,
             "'" + target_room.name() + "' holds " + std::to_string(room::max_settings) +
                 " bans, mutes and roles already; lift some first",
             req.id);
        return;
    case room::moderation_outcome::unavailable:
    case room::moderation_outcome::not_fed:  // the admin API's only
    case room::moderation_outcome::gone:
        fail(error_code::not_in_room, "the room '" + target_room.name() + "' was closed", req.id);
        return;
    }
    if (cluster != nullptr) {
        // Numbered by the cluster; every node (this one too) makes the change when it arrives,
        // and removes its own sessions of a kicked or banned user (room_effects.cpp).
        cluster->submit_event(target_room.cluster_event(mr, now), handle_, req.id);
        return;
    }
    if (action == moderation_action::kick || action == moderation_action::ban) {
        // Every session of the user on this node leaves the room, on its own worker.
        std::string notice = std::string(action == moderation_action::kick ? "you were removed from '"
                                                                           : "you were banned from '") +
                             target_room.name() + "' by " + user_;
        if (!req.reason.empty()) {
            notice.append(": ").append(req.reason);
        }
        remove_from_room(worker_.hub(), found->joined, req.user, std::move(notice));
    }
}

void chat_session::on_change_message(request& req) {
    auto found = room_of(req);
    if (found == rooms_.end()) {
        return;
    }
    room& target_room = *found->joined;
    const bool editing = req.type == request_type::edit;
    if (!keeps_identities()) {
        // The author is a name, and the next holder of the name is someone else.
        fail(error_code::forbidden, "without login tokens messages are not edited or deleted by users", req.id);
        return;
    }
    cluster_link* cluster = worker_.hub().cluster();
    if (cluster != nullptr && !cluster->sequencing(req.room)) {
        fail(error_code::unavailable, "the cluster cannot take edits or deletes just now; send it again later", req.id);
        return;
    }
    if (editing && !check_text(req)) {
        return;
    }
    room::change_request change;
    change.actor = user_;
    change.seq = *req.seq;
    if (editing) {
        change.text = req.text;
    }
    change.edit_window_ms = static_cast<std::int64_t>(worker_.settings().edit_window_s) * 1000;
    const std::string where = "message " + std::to_string(*req.seq) + " of '" + target_room.name() + "'";
    const std::int64_t now = unix_millis();
    const room::change_outcome outcome =
        cluster != nullptr ? target_room.check_change(change, now)
                           : target_room.change_message(change, now, req.id.empty() ? nullptr : &output_, req.id);
    switch (outcome) {
    case room::change_outcome::done:
        if (cluster != nullptr) {
            cluster->submit_event(target_room.cluster_event(change, now), handle_, req.id);
        }
        return;
    case room::change_outcome::not_found:
        fail(error_code::message_not_found,
             "no " + where + " (a message among the room's newest, not deleted, can be edited or deleted)", req.id);
        return;
    case room::change_outcome::not_author: fail(error_code::forbidden, "only its author edits " + where, req.id); return;
    case room::change_outcome::too_late:
        fail(error_code::forbidden,
             where + " is older than the edit window (" + std::to_string(worker_.settings().edit_window_s) + " s)",
             req.id);
        return;
    case room::change_outcome::forbidden:
        fail(error_code::forbidden, "only its author, a moderator or an owner deletes " + where, req.id);
        return;
    case room::change_outcome::unavailable:
    case room::change_outcome::not_fed:  // the admin API's only
    case room::change_outcome::gone:
        fail(error_code::not_in_room, "the room '" + target_room.name() + "' was closed", req.id);
        return;
    }
}

}  // namespace parley::rooms
