#include "rooms/room.hpp"

#include "protocol/frame_encoder.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/history/unix_clock.hpp"
#include "rooms/room_directory.hpp"
#include "rooms/room_settings.hpp"
#include "rooms/worker_context.hpp"

#include <algorithm>

namespace parley::rooms {

using protocol::shared_frame;

namespace {
// A broadcast made on a worker's thread is queued on that worker's members at once, under the
// room's lock, when they are at most this many: for small rooms the posted task (an allocation,
// a locked queue, a pass of the loop) cost more than the walk, about 150 ns per say in the
// profile of 100 rooms of 10. Larger local member lists still go through a task, so the lock
// is never held long.
constexpr std::uint32_t inline_fanout_limit = 64;
}  // namespace

room::room(std::string name, log_handle log, message_bus& bus, std::vector<worker_context*> workers,
           room_directory* directory, bool permanent, const std::vector<room_setting>& settings, bool identities)
    : name_(std::move(name)),
      log_(std::move(log)),
      bus_(bus),
      workers_(std::move(workers)),
      directory_(directory),
      members_per_worker_(workers_.size(), 0),
      undelivered_(std::make_unique<std::atomic<std::uint32_t>[]>(workers_.size())),
      permanent_(permanent),
      identities_(identities) {
    loaded_settings loaded = load_settings(settings);
    moderation_ = std::move(loaded.moderation);
    own_topic_ = std::move(loaded.topic);
    // No lock: nothing else can see the room yet, and the directory's shard lock is held here,
    // the reverse of the order a closing room takes them in.
    note_care_locked();
}

void room::save_locked(const room_setting& setting) {
    if (directory_ != nullptr) {
        directory_->store().save_room_setting(name_, setting);
    }
}

void room::report_locked(protocol::webhook_event kind, std::string_view user, const shared_frame& frame,
                         std::int64_t ts_ms) const {
    if (directory_ != nullptr && directory_->events().wants(kind)) {
        directory_->events().emit(kind, name_, user, frame, ts_ms);
    }
}

protocol::webhook_event room::event_kind_of(const shared_frame& frame) {
    const std::string_view payload = protocol::frame_payload(frame.view());
    using protocol::webhook_event;
    return payload.starts_with("{\"type\":\"edited\"")      ? webhook_event::message_edited
           : payload.starts_with("{\"type\":\"deleted\"")   ? webhook_event::message_deleted
           : payload.starts_with("{\"type\":\"moderation\"") ? webhook_event::moderation
                                                              : webhook_event::message;
}

void room::note_care_locked() {
    needs_care_.store(moderation_.has_timed() || moderation_.slow_mode_s() > 0, std::memory_order_relaxed);
}

void room::set_fed(bool fed) {
    std::lock_guard lock(mutex_);
    fed_ = fed;
}

bool room::fed() const {
    std::lock_guard lock(mutex_);
    return fed_;
}

bool room::stop_feed_if_unused() {
    std::lock_guard lock(mutex_);
    if (!members_.empty()) {
        return false;
    }
    fed_ = false;
    return true;
}

void room::set_identities(bool identities) {
    std::lock_guard lock(mutex_);
    identities_ = identities;
}

room::join_result room::join(const join_request& request) {
    join_result result;
    std::lock_guard lock(mutex_);
    if (closed_) {
        return result;  // gone
    }
    if (request.needs_feed && !fed_) {
        result.outcome = join_result::status::not_fed;
        return result;
    }
    if (identities_ && moderation_.has_bans() && moderation_.ban_of(request.user, unix_millis()) != nullptr) {
        result.outcome = join_result::status::banned;
        return result;
    }
    auto existing = members_.find(request.user);
    if (existing == members_.end() && all_members_locked() >= request.max_members) {
        result.outcome = join_result::status::full;
        return result;
    }
    if (identities_) {
        if (request.owns_if_new && members_.empty() && remote_members_.empty() && !permanent_ &&
            log_->last_seq() == 0 && moderation_.roles().empty() && request.claimed_role == room_role::member) {
            if (request.ownership_by_cluster) {
                result.may_own = true;
            } else {
                moderation_.set_role(request.user, room_role::owner);
                save_locked(role_setting(request.user, room_role::owner));
            }
        }
        moderation_.claim_role(request.user, request.claimed_role);
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
        if (all_members_locked() == 1) {
            report_locked(protocol::webhook_event::room_occupied, {}, {}, unix_millis());
        }
        report_locked(protocol::webhook_event::member_joined, request.user, presence, unix_millis());
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
    result.epoch = log_->epoch();
    protocol::room_standing& standing = result.standing;
    standing.topic = topic_locked();
    standing.slow_mode_s = moderation_.slow_mode_s();
    if (identities_) {
        for (const auto& [user, role] : moderation_.roles()) {
            standing.roles.emplace_back(user, std::string(role_name(role)));
        }
        const std::int64_t now = unix_millis();
        auto list = [now](const std::map<std::string, sanction, std::less<>>& from,
                          std::vector<protocol::sanction_info>& to) {
            for (const auto& [user, s] : from) {
                if (s.active_at(now)) {
                    to.push_back({user, s.by, s.reason, s.until_ms});
                }
            }
        };
        list(moderation_.bans(), standing.bans);
        list(moderation_.mutes(), standing.mutes);
    }
    // Only the start of a big room's list: a join costs the same in a room of 100,000 as in a
    // room of 100 (the rest is paged with `members`).
    bool more = false;
    result.members = members_page_locked({}, request.joined_members_max, more);
    result.members.truncated = more;
    bool same_epoch = !request.epoch || *request.epoch == log_->epoch();
    if (request.after && same_epoch) {
        // From memory: complete when nothing after `after` was dropped by retention or left
        // memory for storage, and all of it fits. Otherwise the client pages with `history`.
        result.history = log_->after(*request.after, request.recover_limit);
        result.recovered = log_->recovers(*request.after, request.recover_limit);
        return;
    }
    result.history = log_->before(log_->last_seq() + 1, request.recent);
    if (request.after) {
        result.recovered = false;  // another epoch: the client's seq means nothing here
    }
}

protocol::member_list room::members_page(std::string_view after, std::size_t limit, bool& more) const {
    std::lock_guard lock(mutex_);
    return members_page_locked(after, limit, more);
}

protocol::member_list room::members_page_locked(std::string_view after, std::size_t limit, bool& more) const {
    // The two sorted maps (members here, members on other nodes) walked together from after
    // `after`, a name in both taken once.
    auto local = after.empty() ? members_.begin() : members_.upper_bound(after);
    auto remote = after.empty() ? remote_members_.begin() : remote_members_.upper_bound(after);
    protocol::member_list page;
    page.names.reserve(std::min(limit, all_members_locked()));
    while (local != members_.end() || remote != remote_members_.end()) {
        const bool take_local = remote == remote_members_.end() ||
                                (local != members_.end() && local->first <= remote->first);
        const std::string& name = take_local ? local->first : remote->first;
        if (page.names.size() == limit) {
            break;
        }
        page.names.push_back(name);
        if (take_local) {
            if (remote != remote_members_.end() && remote->first == local->first) {
                ++remote;
            }
            ++local;
        } else {
            ++remote;
        }
    }
    more = local != members_.end() || remote != remote_members_.end();
    // Exact when the page is the whole list; else the sum, which a name moving between nodes
    // may count twice for a moment.
    page.count = after.empty() && !more ? page.names.size() : all_members_locked();
    return page;
}

void room::show_member_count(std::int64_t now_ms, std::int64_t interval_ms, std::size_t presence_max_members) {
    std::lock_guard lock(mutex_);
    const std::size_t count = all_members_locked();
    if (closed_ || members_.empty() || count <= presence_max_members || count == count_shown_ ||
        now_ms - count_sent_ms_ < interval_ms) {
        return;
    }
    count_shown_ = count;
    count_sent_ms_ = now_ms;
    broadcast_locked(protocol::encode_presence_count(name_, count), registry::session_handle{});
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
        report_locked(protocol::webhook_event::member_left, user, presence, unix_millis());
        if (all_members_locked() == 0) {
            report_locked(protocol::webhook_event::room_vacated, {}, {}, unix_millis());
        }
        if (announce && all_members_locked() != 0) {
            show_leave_locked(presence, user, disconnected, who);
        }
    }
    close_if_unused_locked();
}

void room::show_leave_locked(const shared_frame& presence, std::string_view user, bool disconnected,
                             registry::session_handle except) {
    broadcast_locked(presence, except);
    if (disconnected) {
        std::string text(user);
        text += " disconnected";
        broadcast_locked(protocol::encode_system(text), except);
    }
}

void room::close_if_unused_locked() {
    if (!closed_ && members_.empty() && remote_members_.empty() && !permanent_) {
        closed_ = true;
        directory_->erase(this);
    }
}

room::say_refusal room::may_say(std::string_view user, std::int64_t ts) {
    std::lock_guard lock(mutex_);
    if (moderation_.says_unchecked()) {
        return say_refusal::none;
    }
    if (identities_ && moderation_.mute_of(user, ts) != nullptr) {
        return say_refusal::muted;
    }
    return moderation_.take_say_turn(user, ts) ? say_refusal::none : say_refusal::slowed;
}

std::string room::topic() const {
    std::lock_guard lock(mutex_);
    return topic_locked();
}

bool room::set_declared(bool permanent, std::string topic, room_moderation::role_map roles) {
    std::lock_guard lock(mutex_);
    if (closed_) {
        return false;
    }
    permanent_ = permanent;
    configured_topic_ = std::move(topic);
    moderation_.set_configured_roles(std::move(roles));
    close_if_unused_locked();
    return true;
}

room::said room::say(std::string_view from, std::string_view text, std::int64_t ts, session_output* ack_to,
                     std::string_view ack_id) {
    std::lock_guard lock(mutex_);
    if (!moderation_.says_unchecked()) {
        if (identities_ && moderation_.mute_of(from, ts) != nullptr) {
            return {0, say_refusal::muted};
        }
        if (!moderation_.take_say_turn(from, ts)) {
            return {0, say_refusal::slowed};
        }
    }
    std::int64_t seq = log_->last_seq() + 1;
    shared_frame frame = protocol::encode_message(name_, from, text, seq, ts);
    log_->append(seq, ts, frame);
    if (ack_to != nullptr) {
        ack_to->send(protocol::encode_ack(ack_id, name_, seq));
    }
    report_locked(protocol::webhook_event::message, from, frame, ts);
    broadcast_locked(frame, registry::session_handle{});
    return {seq, say_refusal::none};
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

history_answer room::history(std::optional<std::int64_t> before, std::optional<std::int64_t> after,
                             std::size_t limit) const {
    std::lock_guard lock(mutex_);
    return log_->query(before, after, limit);
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
