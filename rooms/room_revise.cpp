// room's edits and deletes of messages (room.hpp, "edit and delete").

#include "protocol/frame_encoder.hpp"
#include "protocol/server_messages.hpp"
#include "protocol/stored_event.hpp"
#include "rooms/room.hpp"

namespace parley::rooms {

namespace {

bool is_edited_event(const protocol::shared_frame& frame) {
    constexpr std::string_view prefix = "{\"type\":\"edited\"";
    return protocol::frame_payload(frame.view()).starts_with(prefix);
}

}  // namespace

std::vector<log_entry> room::text_erasures_locked(std::int64_t target, std::string_view from,
                                                  std::int64_t ts) const {
    std::vector<log_entry> out{{target, ts, protocol::encode_deleted_message(name_, from, target, ts)}};
    // Earlier edits carried text of the message too: they keep their place, without it.
    // They came after the message, so memory, which holds it, holds them too.
    for (const log_entry& later : log_->newest_entries()) {
        if (later.seq <= target || !is_edited_event(later.frame)) {
            continue;
        }
        std::optional<protocol::stored_event> edit = protocol::read_stored_event(later.frame);
        if (edit && edit->target == target && edit->text) {
            out.push_back(
                {later.seq, later.ts, protocol::encode_edited(name_, later.seq, later.ts, target, edit->by, std::nullopt)});
        }
    }
    return out;
}

void room::erase_text_locked(std::int64_t target, std::string_view from, std::int64_t ts) {
    for (log_entry& erased : text_erasures_locked(target, from, ts)) {
        log_->revise(erased.seq, std::move(erased.frame));
    }
}

cluster_link::numbered_event room::cluster_event(const change_request& request, std::int64_t ts) const {
    std::lock_guard lock(mutex_);
    cluster_link::numbered_event event;
    event.room = name_;
    event.ts = ts;
    event.target = request.seq;
    protocol::message_text_around_seq json = protocol::split_around_seq(
        request.text ? protocol::encode_edited(name_, 0, ts, request.seq, request.actor, *request.text)
                     : protocol::encode_deleted(name_, 0, ts, request.seq, request.actor));
    event.json_before = std::move(json.before);
    event.json_after = std::move(json.after);
    // What the cluster's stream keeps of the message from now on (check_change found it here).
    const std::optional<log_entry> original = log_->entry(request.seq);
    const std::optional<protocol::stored_event> shown =
        original ? protocol::read_stored_event(original->frame) : std::nullopt;
    if (!shown) {
        return event;
    }
    if (request.text) {
        event.revisions.push_back(
            {request.seq, original->ts,
             protocol::encode_revised_message(name_, shown->from, *request.text, request.seq, original->ts)});
    } else {
        event.revisions = text_erasures_locked(request.seq, shown->from, original->ts);
    }
    return event;
}

room::change_outcome room::vet_change_locked(const change_request& request, std::int64_t ts,
                                             std::optional<log_entry>& original,
                                             std::optional<protocol::stored_event>& shown) const {
    if (closed_) {
        return change_outcome::gone;
    }
    original = log_->entry(request.seq);
    if (original) {
        shown = protocol::read_stored_event(original->frame);
    }
    if (!shown || shown->type != "message" || shown->deleted) {
        return change_outcome::not_found;
    }
    const bool by_author = !request.as_admin && shown->from == request.actor;
    if (request.text) {
        if (!by_author) {
            return change_outcome::not_author;
        }
        return request.edit_window_ms <= 0 || ts - original->ts > request.edit_window_ms ? change_outcome::too_late
                                                                                          : change_outcome::done;
    }
    const bool staff = identities_ && moderation_.role_of(request.actor) >= room_role::moderator;
    return by_author || request.as_admin || staff ? change_outcome::done : change_outcome::forbidden;
}

room::change_outcome room::check_change(const change_request& request, std::int64_t ts) const {
    std::lock_guard lock(mutex_);
    std::optional<log_entry> original;
    std::optional<protocol::stored_event> shown;
    return vet_change_locked(request, ts, original, shown);
}

room::change_outcome room::change_message(const change_request& request, std::int64_t ts, session_output* ack_to,
                                          std::string_view ack_id) {
    std::lock_guard lock(mutex_);
    std::optional<log_entry> original;
    std::optional<protocol::stored_event> shown;
    if (const change_outcome vetted = vet_change_locked(request, ts, original, shown); vetted != change_outcome::done) {
        return vetted;
    }
    if (request.text) {
        log_->revise(request.seq, protocol::encode_revised_message(name_, shown->from, *request.text, request.seq,
                                                                    original->ts));
    } else {
        erase_text_locked(request.seq, shown->from, original->ts);
    }
    const std::int64_t seq = log_->last_seq() + 1;
    protocol::shared_frame event =
        request.text ? protocol::encode_edited(name_, seq, ts, request.seq, request.actor, *request.text)
                     : protocol::encode_deleted(name_, seq, ts, request.seq, request.actor);
    log_->append(seq, ts, event);
    if (ack_to != nullptr) {
        ack_to->send(protocol::encode_ack(ack_id, name_, seq));
    }
    report_locked(request.text ? protocol::webhook_event::message_edited : protocol::webhook_event::message_deleted,
                  request.actor, event, ts);
    broadcast_locked(event, registry::session_handle{});
    return change_outcome::done;
}

}  // namespace parley::rooms
