// What the events a cluster numbers do to a room on every node (room.hpp, apply_effects_locked).
// On one node a moderation action, an edit or a delete changes the room where it is made
// (room_moderate.cpp, room_revise.cpp); in a cluster it is only checked there, numbered by Redis
// like a say, and changes the room on each node, the origin included, when its event arrives, so
// every node's state follows the room's one sequence.

#include "protocol/frame_encoder.hpp"
#include "protocol/server_messages.hpp"
#include "protocol/stored_event.hpp"
#include "rooms/admin_actions.hpp"
#include "rooms/room.hpp"
#include "rooms/room_settings.hpp"
#include "rooms/worker_context.hpp"

namespace parley::rooms {

namespace {

enum class effect { none, moderation, edited, deleted };

// One comparison for the messages that make up nearly all of a room's events.
effect effect_of(std::string_view payload) {
    constexpr std::string_view moderation = "{\"type\":\"moderation\"";
    constexpr std::string_view edited = "{\"type\":\"edited\"";
    constexpr std::string_view deleted = "{\"type\":\"deleted\"";
    if (payload.starts_with("{\"type\":\"message\"")) {
        return effect::none;
    }
    return payload.starts_with(moderation) ? effect::moderation
           : payload.starts_with(edited)   ? effect::edited
           : payload.starts_with(deleted)  ? effect::deleted
                                           : effect::none;
}

}  // namespace

void room::apply_effects_locked(const protocol::shared_frame& frame) {
    const effect kind = effect_of(protocol::frame_payload(frame.view()));
    if (kind == effect::none) {
        return;
    }
    const std::optional<protocol::stored_event> e = protocol::read_stored_event(frame);
    if (!e) {
        return;
    }
    if (kind == effect::edited || kind == effect::deleted) {
        const std::optional<log_entry> original = log_->entry(e->target);
        if (!original) {
            return;  // older than this node's memory: nothing of it is shown from here
        }
        const std::optional<protocol::stored_event> shown = protocol::read_stored_event(original->frame);
        if (!shown || shown->type != "message" || shown->deleted) {
            return;
        }
        if (kind == effect::edited && e->text) {
            log_->revise(e->target,
                         protocol::encode_revised_message(name_, shown->from, *e->text, e->target, original->ts));
        } else if (kind == effect::deleted) {
            erase_text_locked(e->target, shown->from, original->ts);
        }
        return;
    }
    const std::string& action = e->action;
    if (action == "ban" || action == "mute") {
        sanction s{e->by, e->reason, e->until_ms.value_or(0)};
        save_locked(sanction_setting(action == "ban", e->user, &s));
        if (action == "ban") {
            moderation_.ban(e->user, std::move(s));
        } else {
            moderation_.mute(e->user, std::move(s));
        }
    } else if (action == "unban" || action == "unmute") {
        if (action == "unban" ? moderation_.unban(e->user) : moderation_.unmute(e->user)) {
            save_locked(sanction_setting(action == "unban", e->user, nullptr));
        }
    } else if (action == "set_role") {
        if (std::optional<room_role> role = parse_role(e->role); role && moderation_.set_role(e->user, *role)) {
            save_locked(role_setting(e->user, *role));
        }
    } else if (action == "set_topic") {
        const std::string topic = e->topic.value_or(std::string());
        if (topic.empty() || topic == configured_topic_) {
            own_topic_.reset();
        } else {
            own_topic_ = topic;
        }
        save_locked(topic_setting(own_topic_.value_or(std::string())));
    } else if (action == "set_slow_mode") {
        moderation_.set_slow_mode(e->interval_s.value_or(0));
        save_locked(slow_mode_setting(e->interval_s.value_or(0)));
    }
    note_care_locked();
    if ((action == "kick" || action == "ban") && !workers_.empty()) {
        // This node's sessions of the user leave the room, on their own workers.
        std::string notice = std::string(action == "kick" ? "you were removed from '" : "you were banned from '") +
                             name_ + "' by " + e->by;
        if (!e->reason.empty()) {
            notice.append(": ").append(e->reason);
        }
        remove_from_room(workers_.front()->hub(), shared_from_this(), e->user, std::move(notice));
    }
}

}  // namespace parley::rooms
