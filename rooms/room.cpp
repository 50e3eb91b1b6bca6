#include "rooms/room.hpp"

#include "protocol/server_messages.hpp"
#include "rooms/room_directory.hpp"
#include "rooms/worker_context.hpp"

#include <algorithm>

namespace parley::rooms {

using protocol::shared_frame;

namespace {
std::string fmt_disconnected(std::string_view user) {
    std::string text(user);
    text += " disconnected";
    return text;
}

// A broadcast made on a worker's thread is queued on that worker's members at once, under the
// room's lock, when they are at most this many: for small rooms the posted task (an allocation,
// a locked queue, a pass of the loop) cost more than the walk, about 150 ns per say in the
// profile of 100 rooms of 10. Larger local member lists still go through a task, so the lock
// is never held long.
constexpr std::uint32_t inline_fanout_limit = 64;
}  // namespace

room::room(std::string name, room_log& log, message_bus& bus, std::vector<worker_context*> workers,
           room_directory* directory, bool permanent)
    : name_(std::move(name)),
      log_(log),
      bus_(bus),
      workers_(std::move(workers)),
      directory_(directory),
      members_per_worker_(workers_.size(), 0),
      undelivered_(std::make_unique<std::atomic<std::uint32_t>[]>(workers_.size())),
      permanent_(permanent) {}

room::join_result room::join(const join_request& request) {
    join_result result;
    std::lock_guard lock(mutex_);
    if (closed_) {
        return result;  // gone
    }
    auto existing = members_.find(request.user);
    if (existing == members_.end() && all_members_locked() >= request.max_members) {
        result.outcome = join_result::status::full;
        return result;
    }
    bool first_session_of_user = existing == members_.end();
    if (first_session_of_user) {
        members_.emplace(std::string(request.user), 1);
    } else {
        ++existing->second;
    }
    ++members_per_worker_[request.who.worker];
    member_count_.fetch_add(1, std::memory_order_relaxed);

    result.outcome = join_result::status::joined;
    fill_reply_locked(request, result);
    result.joined_event = event_;
    if (first_session_of_user) {
        // Other nodes learn of every member, even where presence is not announced.
        shared_frame presence = protocol::encode_presence(name_, request.user, true);
        bus_.publish(room_event::join, name_, request.user, presence);
        if (all_members_locked() <= request.presence_max_members) {
            broadcast_locked(presence, request.who);
        }
    }
    return result;
}

room::join_result room::describe(const join_request& request) const {
    join_result result;
    std::lock_guard lock(mutex_);
    result.outcome = join_result::status::joined;
    fill_reply_locked(request, result);
    result.joined_event = event_;
    return result;
}

void room::fill_reply_locked(const join_request& request, join_result& result) const {
    result.epoch = log_.epoch();
    result.topic = topic_;
    result.members.reserve(members_.size() + remote_members_.size());
    for (const auto& [user, sessions] : members_) {
        result.members.push_back(user);
    }
    if (!remote_members_.empty()) {
        for (const auto& [user, node] : remote_members_) {
            result.members.push_back(user);
        }
        std::sort(result.members.begin(), result.members.end());
        result.members.erase(std::unique(result.members.begin(), result.members.end()), result.members.end());
    }
    bool same_epoch = !request.epoch || *request.epoch == log_.epoch();
    if (request.after && same_epoch) {
        // From memory: complete when nothing after `after` was dropped by retention or left
        // memory for storage, and all of it fits. Otherwise the client pages with `history`.
        result.history = log_.after(*request.after, request.recover_limit);
        result.recovered = log_.recovers(*request.after, request.recover_limit);
        return;
    }
    result.history = log_.before(log_.last_seq() + 1, request.recent);
    if (request.after) {
        result.recovered = false;  // another epoch: the client's seq means nothing here
    }
}

void room::leave(std::string_view user, registry::session_handle who, bool disconnected,
                 std::size_t presence_max_members) {
    std::lock_guard lock(mutex_);
    auto it = members_.find(user);
    if (it == members_.end()) {
        return;
    }
    --members_per_worker_[who.worker];
    member_count_.fetch_sub(1, std::memory_order_relaxed);
    if (--it->second == 0) {
        // The size before this leave decides, as the size after a join does for joins.
        bool announce = all_members_locked() <= presence_max_members;
        members_.erase(it);
        shared_frame presence = protocol::encode_presence(name_, user, false);
        bus_.publish(disconnected ? room_event::leave_disconnected : room_event::leave, name_, user, presence);
        if (announce && all_members_locked() != 0) {
            broadcast_locked(presence, who);
            if (disconnected) {
                broadcast_locked(protocol::encode_system(fmt_disconnected(user)), who);
            }
        }
    }
    close_if_unused_locked();
}

void room::close_if_unused_locked() {
    if (!closed_ && members_.empty() && remote_members_.empty() && !permanent_) {
        closed_ = true;
        directory_->erase(this);
    }
}

void room::close_if_unused() {
    std::lock_guard lock(mutex_);
    close_if_unused_locked();
}

bool room::set_declared(bool permanent, std::string topic) {
    std::lock_guard lock(mutex_);
    if (closed_) {
        return false;
    }
    permanent_ = permanent;
    topic_ = std::move(topic);
    close_if_unused_locked();
    return true;
}

std::int64_t room::say(std::string_view from, std::string_view text, std::int64_t ts, session_output* ack_to,
                       std::string_view ack_id) {
    std::lock_guard lock(mutex_);
    std::int64_t seq = log_.last_seq() + 1;
    shared_frame frame = protocol::encode_message(name_, from, text, seq, ts);
    log_.append(seq, ts, frame);
    if (ack_to != nullptr) {
        ack_to->send(protocol::encode_ack(ack_id, name_, seq));
    }
    broadcast_locked(frame, registry::session_handle{});
    return seq;
}

void room::announce(std::string_view text) {
    std::lock_guard lock(mutex_);
    shared_frame frame = protocol::encode_system(text);
    bus_.publish(room_event::system, name_, {}, frame);
    broadcast_locked(frame, registry::session_handle{});
}

void room::typing(std::string_view user, registry::session_handle who) {
    std::lock_guard lock(mutex_);
    shared_frame frame = protocol::encode_typing(name_, user);
    bus_.publish(room_event::typing, name_, user, frame);
    broadcast_locked(frame, who);
}

room::apply_outcome room::apply_message(std::int64_t seq, std::int64_t ts, const shared_frame& frame,
                                        bool allow_gap, const std::function<void()>& before_fanout) {
    std::lock_guard lock(mutex_);
    if (closed_) {
        return apply_outcome::gone;
    }
    if (seq <= log_.last_seq()) {
        return apply_outcome::duplicate;
    }
    if (seq != log_.last_seq() + 1 && !allow_gap) {
        return apply_outcome::gap;
    }
    log_.append(seq, ts, frame);
    if (before_fanout) {
        before_fanout();
    }
    broadcast_locked(frame, registry::session_handle{});
    close_if_unused_locked();
    return apply_outcome::applied;
}

std::int64_t room::last_seq() const {
    std::lock_guard lock(mutex_);
    return log_.last_seq();
}

std::pair<std::int64_t, std::int64_t> room::log_position() const {
    std::lock_guard lock(mutex_);
    return {log_.epoch(), log_.last_seq()};
}

bool room::apply_remote(room_event event, std::string_view node, std::string_view user, const shared_frame& frame,
                        std::size_t presence_max_members) {
    std::lock_guard lock(mutex_);
    if (closed_) {
        return false;
    }
    switch (event) {
    case room_event::join:
        if (remote_members_.emplace(std::string(user), std::string(node)).second) {
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
            broadcast_locked(frame, registry::session_handle{});
            if (event == room_event::leave_disconnected) {
                broadcast_locked(protocol::encode_system(fmt_disconnected(user)), registry::session_handle{});
            }
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

void room::remote_left_locked(std::string_view user, bool disconnected) {
    broadcast_locked(protocol::encode_presence(name_, user, false), registry::session_handle{});
    if (disconnected) {
        broadcast_locked(protocol::encode_system(fmt_disconnected(user)), registry::session_handle{});
    }
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

std::map<std::string, std::string, std::less<>> room::remote_members() const {
    std::lock_guard lock(mutex_);
    return remote_members_;
}

bool room::rebase(std::int64_t epoch, std::int64_t last_seq, std::vector<log_entry> newest) {
    std::lock_guard lock(mutex_);
    if (closed_) {
        return false;
    }
    bool changed = epoch != log_.epoch() || last_seq < log_.last_seq();
    std::int64_t stored_first = newest.empty() ? last_seq + 1 : newest.front().seq;
    // Everything from seq 1 may still be in the shared history, older than what memory holds.
    log_.reset(epoch, last_seq, std::move(newest), stored_first > 1 ? 1 : stored_first);
    if (changed) {
        send_fresh_joined_locked();
    }
    return true;
}

void room::detach(std::int64_t epoch) {
    std::lock_guard lock(mutex_);
    if (log_.epoch() == epoch) {
        return;
    }
    std::vector<log_entry> kept = log_.newest_entries();
    std::int64_t stored_first = log_.first_retained_seq();
    log_.reset(epoch, log_.last_seq(), std::move(kept), stored_first);
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
    broadcast_locked(protocol::encode_joined(name_, state.epoch, state.members, state.history, false, {}, topic_),
                     registry::session_handle{});
}

history_answer room::history(std::optional<std::int64_t> before, std::optional<std::int64_t> after,
                             std::size_t limit) const {
    std::lock_guard lock(mutex_);
    return log_.query(before, after, limit);
}

void room::broadcast_locked(const shared_frame& frame, registry::session_handle except) {
    std::uint64_t event = ++event_;
    worker_context* here = worker_context::current();
    std::shared_ptr<room> self;
    std::chrono::steady_clock::time_point posted_at;
    for (std::size_t w = 0; w < workers_.size(); ++w) {
        if (members_per_worker_[w] == 0) {
            continue;
        }
        worker_context* target = workers_[w];
        // Only this thread lowers its own count, and others raise it under the lock we hold:
        // zero means no earlier broadcast of this room waits in this worker's queue.
        if (target == here && members_per_worker_[w] <= inline_fanout_limit &&
            undelivered_[w].load(std::memory_order_relaxed) == 0) {
            target->deliver_now(this, frame, event, except);
            continue;
        }
        if (!self) {
            self = shared_from_this();
            posted_at = std::chrono::steady_clock::now();
        }
        undelivered_[w].fetch_add(1, std::memory_order_relaxed);
        // Posted under the lock: tasks for one worker are queued in the room's event order.
        target->executor().post([target, self, frame, event, except, posted_at, w] {
            target->deliver(self.get(), frame, event, except, posted_at);
            self->undelivered_[w].fetch_sub(1, std::memory_order_relaxed);
        });
    }
}

}  // namespace parley::rooms
