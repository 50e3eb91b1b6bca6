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

bool chat_session::keeps_identities() const { return worker_.settings().auth_mode == config::auth_mode::token; }

cluster_link* chat_session::identities_in_cluster() const {
    // What one node's store kept would be missing on the next: a cluster keeps it in Redis.
    return keeps_identities() ? worker_.hub().cluster() : nullptr;
}

void chat_session::on_dm(request& req) {
    if (!protocol::valid_user_name(req.to)) {
        fail(error_code::invalid_name, protocol::user_name_rule(), req.id);
        return;
    }
    if (!check_text(req)) {
        return;
    }
    if (cluster_link* cluster = identities_in_cluster()) {
        // Numbered and stored by the cluster, which answers this session (copy and ack, or
        // unavailable) and gives the dm to both users' sessions on every node.
        cluster->submit_dm(user_, req.to, req.text, unix_millis(), handle_, req.id);
        return;
    }
    if (keeps_identities()) {
        send_stored_dm(req);
        return;
    }
    // Live only: the recipient must be online now (here or, in a cluster, on another node).
    std::vector<registry::session_handle> targets;
    cluster_link* cluster = worker_.hub().cluster();
    auto frame = protocol::encode_dm(user_, req.to, req.text, unix_millis());
    if (worker_.hub().users().lookup_all(req.to, targets) == 0) {
        if (cluster == nullptr) {
            fail(error_code::user_not_found, "no user '" + req.to + "' is online", req.id);
            return;
        }
        // Perhaps on another node: the sender hears whether it got there.
        chat_hub& hub = worker_.hub();
        cluster->send_dm(req.to, frame, [&hub, asker = handle_, frame, to = req.to, re = req.id](bool delivered) {
            post_to_session(hub, asker, [frame, delivered, to, re](chat_session& s) {
                if (!delivered) {
                    s.fail(error_code::user_not_found, "no user '" + to + "' is online", re);
                    return;
                }
                s.send(frame);
                if (!re.empty()) {
                    s.send(protocol::encode_ack(re, {}, 0));
                }
            });
        });
        return;
    }
    send(frame);
    if (!req.id.empty()) {
        send(protocol::encode_ack(req.id, {}, 0));
    }
    report_dm(frame);
    deliver_dm(frame, req.to);
}

void chat_session::report_dm(const protocol::shared_frame& frame) const {
    const chat_events& events = worker_.hub().rooms().events();
    if (events.wants(protocol::webhook_event::dm)) {
        events.emit(protocol::webhook_event::dm, {}, user_, frame, unix_millis());
    }
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
    report_dm(sent.frame);
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
    if (identities_in_cluster() != nullptr) {
        // The conversation is a stream in Redis: the whole page is read from there.
        page = hub.conversations().stored_page(user_, req.with, req.before, req.after, *limit);
    } else if (keeps_identities()) {
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
    hub.history().complete(page->log, std::move(page->answer), std::move(reply_later));
}

void chat_session::on_read(request& req) {
    chat_hub& hub = worker_.hub();
    cluster_link* cluster = identities_in_cluster();
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
        key = direct_conversations::key_of(user_, req.with);
        if (cluster == nullptr) {
            if (keeps_identities()) {
                last = hub.conversations().last_seq(user_, req.with);
            }
            if (last == 0) {
                fail(error_code::user_not_found, "you have no conversation with '" + req.with + "'", req.id);
                return;
            }
        }
    }
    if (cluster != nullptr) {
        // The cluster knows each log's last seq, clamps to it and keeps the marker.
        read_in_cluster(*cluster, is_room, std::move(key), is_room ? req.room : req.with, *req.seq,
                        std::move(req.id));
        return;
    }
    // Past the end means "everything": clamped, so a marker never points at a future message.
    std::int64_t seq = std::min(*req.seq, last);
    std::optional<std::int64_t> moved = hub.markers().advance(user_, key, seq);
    answer_read(is_room, is_room ? req.room : req.with, moved ? *moved : hub.markers().marker(user_, key),
                moved.has_value(), req.id);
}

void chat_session::read_in_cluster(cluster_link& cluster, bool is_room, std::string key, std::string name,
                                   std::int64_t seq, std::string re) {
    worker_context& owner = worker_;
    std::uint32_t session_id = handle_.session;
    cluster.save_read(user_, key, seq, handle_,
                      [&owner, session_id, is_room, name = std::move(name), re = std::move(re)](read_outcome outcome) {
                          chat_session* session = owner.find_session(session_id);
                          if (session == nullptr) {
                              return;
                          }
                          switch (outcome.what) {
                          case read_outcome::result::moved:
                          case read_outcome::result::unchanged:
                              session->answer_read(is_room, name, outcome.seq,
                                                   outcome.what == read_outcome::result::moved, re);
                              break;
                          case read_outcome::result::no_conversation:
                              session->fail(error_code::user_not_found,
                                            "you have no conversation with '" + name + "'", re);
                              break;
                          case read_outcome::result::unavailable:
                              session->fail(error_code::unavailable, "the read marker cannot be saved right now", re);
                              break;
                          }
                      });
}

void chat_session::answer_read(bool is_room, std::string_view name, std::int64_t seq, bool moved,
                               std::string_view re) {
    send(protocol::encode_read(is_room, name, seq, re));
    if (!moved || worker_.settings().auth_mode != config::auth_mode::token) {
        return;  // nothing changed, or (without tokens) there is no other session of the name
    }
    // Read on the laptop is read on the phone: the user's other sessions here hear of it. (In
    // a cluster a user's sessions are all on one node: docs/cluster.md.)
    auto event = protocol::encode_read(is_room, name, seq, {});
    std::vector<registry::session_handle> sessions;
    chat_hub& hub = worker_.hub();
    hub.users().lookup_all(user_, sessions);
    for (registry::session_handle target : sessions) {
        if (target != handle_) {
            post_to_session(hub, target, [event](chat_session& session) { session.output().send(event); });
        }
    }
}

std::vector<marked_log> chat_session::marked_logs_here() const {
    chat_hub& hub = worker_.hub();
    std::vector<marked_log> logs;
    for (read_marker& marker : hub.markers().all(user_)) {
        log_activity activity = hub.history().activity(marker.key);
        logs.push_back({std::move(marker.key), marker.seq, activity});
    }
    return logs;
}

std::vector<protocol::conversation_summary> chat_session::summarize(std::vector<marked_log> logs) const {
    struct listed {
        protocol::conversation_summary summary;
        std::int64_t last_ts;
    };
    std::vector<listed> found;
    const room_access& access = worker_.access();
    const room_grant* grant = worker_.grant_of(handle_.session);
    for (marked_log& log : logs) {
        protocol::conversation_summary s;
        s.is_room = !direct_conversations::is_conversation_key(log.key);
        if (s.is_room) {
            // A room the user may no longer enter tells them nothing of itself.
            if (!access.may_join(log.key, user_, grant)) {
                continue;
            }
            s.name = std::move(log.key);
        } else {
            s.name = std::string(direct_conversations::other_of(log.key, user_));
            if (s.name.empty()) {
                continue;
            }
        }
        if (log.activity.last_seq == 0) {
            continue;  // nothing left of it (retention, or a memory store since restarted)
        }
        s.seq = log.activity.last_seq;
        s.read = std::min(log.read, log.activity.last_seq);
        s.unread = s.seq - s.read;
        found.push_back({std::move(s), log.activity.last_ts});
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
