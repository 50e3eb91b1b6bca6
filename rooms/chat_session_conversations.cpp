// chat_session's direct messages, direct conversations and read markers (docs/protocol.md,
// "Direct messages" and "Read markers").

#include "protocol/names.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/room.hpp"
#include "rooms/session_task.hpp"
#include "rooms/worker_context.hpp"

#include <algorithm>

namespace parley::rooms {

using protocol::error_code;

bool chat_session::keeps_identities() const {
    // A cluster does not share this node's store: what one node stored for a user would be
    // missing on the next, so a node of a cluster stores nothing per user (docs/cluster.md).
    return worker_.settings().auth_mode == config::auth_mode::token && worker_.hub().cluster() == nullptr;
}

void chat_session::on_dm(request& req) {
    if (!protocol::valid_user_name(req.to)) {
        fail(error_code::invalid_name, protocol::user_name_rule(), req.id);
        return;
    }
    if (!check_text(req)) {
        return;
    }
    if (keeps_identities()) {
        send_stored_dm(req);
        return;
    }
    // Live only: the recipient must be online now (here or, in a cluster, on another node).
    std::vector<registry::session_handle> targets;
    cluster_link* cluster = worker_.hub().cluster();
    bool elsewhere = false;
    if (worker_.hub().users().lookup_all(req.to, targets) == 0) {
        elsewhere = cluster != nullptr && cluster->online_elsewhere(req.to);
        if (!elsewhere) {
            fail(error_code::user_not_found, "no user '" + req.to + "' is online", req.id);
            return;
        }
    }
    auto frame = protocol::encode_dm(user_, req.to, req.text, unix_millis());
    send(frame);
    if (!req.id.empty()) {
        send(protocol::encode_ack(req.id, {}, 0));
    }
    if (elsewhere) {
        cluster->send_dm(req.to, frame);
    }
    deliver_dm(frame, req.to);
}

void chat_session::send_stored_dm(request& req) {
    chat_hub& hub = worker_.hub();
    // Stored first: a recipient with no session reads it at their next login.
    direct_conversations::sent sent = hub.conversations().send(user_, req.to, req.text, unix_millis());
    std::string key = direct_conversations::key_of(user_, req.to);
    // One's own message is read; for the other user the conversation is now one of theirs.
    hub.markers().advance(user_, key, sent.seq);
    if (req.to != user_) {
        hub.markers().ensure(req.to, key);
    }
    send(sent.frame);
    if (!req.id.empty()) {
        send(protocol::encode_dm_ack(req.id, req.to, sent.seq));
    }
    deliver_dm(sent.frame, req.to);
}

void chat_session::deliver_dm(const protocol::shared_frame& frame, std::string_view to) {
    std::vector<registry::session_handle> targets;
    registry::user_registry& users = worker_.hub().users();
    users.lookup_all(to, targets);
    // The sender's other connections get their copy too, so each of a user's tabs shows the
    // whole conversation. (Without tokens a name is one connection: there are no others.)
    if (to != user_ && worker_.settings().auth_mode == config::auth_mode::token) {
        users.lookup_all(user_, targets);
    }
    for (registry::session_handle target : targets) {
        if (target == handle_) {
            continue;
        }
        // The recipient may have gone since the lookup; then there is nobody to deliver to.
        post_to_session(worker_.hub(), target, [frame](chat_session& session) { session.output().send(frame); });
    }
}

void chat_session::on_dm_history(request& req) {
    if (!protocol::valid_user_name(req.with)) {
        fail(error_code::invalid_name, protocol::user_name_rule(), req.id);
        return;
    }
    std::optional<std::size_t> limit = page_limit(req);
    if (!limit) {
        return;
    }
    chat_hub& hub = worker_.hub();
    // The conversation asked for is always the asker's own with `with`: nobody can name
    // another pair's. Without stored conversations (no identities) it is empty.
    std::optional<direct_conversations::page> page;
    if (keeps_identities()) {
        page = hub.conversations().history(user_, req.with, req.before, req.after, *limit);
    }
    if (!page) {
        send(protocol::encode_dm_history(req.with, std::nullopt, {}, req.id));
        return;
    }
    if (!page->answer.stored) {
        send(protocol::encode_dm_history(req.with, page->epoch, join_answer({}, page->answer), req.id));
        return;
    }
    // Older than memory holds: read on the store's thread and posted back, as for a room.
    auto reply_later = [&hub, asker = handle_, with = req.with, epoch = page->epoch,
                        re = req.id](std::optional<std::vector<protocol::shared_frame>> messages) {
        auto reply = messages ? protocol::encode_dm_history(with, epoch, *messages, re)
                              : protocol::encode_error(error_code::unavailable,
                                                       "the conversation's older messages cannot be read right now",
                                                       re);
        post_to_session(hub, asker, [reply](chat_session& session) { session.output().send(reply); });
    };
    hub.history().complete(*page->log, std::move(page->answer), std::move(reply_later));
}

void chat_session::on_read(request& req) {
    chat_hub& hub = worker_.hub();
    const bool is_room = !req.room.empty();
    std::string key;
    std::int64_t last = 0;
    if (is_room) {
        auto found = room_of(req);  // only a room one is in can be marked
        if (found == rooms_.end()) {
            return;
        }
        key = req.room;
        last = found->joined->last_seq();
    } else {
        if (!protocol::valid_user_name(req.with)) {
            fail(error_code::invalid_name, protocol::user_name_rule(), req.id);
            return;
        }
        if (keeps_identities()) {
            last = hub.conversations().last_seq(user_, req.with);
        }
        if (last == 0) {
            fail(error_code::user_not_found, "you have no conversation with '" + req.with + "'", req.id);
            return;
        }
        key = direct_conversations::key_of(user_, req.with);
    }
    // Past the end means "everything": clamped, so a marker never points at a future message.
    std::int64_t seq = std::min(*req.seq, last);
    std::optional<std::int64_t> moved = hub.markers().advance(user_, key, seq);
    const std::string& name = is_room ? req.room : req.with;
    send(protocol::encode_read(is_room, name, moved ? *moved : hub.markers().marker(user_, key), req.id));
    if (!moved || worker_.settings().auth_mode != config::auth_mode::token) {
        return;  // nothing changed, or (without tokens) there is no other session of the name
    }
    // Read on the laptop is read on the phone: the user's other sessions here hear of it.
    auto event = protocol::encode_read(is_room, name, *moved, {});
    std::vector<registry::session_handle> sessions;
    hub.users().lookup_all(user_, sessions);
    for (registry::session_handle target : sessions) {
        if (target != handle_) {
            post_to_session(hub, target, [event](chat_session& session) { session.output().send(event); });
        }
    }
}

std::vector<protocol::conversation_summary> chat_session::conversations() const {
    struct listed {
        protocol::conversation_summary summary;
        std::int64_t last_ts;
    };
    std::vector<listed> found;
    chat_hub& hub = worker_.hub();
    const room_access& access = worker_.access();
    const room_grant* grant = worker_.grant_of(handle_.session);
    for (read_marker& marker : hub.markers().all(user_)) {
        protocol::conversation_summary s;
        s.is_room = !direct_conversations::is_conversation_key(marker.key);
        if (s.is_room) {
            // A room the user may no longer enter tells them nothing of itself.
            if (!access.may_join(marker.key, user_, grant)) {
                continue;
            }
            s.name = marker.key;
        } else {
            s.name = std::string(direct_conversations::other_of(marker.key, user_));
            if (s.name.empty()) {
                continue;
            }
        }
        log_activity activity = hub.history().activity(marker.key);
        if (activity.last_seq == 0) {
            continue;  // nothing left of it (retention, or a memory store since restarted)
        }
        s.seq = activity.last_seq;
        s.read = std::min(marker.seq, activity.last_seq);
        s.unread = s.seq - s.read;
        found.push_back({std::move(s), activity.last_ts});
    }
    std::sort(found.begin(), found.end(), [](const listed& a, const listed& b) {
        return a.last_ts != b.last_ts ? a.last_ts > b.last_ts : a.summary.name < b.summary.name;
    });
    std::size_t limit = worker_.settings().welcome_conversations;
    std::vector<protocol::conversation_summary> out;
    out.reserve(std::min(limit, found.size()));
    for (std::size_t i = 0; i < found.size() && i < limit; ++i) {
        out.push_back(std::move(found[i].summary));
    }
    return out;
}

}  // namespace parley::rooms
