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

room::change_outcome room::change_message(const change_request& request, std::int64_t ts, session_output* ack_to,
                                          std::string_view ack_id) {
    std::lock_guard lock(mutex_);
    if (closed_) {
        return change_outcome::gone;
    }
    const std::optional<log_entry> original = log_->entry(request.seq);
    std::optional<protocol::stored_event> shown;
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
        if (request.edit_window_ms <= 0 || ts - original->ts > request.edit_window_ms) {
            return change_outcome::too_late;
        }
        log_->revise(request.seq, protocol::encode_revised_message(name_, shown->from, *request.text, request.seq,
                                                                    original->ts));
    } else {
        const bool staff = identities_ && moderation_.role_of(request.actor) >= room_role::moderator;
        if (!by_author && !request.as_admin && !staff) {
            return change_outcome::forbidden;
        }
        log_->revise(request.seq, protocol::encode_deleted_message(name_, shown->from, request.seq, original->ts));
        // Earlier edits carried text of the message too: they keep their place, without it.
        // They came after the message, so memory, which holds it, holds them too.
        for (const log_entry& later : log_->newest_entries()) {
            if (later.seq <= request.seq || !is_edited_event(later.frame)) {
                continue;
            }
            std::optional<protocol::stored_event> edit = protocol::read_stored_event(later.frame);
            if (edit && edit->target == request.seq && edit->text) {
                log_->revise(later.seq,
                             protocol::encode_edited(name_, later.seq, later.ts, request.seq, edit->by, std::nullopt));
            }
        }
    }
    const std::int64_t seq = log_->last_seq() + 1;
    protocol::shared_frame event =
        request.text ? protocol::encode_edited(name_, seq, ts, request.seq, request.actor, *request.text)
                     : protocol::encode_deleted(name_, seq, ts, request.seq, request.actor);
    log_->append(seq, ts, event);
    if (ack_to != nullptr) {
        ack_to->send(protocol::encode_ack(ack_id, name_, seq));
    }
    broadcast_locked(event, registry::session_handle{});
    return change_outcome::done;
}

}  // namespace parley::rooms
