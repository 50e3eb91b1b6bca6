#include "rooms/admin_actions.hpp"

#include "protocol/close_code.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/history/unix_clock.hpp"
#include "rooms/room.hpp"
#include "rooms/session_task.hpp"
#include "rooms/worker_context.hpp"

namespace parley::rooms {

std::vector<user_summary> list_users(chat_hub& hub) {
    std::vector<user_summary> out;
    std::vector<registry::session_handle> handles;
    for (std::string& name : hub.users().names()) {
        handles.clear();
        std::size_t connections = hub.users().lookup_all(name, handles);
        if (connections != 0) {  // gone since names() was taken
            out.push_back({std::move(name), connections});
        }
    }
    return out;
}

std::size_t kick_user(chat_hub& hub, std::string_view user, std::string_view reason, protocol::close_code code,
                      std::string_view notice) {
    std::vector<registry::session_handle> handles;
    hub.users().lookup_all(user, handles);
    // Encoded once for all of the user's connections.
    protocol::shared_frame notice_frame = notice.empty() ? protocol::shared_frame{} : protocol::encode_system(notice);
    for (registry::session_handle h : handles) {
        post_to_session(hub, h, [notice_frame, code, why = std::string(reason)](chat_session& s) {
            if (notice_frame) {
                s.output().send(notice_frame);
            }
            s.output().close(code, why);
        });
    }
    return handles.size();
}

void announce_to_all(chat_hub& hub, std::string_view text) {
    protocol::shared_frame frame = protocol::encode_system(text);  // encoded once for everyone
    for (worker_context* w : hub.workers()) {
        w->executor().post([w, frame] { w->send_to_all(frame); });
    }
}

bool announce_to_room(chat_hub& hub, std::string_view room_name, std::string_view text) {
    std::shared_ptr<room> target = hub.rooms().find(room_name);
    if (!target) {
        return false;
    }
    target->announce(text);
    return true;
}

std::optional<std::size_t> close_room(chat_hub& hub, std::string_view room_name, std::string_view reason) {
    std::shared_ptr<room> target = hub.rooms().find(room_name);
    if (!target) {
        return std::nullopt;
    }
    std::size_t members = target->member_count();
    for (worker_context* w : hub.workers()) {
        w->executor().post([w, target, why = std::string(reason)] { w->evict_members(target.get(), why); });
    }
    return members;
}

void remove_from_room(chat_hub& hub, const std::shared_ptr<room>& r, std::string_view user, std::string notice) {
    std::vector<registry::session_handle> handles;
    hub.users().lookup_all(user, handles);
    for (registry::session_handle h : handles) {
        post_to_session(hub, h, [r, notice](chat_session& s) { s.remove_from(r.get(), notice); });
    }
}

room::moderation_outcome moderate_as_admin(chat_hub& hub, std::string_view room_name,
                                           room::moderation_request request, bool needs_feed) {
    request.as_admin = true;
    cluster_link* cluster = hub.cluster();
    if (cluster != nullptr && !cluster->sequencing(room_name)) {
        return room::moderation_outcome::unavailable;
    }
    room::moderation_outcome outcome = room::moderation_outcome::gone;
    const std::int64_t now = unix_millis();
    std::shared_ptr<room> target = hub.rooms().with_room(room_name, [&](room& r) {
        if (cluster != nullptr && needs_feed && !r.fed()) {
            outcome = room::moderation_outcome::not_fed;
        } else if (cluster != nullptr) {
            // Numbered by the cluster; every node makes the change when the event arrives.
            outcome = r.check_moderation(request);
            if (outcome == room::moderation_outcome::done) {
                cluster->submit_event(r.cluster_event(request, now), registry::session_handle{}, {});
            }
        } else {
            outcome = r.moderate(request, now, nullptr, {});
        }
        return outcome != room::moderation_outcome::gone;
    });
    if (cluster == nullptr && outcome == room::moderation_outcome::done &&
        (request.action == moderation_action::kick || request.action == moderation_action::ban)) {
        std::string notice = std::string(request.action == moderation_action::kick ? "you were removed from '"
                                                                                   : "you were banned from '") +
                             target->name() + "' by an administrator";
        if (!request.reason.empty()) {
            notice.append(": ").append(request.reason);
        }
        remove_from_room(hub, target, request.target, std::move(notice));
    }
    target->close_if_unused();
    return outcome;
}

room::change_outcome delete_as_admin(chat_hub& hub, std::string_view room_name, std::int64_t seq, bool needs_feed) {
    room::change_request request;
    request.actor = "@admin";
    request.seq = seq;
    request.as_admin = true;
    cluster_link* cluster = hub.cluster();
    if (cluster != nullptr && !cluster->sequencing(room_name)) {
        return room::change_outcome::unavailable;
    }
    room::change_outcome outcome = room::change_outcome::gone;
    const std::int64_t now = unix_millis();
    hub.rooms().with_room(
        room_name,
        [&](room& r) {
            if (cluster != nullptr && needs_feed && !r.fed()) {
                outcome = room::change_outcome::not_fed;
            } else if (cluster != nullptr) {
                outcome = r.check_change(request, now);
                if (outcome == room::change_outcome::done) {
                    cluster->submit_event(r.cluster_event(request, now), registry::session_handle{}, {});
                }
            } else {
                outcome = r.change_message(request, now, nullptr, {});
            }
            if (outcome != room::change_outcome::not_fed) {
                r.close_if_unused();  // made for the request (a node holds the rooms it feeds)
            }
            return outcome != room::change_outcome::gone;
        },
        // In a cluster the room may have members on other nodes only: made here, then fed.
        cluster != nullptr ? room_directory::if_missing::create : room_directory::if_missing::skip);
    return outcome;
}

}  // namespace parley::rooms
