// The room's side of a cluster (see room.hpp, "cluster: events from the other nodes"): what the
// cluster's loop applies to it, kept apart from what its own members do (room.cpp).

#include "rooms/room.hpp"

#include "protocol/server_messages.hpp"
#include "rooms/room_directory.hpp"

namespace parley::rooms {

using protocol::shared_frame;

template <typename Predicate>
void room::drop_remote_locked(Predicate which, bool disconnected) {
    for (auto it = remote_members_.begin(); it != remote_members_.end();) {
        if (!which(*it)) {
            ++it;
            continue;
        }
        std::string user = it->first;
        it = remote_members_.erase(it);
        member_count_.fetch_sub(1, std::memory_order_relaxed);
        show_leave_locked(protocol::encode_presence(name_, user, false), user, disconnected,
                          registry::session_handle{});
    }
}

void room::close_if_unused() {
    std::lock_guard lock(mutex_);
    close_if_unused_locked();
}

room::apply_outcome room::apply_message(std::int64_t seq, std::int64_t ts, const shared_frame& frame,
                                        bool allow_gap, const std::function<void()>& before_fanout) {
    std::lock_guard lock(mutex_);
    if (closed_) {
        return apply_outcome::gone;
    }
    if (seq <= log_->last_seq()) {
        return apply_outcome::duplicate;
    }
    if (seq != log_->last_seq() + 1 && !allow_gap) {
        return apply_outcome::gap;
    }
    log_->append(seq, ts, frame);
    apply_effects_locked(frame);
    if (before_fanout) {
        before_fanout();
        // Only the node where it was said has a sender to answer: it alone reports the event,
        // so a receiver gets each message once from a cluster. Who did it is read back from the
        // frame, and only when a receiver wants the kind.
        const protocol::webhook_event kind = event_kind_of(frame);
        if (directory_ != nullptr && directory_->events().wants(kind)) {
            const std::optional<protocol::stored_event> e = protocol::read_stored_event(frame);
            report_locked(kind, !e ? std::string() : kind == protocol::webhook_event::message ? e->from : e->by, frame,
                          ts);
        }
    }
    broadcast_locked(frame, registry::session_handle{});
    close_if_unused_locked();
    return apply_outcome::applied;
}

std::int64_t room::last_seq() const {
    std::lock_guard lock(mutex_);
    return log_->last_seq();
}

std::pair<std::int64_t, std::int64_t> room::log_position() const {
    std::lock_guard lock(mutex_);
    return {log_->epoch(), log_->last_seq()};
}

bool room::apply_remote(room_event event, std::string_view node, std::string_view user, const shared_frame& frame,
                        std::size_t presence_max_members) {
    std::lock_guard lock(mutex_);
    if (closed_) {
        return false;
    }
    switch (event) {
    case room_event::join:
        // A user held by another node before (it moved) is that node's member no more.
        if (remote_members_.insert_or_assign(std::string(user), std::string(node)).second) {
            member_count_.fetch_add(1, std::memory_order_relaxed);
        }
        if (all_members_locked() <= presence_max_members) {
            broadcast_locked(frame, registry::session_handle{});
        }
        break;
    case room_event::leave:
    case room_event::leave_disconnected: {
        bool announce = all_members_locked() <= presence_max_members;
        if (auto it = remote_members_.find(user); it != remote_members_.end() && it->second == node) {
            remote_members_.erase(it);
            member_count_.fetch_sub(1, std::memory_order_relaxed);
        }
        if (announce) {
            show_leave_locked(frame, user, event == room_event::leave_disconnected, registry::session_handle{});
        }
        close_if_unused_locked();
        break;
    }
    case room_event::typing:
    case room_event::system:
        broadcast_locked(frame, registry::session_handle{});
        break;
    }
    return true;
}

bool room::set_remote_members(const std::map<std::string, std::string, std::less<>>& remote) {
    std::lock_guard lock(mutex_);
    if (closed_) {
        return false;
    }
    drop_remote_locked([&remote](const auto& member) { return remote.find(member.first) == remote.end(); }, false);
    for (const auto& [user, node] : remote) {
        auto [it, added] = remote_members_.insert_or_assign(user, node);
        if (added) {
            member_count_.fetch_add(1, std::memory_order_relaxed);
            broadcast_locked(protocol::encode_presence(name_, user, true), registry::session_handle{});
        }
    }
    close_if_unused_locked();
    return true;
}

bool room::drop_node(std::string_view node) {
    std::lock_guard lock(mutex_);
    if (closed_) {
        return false;
    }
    drop_remote_locked([node](const auto& member) { return member.second == node; }, true);
    close_if_unused_locked();
    return true;
}

std::vector<std::string> room::local_members() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    out.reserve(members_.size());
    for (const auto& [user, sessions] : members_) {
        out.push_back(user);
    }
    return out;
}

bool room::rebase(std::int64_t epoch, std::int64_t last_seq, std::vector<log_entry> newest) {
    std::lock_guard lock(mutex_);
    if (closed_) {
        return false;
    }
    bool changed = epoch != log_->epoch() || last_seq < log_->last_seq();
    std::int64_t stored_first = newest.empty() ? last_seq + 1 : newest.front().seq;
    // Everything from seq 1 may still be in the shared history, older than what memory holds.
    log_->reset(epoch, last_seq, std::move(newest), stored_first > 1 ? 1 : stored_first);
    if (changed) {
        send_fresh_joined_locked();
    }
    return true;
}

void room::detach(std::int64_t epoch) {
    std::lock_guard lock(mutex_);
    if (log_->epoch() == epoch) {
        return;
    }
    std::vector<log_entry> kept = log_->newest_entries();
    std::int64_t stored_first = log_->first_retained_seq();
    log_->reset(epoch, log_->last_seq(), std::move(kept), stored_first);
    send_fresh_joined_locked();
}

void room::send_fresh_joined_locked() {
    if (members_.empty()) {
        return;
    }
    // Clients' seqs from the old epoch mean nothing now: a `joined` without `re`, with
    // recovered false, starts the room over on every client here.
    join_request shown{};
    join_result state;
    fill_reply_locked(shown, state);
    broadcast_locked(protocol::encode_joined(name_, state.epoch, state.members, state.history, false, {}, &state.standing),
                     registry::session_handle{});
}

}  // namespace parley::rooms
