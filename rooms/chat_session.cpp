#include "rooms/chat_session.hpp"

#include "protocol/access_token.hpp"
#include "protocol/names.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/room.hpp"
#include "rooms/session_task.hpp"
#include "rooms/worker_context.hpp"

#include <algorithm>
#include <map>

namespace parley::rooms {

using protocol::error_code;
using protocol::request_type;

chat_session::chat_session(worker_context& worker, session_output& output)
    : worker_(worker),
      output_(output),
      refilled_us_(steady_micros()),
      tokens_(static_cast<float>(worker.settings().rate_limit_burst)) {
    handle_ = {worker.index(), worker.add_session(this)};
}

chat_session::~chat_session() {
    end(true);
    worker_.remove_session(handle_.session);
}

void chat_session::on_text(std::string_view message) {
    if (ended_) {
        return;
    }
    if (held_) {
        // A join waits: handled once it is answered.
        if (held_->size() >= max_held) {
            fail(error_code::rate_limited, "too many requests while a join waits for the cluster", {});
            return;
        }
        held_->emplace_back(message);
        return;
    }
    worker_.counters().messages_received.add();
    // The worker's reused parse result, given back however this handler returns.
    struct borrowed {
        worker_context& worker;
        protocol::parse_result_request* scratch;
        protocol::parse_result_request own;
        ~borrowed() {
            if (scratch != nullptr) {
                worker.give_back_request(scratch);
            }
        }
        protocol::parse_result_request& get() { return scratch != nullptr ? *scratch : own; }
    } lease{worker_, worker_.borrow_request(), {}};
    protocol::parse_result_request& parsed = lease.get();
    protocol::parse_request(message, parsed);
    if (!take_token()) {
        // A parsed request keeps its id in the request; the result's id is only set on failure.
        const std::string& id = parsed.value ? parsed.value->id : parsed.id;
        fail(error_code::rate_limited, protocol::default_message(error_code::rate_limited), id);
        // Persistent abuse: a client that keeps sending into an empty bucket is cut off.
        if (++rejected_in_a_row_ > worker_.settings().rate_limit_strikes) {
            output_.close(protocol::close_code::policy_violation, "rate limit exceeded");
        }
        return;
    }
    rejected_in_a_row_ = 0;
    if (!parsed.value) {
        fail(parsed.error, parsed.message, parsed.id);
        return;
    }
    dispatch(*parsed.value);
}

std::uint64_t chat_session::steady_micros() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

bool chat_session::take_token() {
    const auto& s = worker_.settings();
    const std::uint64_t now = steady_micros();
    const double elapsed = static_cast<double>(now - refilled_us_) / 1e6;
    refilled_us_ = now;
    // float holds every whole token count up to 2^24, above the largest allowed burst (10^7).
    tokens_ = static_cast<float>(std::min(s.rate_limit_burst, tokens_ + elapsed * s.rate_limit_per_second));
    if (tokens_ < 1.0f) {
        return false;
    }
    tokens_ -= 1.0f;
    return true;
}

void chat_session::dispatch(request& req) {
    if (req.type == request_type::login) {
        on_login(req);
        return;
    }
    if (!logged_in()) {
        fail(error_code::not_logged_in, protocol::default_message(error_code::not_logged_in), req.id);
        return;
    }
    switch (req.type) {
    case request_type::login: break;
    case request_type::join: on_join(req); break;
    case request_type::leave: on_leave(req); break;
    case request_type::say: on_say(req); break;
    case request_type::dm: on_dm(req); break;
    case request_type::users: on_users(req); break;
    case request_type::rooms: on_rooms(req); break;
    case request_type::history: on_history(req); break;
    case request_type::typing: on_typing(req); break;
    case request_type::dm_history: on_dm_history(req); break;
    case request_type::read: on_read(req); break;
    case request_type::kick:
    case request_type::ban:
    case request_type::unban:
    case request_type::mute:
    case request_type::unmute:
    case request_type::set_role:
    case request_type::set_topic:
    case request_type::set_slow_mode: on_moderate(req); break;
    case request_type::edit:
    case request_type::delete_message: on_change_message(req); break;
    case request_type::members: on_members(req); break;
    }
}

void chat_session::fail(error_code code, std::string_view message, std::string_view re) {
    worker_.counters().errors[static_cast<std::size_t>(code)].add();
    send(protocol::encode_error(code, message, re));
}

std::vector<chat_session::membership>::iterator chat_session::find_room(std::string_view name) {
    return std::find_if(rooms_.begin(), rooms_.end(), [&](const membership& m) { return m.joined->name() == name; });
}

std::vector<chat_session::membership>::iterator chat_session::room_of(const request& req) {
    auto it = find_room(req.room);
    if (it == rooms_.end()) {
        fail(error_code::not_in_room, "you are not in '" + req.room + "'", req.id);
    }
    return it;
}

void chat_session::on_join(request& req, bool retried) {
    const auto& s = worker_.settings();
    if (!protocol::valid_room_name(req.room)) {
        fail(error_code::invalid_name, protocol::room_name_rule(), req.id);
        return;
    }
    if (!worker_.access().may_join(req.room, user_, worker_.grant_of(handle_.session))) {
        fail(error_code::unauthorized, "you may not join '" + req.room + "'", req.id);
        return;
    }
    auto found = find_room(req.room);
    membership* existing = found == rooms_.end() ? nullptr : &*found;
    if (!existing && rooms_.size() >= s.max_rooms_per_connection) {
        fail(error_code::too_many_rooms,
             "a connection may be in at most " + std::to_string(s.max_rooms_per_connection) + " rooms", req.id);
        return;
    }
    const room_grant* grant = worker_.grant_of(handle_.session);
    cluster_link* cluster = worker_.hub().cluster();
    room::join_request jr{user_,
                          handle_,
                          req.after,
                          req.epoch,
                          s.joined_history,
                          s.history_per_room,
                          s.joined_members_max,
                          s.max_room_members,
                          s.presence_max_members,
                          keeps_identities(),
                          cluster != nullptr,
                          grant != nullptr && keeps_identities() ? grant->role_in(req.room) : room_role::member};
    if (existing) {
        // Already a member: answer with the current state again, no second membership.
        auto result = existing->joined->describe(jr);
        send(protocol::encode_joined(existing->joined->name(), result.epoch, result.members, result.history,
                                     result.recovered, req.id, &result.standing));
        return;
    }
    // In a cluster that numbers the room's messages, the room must be fed here first: its
    // bans, history and seq are the cluster's, not what this node last heard. A join retried
    // after the cluster fed the room (jr.needs_feed off) takes it as it is then.
    jr.needs_feed = cluster != nullptr && cluster->sequencing(req.room) && !retried;
    room::join_result result;
    auto target = worker_.hub().rooms().with_room(req.room, [&](room& r) {
        result = r.join(jr);
        return result.outcome != room::join_result::status::gone;
    });
    if (result.outcome == room::join_result::status::not_fed) {
        target->close_if_unused();
        open_then_join(std::move(req));
        return;
    }
    if (result.outcome == room::join_result::status::full) {
        fail(error_code::room_full, "the room '" + req.room + "' is full", req.id);
        return;
    }
    if (result.outcome == room::join_result::status::banned) {
        // The lookup may have made the room for this join alone: nobody else in it, it goes.
        target->close_if_unused();
        fail(error_code::banned, "you are banned from '" + req.room + "'", req.id);
        return;
    }
    // Reply before any broadcast that was posted after our join can run on this worker.
    send(protocol::encode_joined(target->name(), result.epoch, result.members, result.history, result.recovered,
                                 req.id, &result.standing));
    worker_.add_member(target.get(), this, result.joined_event);
    if (result.may_own && cluster->sequencing(target->name())) {
        // Whether the room is new is the cluster's to say: the owner's role comes as an event.
        cluster->submit_event(target->ownership_event(user_, unix_millis()), handle_, {});
    }
    rooms_.push_back({std::move(target), 0});
}

void chat_session::open_then_join(request req) {
    held_ = std::make_unique<std::vector<std::string>>();
    const std::string room_name = req.room;
    worker_.hub().cluster()->open_room(
        room_name, [hub = &worker_.hub(), who = handle_, req = std::move(req)](bool) mutable {
            post_to_session(*hub, who, [req = std::move(req)](chat_session& s) mutable {
                // Fed, or the cluster cannot feed it now (then the room is served here alone):
                // either way the join goes ahead without waiting again.
                std::unique_ptr<std::vector<std::string>> held = std::move(s.held_);
                s.on_join(req, true);
                s.release_held(std::move(held));
            });
        });
}

void chat_session::release_held(std::unique_ptr<std::vector<std::string>> held) {
    for (std::size_t i = 0; i < held->size(); ++i) {
        if (held_) {
            // Another join waits: the rest stay behind it, in order.
            held_->insert(held_->begin(), std::make_move_iterator(held->begin() + static_cast<std::ptrdiff_t>(i)),
                          std::make_move_iterator(held->end()));
            return;
        }
        on_text((*held)[i]);
    }
}

void chat_session::leave_room(std::vector<membership>::iterator it, bool disconnected) {
    std::shared_ptr<room> r = std::move(it->joined);
    rooms_.erase(it);
    worker_.remove_member(r.get(), this);
    r->leave(user_, handle_, disconnected, worker_.settings().presence_max_members);
}

void chat_session::on_leave(request& req) {
    auto it = room_of(req);
    if (it == rooms_.end()) {
        return;
    }
    std::string name = it->joined->name();
    leave_room(it, false);
    send(protocol::encode_left(name, req.id));
}

void chat_session::evict(const room* r, std::string_view reason) {
    std::string text = "the room '" + r->name() + "' was closed by an administrator";
    if (!reason.empty()) {
        text.append(": ").append(reason);
    }
    remove_from(r, text);
}

void chat_session::remove_from(const room* r, std::string_view notice) {
    auto it = std::find_if(rooms_.begin(), rooms_.end(), [r](const membership& m) { return m.joined.get() == r; });
    if (it == rooms_.end()) {
        return;
    }
    std::string name = it->joined->name();
    leave_room(it, false);
    send(protocol::encode_left(name, {}));
    send(protocol::encode_system(notice));
}

bool chat_session::check_text(const request& req) {
    if (req.text.empty()) {
        fail(error_code::bad_request, "field 'text' must not be empty", req.id);
        return false;
    }
    std::size_t max = worker_.settings().max_text_bytes;
    if (req.text.size() > max) {
        fail(error_code::too_large, "text is " + std::to_string(req.text.size()) + " bytes; the limit is " +
                                        std::to_string(max),
             req.id);
        return false;
    }
    return true;
}

void chat_session::on_say(request& req) {
    auto found = room_of(req);
    if (found == rooms_.end()) {
        return;
    }
    membership* m = &*found;
    if (!check_text(req)) {
        return;
    }
    // Only a say with an id is acknowledged.
    if (cluster_link* cluster = worker_.hub().cluster(); cluster != nullptr && cluster->sequencing(m->joined->name())) {
        const std::int64_t now = unix_millis();
        if (!refused_say(m->joined->may_say(user_, now), m->joined->name(), req.id)) {
            // The cluster numbers it; it comes back to the room here as to every node's.
            cluster->submit_say(m->joined->name(), user_, req.text, now, handle_, req.id);
        }
    } else if (cluster != nullptr) {
        say_here(m->joined->name(), req.text, unix_millis(), req.id);
    } else {
        const room::said said =
            m->joined->say(user_, req.text, unix_millis(), req.id.empty() ? nullptr : &output_, req.id);
        if (refused_say(said.refused, m->joined->name(), req.id)) {
            return;
        }
    }
    worker_.counters().says.add();
}

bool chat_session::refused_say(room::say_refusal refusal, const std::string& room_name, std::string_view re) {
    if (refusal == room::say_refusal::muted) {
        fail(error_code::muted, "you are muted in '" + room_name + "'", re);
        return true;
    }
    if (refusal == room::say_refusal::slowed) {
        fail(error_code::rate_limited, "slow mode: wait before saying more in '" + room_name + "'", re);
        return true;
    }
    return false;
}

void chat_session::say_here(std::string_view room_name, std::string_view text, std::int64_t ts,
                            std::string_view ack_id) {
    auto found = find_room(room_name);
    if (found == rooms_.end()) {
        return;
    }
    cluster_link& cluster = *worker_.hub().cluster();
    room& target = *found->joined;
    target.detach(cluster.detached_epoch());
    target.say(user_, text, ts, ack_id.empty() ? nullptr : &output_, ack_id);
    cluster.keep_for_cluster(target.name(), user_, text, ts);
}

void chat_session::on_users(request& req) {
    cluster_link* cluster = worker_.hub().cluster();
    if (cluster == nullptr) {
        answer_users(std::nullopt, req.id);
        return;
    }
    // Names logged in on other nodes are read from the cluster, answered on this worker.
    chat_hub& hub = worker_.hub();
    cluster->list_users([&hub, asker = handle_, re = req.id](std::optional<std::vector<std::string>> listed) {
        post_to_session(hub, asker, [listed = std::move(listed), re](chat_session& s) mutable {
            s.answer_users(std::move(listed), re);
        });
    });
}

void chat_session::answer_users(std::optional<std::vector<std::string>> cluster_users, const std::string& re) {
    std::vector<std::string> names = worker_.hub().users().names();
    if (cluster_users) {
        names.insert(names.end(), cluster_users->begin(), cluster_users->end());
        std::sort(names.begin(), names.end());
        names.erase(std::unique(names.begin(), names.end()), names.end());
    }
    send(protocol::encode_users(names, re));
}

void chat_session::on_rooms(request& req) {
    cluster_link* cluster = worker_.hub().cluster();
    if (cluster == nullptr) {
        answer_rooms(std::nullopt, req.id);
        return;
    }
    // Each node holds the members of the rooms it feeds only: the list is the cluster's, read
    // on the cluster's thread and answered on this session's worker.
    chat_hub& hub = worker_.hub();
    cluster->list_rooms([&hub, asker = handle_, re = req.id](std::optional<std::vector<listed_room>> listed) {
        post_to_session(hub, asker, [listed = std::move(listed), re](chat_session& s) mutable {
            s.answer_rooms(std::move(listed), re);
        });
    });
}

void chat_session::answer_rooms(std::optional<std::vector<listed_room>> cluster_rooms, const std::string& re) {
    // This node's rooms (declared ones with nobody in them too), with the cluster's counts and
    // rooms added.
    std::map<std::string, std::pair<std::size_t, std::string>> merged;
    for (const auto& [name, members] : worker_.hub().rooms().list()) {
        std::shared_ptr<room> r = worker_.hub().rooms().find(name);
        merged[name] = {members, r ? r->topic() : std::string()};
    }
    if (cluster_rooms) {
        for (auto& listed : *cluster_rooms) {
            auto& entry = merged[listed.name];
            entry.first = listed.members;
            if (entry.second.empty()) {
                entry.second = std::move(listed.topic);
            }
        }
    }
    const room_access& access = worker_.access();
    const room_grant* grant = access.has_private_rooms() ? worker_.grant_of(handle_.session) : nullptr;
    std::vector<std::pair<std::string, std::size_t>> rooms_listed;
    std::vector<std::string> topics;
    for (auto& [name, entry] : merged) {
        // A private room is not even named to those who may not join it.
        if (access.has_private_rooms() && !access.may_join(name, user_, grant) && !access.may_join(name, user_, nullptr)) {
            continue;
        }
        rooms_listed.emplace_back(name, entry.first);
        topics.push_back(std::move(entry.second));
    }
    send(protocol::encode_rooms(rooms_listed, re, &topics));
}

std::optional<std::size_t> chat_session::page_limit(const request& req) {
    const auto& s = worker_.settings();
    std::int64_t limit = req.limit ? *req.limit : static_cast<std::int64_t>(s.history_default_limit);
    if (limit < 1 || limit > static_cast<std::int64_t>(s.history_max_limit)) {
        fail(error_code::bad_request, "limit must be 1-" + std::to_string(s.history_max_limit), req.id);
        return std::nullopt;
    }
    return static_cast<std::size_t>(limit);
}

void chat_session::on_history(request& req) {
    auto found = room_of(req);
    if (found == rooms_.end()) {
        return;
    }
    membership* m = &*found;
    std::optional<std::size_t> limit = page_limit(req);
    if (!limit) {
        return;
    }
    history_answer answer = m->joined->history(req.before, req.after, *limit);
    if (!answer.stored) {
        send(protocol::encode_history(m->joined->name(), join_answer({}, answer), req.id));
        return;
    }
    // Older than memory holds: the store reads it on its own thread, so this worker's other
    // rooms are not kept waiting, and the reply is posted back here. The session may be gone
    // by then; its id is looked up again.
    chat_hub& hub = worker_.hub();
    std::shared_ptr<room> target = m->joined;
    auto reply_later = [&hub, asker = handle_, target,
                        re = req.id](std::optional<std::vector<protocol::shared_frame>> messages) {
        auto reply = messages ? protocol::encode_history(target->name(), *messages, re)
                              : protocol::encode_error(error_code::unavailable,
                                                       "the room's older history cannot be read right now", re);
        post_to_session(hub, asker, [reply](chat_session& session) { session.output().send(reply); });
    };
    hub.history().complete(target->log(), std::move(answer), std::move(reply_later));
}

void chat_session::on_members(request& req) {
    // Pages are small enough to answer at once, and a room of 100,000 lists in 100 of them.
    constexpr std::int64_t default_page = 100;
    constexpr std::int64_t largest_page = 1000;
    auto found = room_of(req);
    if (found == rooms_.end()) {
        return;
    }
    const std::int64_t limit = req.limit ? *req.limit : default_page;
    if (limit < 1 || limit > largest_page) {
        fail(error_code::bad_request, "limit must be 1-" + std::to_string(largest_page), req.id);
        return;
    }
    if (!req.after_name.empty() && !protocol::valid_user_name(req.after_name)) {
        fail(error_code::invalid_name, "'after' must be a user name (the last one of the page before)", req.id);
        return;
    }
    bool more = false;
    protocol::member_list page = found->joined->members_page(req.after_name, static_cast<std::size_t>(limit), more);
    send(protocol::encode_members(found->joined->name(), page, more, req.id));
}

void chat_session::on_typing(request& req) {
    auto found = room_of(req);
    if (found == rooms_.end()) {
        return;
    }
    membership* m = &*found;
    std::int64_t now = unix_millis();
    // Throttled silently: typing is a hint, and a client that types fast is not at fault.
    if (m->last_typing_ms != 0 && now - m->last_typing_ms < static_cast<std::int64_t>(worker_.settings().typing_interval_ms)) {
        return;
    }
    m->last_typing_ms = now;
    m->joined->typing(user_, handle_);
}

void chat_session::end(bool disconnected) {
    if (ended_) {
        return;
    }
    ended_ = true;
    while (!rooms_.empty()) {
        leave_room(rooms_.end() - 1, disconnected);
    }
    if (markers_attached_) {
        // Before the name is free: its next holder must not find this session's markers.
        worker_.hub().markers().detach(user_);
        markers_attached_ = false;
    }
    if (welcomed_) {
        // After the rooms' member_left events, before the name is free for another login.
        const chat_events& events = worker_.hub().rooms().events();
        if (events.wants(protocol::webhook_event::user_disconnected)) {
            events.emit(protocol::webhook_event::user_disconnected, {}, user_, {}, unix_millis());
        }
    }
    if (!user_.empty()) {  // logged in, or waiting for the cluster to grant the name
        release_name(user_);
        worker_.drop_grant(handle_.session);
    }
}

}  // namespace parley::rooms
