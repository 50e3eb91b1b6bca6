#include "rooms/cluster/cluster_node.hpp"

#include "rooms/chat_hub.hpp"
#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/cluster_scripts.hpp"
#include "rooms/cluster/stream_entries.hpp"
#include "rooms/room.hpp"
#include "rooms/room_directory.hpp"
#include "rooms/history/stream_history_store.hpp"
#include "rooms/history/unix_clock.hpp"

#include <algorithm>
#include <bit>
#include <string>

namespace parley::cluster {

using protocol::shared_frame;
using rooms::room_event;

namespace {

// Forwards the rooms' events to the node (the hub owns the bus; the server owns the node).
class cluster_bus final : public rooms::message_bus {
public:
    explicit cluster_bus(cluster_node& node) : node_(node) {}
    void publish(room_event event, std::string_view room, std::string_view user, const shared_frame& frame) override {
        node_.publish(event, room, user, frame);
    }

private:
    cluster_node& node_;
};

}  // namespace

cluster_node::cluster_node(redis_link& link, cluster_options options)
    : link_(link),
      options_(std::move(options)),
      start_epoch_(rooms::unix_millis()),
      incarnation_(std::to_string(start_epoch_)),
      detached_epoch_(start_epoch_),
      log_epoch_(start_epoch_) {}

cluster_node::~cluster_node() { stop(); }

std::unique_ptr<rooms::message_bus> cluster_node::make_bus() { return std::make_unique<cluster_bus>(*this); }

std::unique_ptr<rooms::history_store> cluster_node::make_history_store() {
    return rooms::make_stream_history_store(
        options_.history_per_room, [this] { return log_epoch(); },
        [this](std::string room, rooms::stored_read what,
               std::function<void(std::optional<std::vector<rooms::log_entry>>)> done) {
            read_stream(std::move(room), what, std::move(done));
        });
}

void cluster_node::run(std::function<void()> task) { link_.post(std::move(task)); }

void cluster_node::report(report_level level, std::string_view line) const {
    if (options_.report) {
        options_.report(level, line);
    }
}

// ---- phases ----

void cluster_node::stop() {
    stopped_ = true;
    phase_ = phase::down;
    sequencing_.store(false, std::memory_order_release);
    degraded_.store(true, std::memory_order_relaxed);
}

void cluster_node::depart(std::function<void()> done) {
    run([this, done = std::move(done)]() mutable {
        if (stopped_ || phase_ != phase::up) {
            done();
            return;
        }
        // Its names are free at once: a script per scope (each lease with its partition's users
        // index), before the node's own keys go.
        std::map<std::uint32_t, std::pair<std::vector<std::string>, std::vector<std::string>>> per_scope;
        for (const auto& name : owned_names_) {
            auto& [leases, args] = per_scope[scope_of(keys::name_lease(name))];
            if (args.empty()) {
                args.push_back(options_.node_id);
            }
            leases.push_back(keys::name_lease(name));
            leases.push_back(keys::users_index(partition_of(name)));
            args.push_back(name);
        }
        for (const auto& [scope, call] : per_scope) {
            eval(scripts::release_leases, call.first, call.second);
        }
        // This node's members leave their rooms now, not when its lease runs out.
        std::vector<std::string> rooms_list;
        if (hub_ != nullptr) {
            for (const auto& r : hub_->rooms().all()) {
                if (!r->local_members().empty()) {
                    rooms_list.push_back(r->name());
                }
            }
        }
        settle_members(options_.node_id, rooms_list, false);
        phase_ = phase::down;  // nothing more goes out; the answer below ends it
        sequencing_.store(false, std::memory_order_release);
        std::string gone = format_event(event_type::node_gone, options_.node_id, {}, {}, {});
        // Answered or failed, the callback runs once: the shutdown never waits for a lost Redis.
        eval(scripts::depart, {}, {options_.node_id, std::string(keys::channel), gone},
             [done](std::optional<redis_reply>) mutable { done(); });
    });
}

void cluster_node::on_redis_up() {
    if (stopped_ || phase_ != phase::down) {
        return;
    }
    read_partition_shards();
    begin_sync(true);
}

void cluster_node::on_redis_down() {
    if (stopped_ || phase_ == phase::down) {
        return;
    }
    phase_ = phase::down;
    sequencing_.store(false, std::memory_order_release);
    degraded_.store(true, std::memory_order_relaxed);
    // A new epoch for this outage: what rooms number now is this node's alone.
    std::int64_t next = std::max(rooms::unix_millis(), detached_epoch_.load() + 1);
    detached_epoch_.store(next, std::memory_order_release);
    catching_up_.clear();
    buffered_.clear();
    snapshot_.reset();
    sync_seqs_.clear();
    sync_reads_ = 0;
    shards_returned_ = 0;  // the next sync takes every shard that answers then
    // The rooms' subscriptions stay (the connection makes them again); each is caught up again
    // at the next sync, and until then no join waits for it: joins are served here alone.
    sync_subscriptions_ = 0;
    for (auto& [name, fed] : fed_) {
        fed.now = fed_room::state::catching_up;
        fed.for_sync = false;
        hub_->rooms().with_room(
            name,
            [](rooms::room& r) {
                r.set_fed(false);
                return true;
            },
            rooms::room_directory::if_missing::skip);
        answer_waiting(fed, false);
    }
    std::vector<std::pair<std::string, std::function<void(bool)>>> deferred = std::move(deferred_opens_);
    deferred_opens_.clear();
    for (auto& [name, done] : deferred) {
        done(false);
    }
    report(report_level::warn,
           "lost redis; node " + options_.node_id + " serves its own users alone until it returns");
}

void cluster_node::begin_sync(bool subscribed) {
    phase_ = phase::syncing;
    // Both connections are up: says go to the cluster again (their messages come back after the
    // sync below, in order), so no room detaches for the moment the sync takes.
    sequencing_.store(true, std::memory_order_release);
    ++sync_count_;
    sync_nonce_ = incarnation_ + "-" + std::to_string(sync_count_);
    marker_seen_ = false;
    snapshot_.reset();
    buffered_.clear();
    // Says whose answer a lost connection took: sent again under their own numbers, which the
    // say script remembers, so each is stored once whether or not it had arrived.
    // Those of rooms on a shard still unreachable wait for it (resync_shard).
    std::vector<pending_say> again;
    std::vector<pending_say> still;
    for (auto& say : unanswered_) {
        (room_shard_down(say.room) ? still : again).push_back(std::move(say));
    }
    unanswered_ = std::move(still);
    std::sort(again.begin(), again.end(), [](const auto& a, const auto& b) { return a.nonce < b.nonce; });
    for (auto& say : again) {
        send_say(std::move(say), true);
    }
    // Stored dms likewise (the dm script remembers them too); their senders wait for the answer.
    std::vector<pending_dm> dms_again = std::move(dms_unanswered_);
    dms_unanswered_.clear();
    std::sort(dms_again.begin(), dms_again.end(), [](const auto& a, const auto& b) { return a.nonce < b.nonce; });
    for (auto& dm : dms_again) {
        send_stored_dm(dm, true);
    }
    std::vector<pending_say> kept_back;
    for (auto& say : kept_) {
        if (room_shard_down(say.room)) {
            kept_back.push_back(std::move(say));
            continue;
        }
        say.nonce = ++next_nonce_;
        send_say(std::move(say));
    }
    kept_ = std::move(kept_back);
    renew_names();
    // Every room with members here is fed: the snapshot reads its seq, and its messages come
    // through its channel, which must be subscribed before the snapshot is read.
    sync_subscriptions_ = 0;
    for (auto& [name, fed] : fed_) {
        catching_up_[name];  // what comes before the room is positioned waits
        if (room_shard_down(name)) {
            fed.now = fed_room::state::catching_up;  // positioned when its shard returns
            fed.for_sync = false;
        } else if (fed.now == fed_room::state::subscribing && !subscribed) {
            fed.for_sync = true;
            ++sync_subscriptions_;
        } else {
            fed.now = fed_room::state::catching_up;
        }
    }
    if (hub_ != nullptr) {
        for (const auto& r : hub_->rooms().all()) {
            if (!fed_.contains(r->name()) && !r->local_members().empty() && !room_shard_down(r->name())) {
                start_feeding(r->name(), true);
                ++sync_subscriptions_;
            }
        }
    }
    if (sync_subscriptions_ == 0) {
        register_and_snapshot();
    }
}

// What this node has now (its users and memberships may have changed while cut off), then
// the snapshot of everyone else's, bracketed by a marker on the channel.
void cluster_node::register_and_snapshot() {
    std::vector<std::string> args{options_.node_id, std::to_string(options_.name_ttl.count()),
                                  std::string(keys::channel),
                                  format_event(event_type::node_state, options_.node_id, {}, {}, {}),
                                  std::to_string(owned_names_.size())};
    for (const auto& name : owned_names_) {
        args.push_back(name);
    }
    if (hub_ != nullptr) {
        for (const auto& r : hub_->rooms().all()) {
            for (const auto& user : r->local_members()) {
                args.push_back(membership_field(r->name(), user));
            }
        }
    }
    // The rooms where the cluster held this node's members, and those it holds now: their
    // members hashes are made to agree (members that left meanwhile leave once, joins are told).
    eval(scripts::register_node, {}, args, [this, count = sync_count_](std::optional<redis_reply> reply) {
        if (count != sync_count_ || phase_ == phase::down || !is_ok(reply)) {
            return;  // a lost connection syncs again
        }
        std::set<std::string, std::less<>> rooms_list(presence_unsent_.begin(), presence_unsent_.end());
        presence_unsent_.clear();
        for (const auto& field : reply->elements) {
            if (auto cut = field.text.find('\n'); cut != std::string::npos) {
                rooms_list.insert(field.text.substr(0, cut));
            }
        }
        if (hub_ != nullptr) {
            for (const auto& r : hub_->rooms().all()) {
                if (!r->local_members().empty()) {
                    rooms_list.insert(r->name());
                }
            }
        }
        std::vector<std::string> settled;
        for (const auto& room : rooms_list) {
            if (room_shard_down(room)) {
                presence_unsent_.insert(room);  // settled when its shard returns
            } else {
                settled.push_back(room);
            }
        }
        settle_members(options_.node_id, settled, true);
    });
    std::string marker = format_event(event_type::marker, options_.node_id, sync_nonce_, {}, {});
    eval(scripts::snapshot, {},
         {options_.node_id, std::to_string(rooms::unix_millis()), std::string(keys::channel), marker},
         [this, count = sync_count_](std::optional<redis_reply> reply) {
             if (count == sync_count_) {
                 on_snapshot(std::move(reply));
             }
         });
    // The fed rooms' seqs and members, each from its shard (their channels are subscribed
    // already, so nothing said or joined after the read is missed).
    sync_seqs_.clear();
    sync_reads_ = 0;
    for (const auto& [name, fed] : fed_) {
        if (!room_shard_down(name)) {
            ++sync_reads_;
            read_room_state(name, false);
        }
    }
}

void cluster_node::on_snapshot(std::optional<redis_reply> reply) {
    if (phase_ != phase::syncing) {
        return;
    }
    if (!is_ok(reply) || reply->type != redis_reply::kind::array || reply->elements.size() != 2) {
        if (reply) {
            report(report_level::error, "reading the cluster's state failed: " + reply->text);
        }
        return;  // a lost connection starts over when it returns
    }
    snapshot_ = std::move(reply);
    finish_sync_if_ready();
}

void cluster_node::finish_sync_if_ready() {
    if (!marker_seen_ || !snapshot_ || sync_reads_ > 0 || hub_ == nullptr) {
        return;
    }
    const auto& parts = snapshot_->elements;
    std::int64_t epoch = 0;
    parse_number(std::string_view(parts[0].text), epoch);
    epoch_ = epoch;
    log_epoch_.store(epoch, std::memory_order_release);

    nodes_.clear();
    for (const auto& id : parts[1].elements) {
        nodes_.insert(id.text);
    }
    remote_nodes_.store(nodes_.size(), std::memory_order_relaxed);

    apply_snapshot_rooms();

    phase_ = phase::up;
    sequencing_.store(true, std::memory_order_release);
    degraded_.store(false, std::memory_order_relaxed);
    ++resyncs_;
    report(report_level::info, "node " + options_.node_id + " in sync with " + std::to_string(nodes_.size()) +
                                   " other node(s)");
    std::vector<std::pair<std::string, std::int64_t>> later = std::move(buffered_);
    buffered_.clear();
    snapshot_.reset();
    for (const auto& [payload, batch_seq] : later) {
        if (auto e = parse_event(payload, batch_seq)) {
            handle_event(*e);
        }
    }
    // Joins that came while the snapshot was read: their rooms are fed now.
    std::vector<std::pair<std::string, std::function<void(bool)>>> deferred = std::move(deferred_opens_);
    deferred_opens_.clear();
    for (auto& [name, done] : deferred) {
        open_room(name, std::move(done));
    }
    // Shards that answered again while the snapshot was read: their rooms now.
    const std::uint64_t returned = shards_returned_;
    shards_returned_ = 0;
    for (std::uint32_t shard = 1; shard < 64; ++shard) {
        if (((returned >> shard) & 1) != 0 && !shard_down(shard)) {
            resync_shard(shard);
        }
    }
}

// Each fed room's history, caught up with the cluster's: in step, a few behind (fetched from
// the stream), or started over from the stream's newest messages. Rooms not fed here are left
// as they are: a join into one has it caught up first (open_room).
std::map<std::uint32_t, std::vector<std::string>> cluster_node::by_scope(std::vector<std::string> keys_list) const {
    std::map<std::uint32_t, std::vector<std::string>> out;
    for (std::string& key : keys_list) {
        const std::uint32_t scope = scope_of(key);
        out[scope].push_back(std::move(key));
    }
    return out;
}

void cluster_node::apply_snapshot_rooms() {
    std::map<std::string, std::int64_t, std::less<>> seqs = std::move(sync_seqs_);
    sync_seqs_.clear();
    // A room whose state was not read (its shard was lost meanwhile) waits for that shard's return.
    for (const auto& [name, seq] : seqs) {
        if (fed_.contains(name) && !room_shard_down(name)) {
            position_room(name, seq);
        }
    }
    // The rooms left out stay caught up from nothing: their messages wait until their shard's
    // return positions them (on_shard_down, or the lost answer above, which it follows).
    for (auto& [name, fed] : fed_) {
        if (!seqs.contains(name)) {
            fed.now = fed_room::state::catching_up;
            catching_up_[name];
        }
    }
}

std::pair<std::int64_t, std::int64_t> cluster_node::room_position(const std::string& name) {
    // A room's log outlives the room: looked at through a room made for the moment, which
    // closes again at once when nobody is in it.
    std::pair<std::int64_t, std::int64_t> position;
    hub_->rooms().with_room(name, [&position](rooms::room& r) {
        position = r.log_position();
        r.close_if_unused();
        return true;
    });
    return position;
}

void cluster_node::heartbeat() {
    if (phase_ != phase::up) {
        return;
    }
    // The nodes this heartbeat found dead: their members leave their rooms (the node that
    // removed them says so; the nodes feeding those rooms do too, once in all).
    eval(scripts::heartbeat, {}, {options_.node_id, std::to_string(options_.name_ttl.count()), std::string(keys::channel)},
         [this](std::optional<redis_reply> reply) {
             if (stopped_ || phase_ != phase::up || !is_ok(reply)) {
                 return;
             }
             const auto& gone = reply->elements;
             for (std::size_t i = 0; i + 1 < gone.size(); i += 2) {
                 std::vector<std::string> rooms_list;
                 for (const auto& room : gone[i + 1].elements) {
                     rooms_list.push_back(room.text);
                 }
                 settle_members(gone[i].text, rooms_list, false);
             }
         });
    renew_names();
    stop_idle_feeds();
}

void cluster_node::renew_names() {
    // A script per scope: one on standalone servers (every lease lives on the first), one per
    // slot on a Redis Cluster (the leases live in their users' partitions).
    std::map<std::uint32_t, std::vector<std::string>> per_scope;
    for (const std::string& name : owned_names_) {
        per_scope[scope_of(keys::name_lease(name))].push_back(name);
    }
    for (const auto& [scope, names] : per_scope) {
        renew_names_in(names);
    }
}

void cluster_node::renew_names_in(const std::vector<std::string>& names) {
    // In slices, so one script never holds Redis for long.
    constexpr std::size_t slice = 500;
    for (std::size_t begin = 0; begin < names.size(); begin += slice) {
        std::vector<std::string> part(names.begin() + static_cast<std::ptrdiff_t>(begin),
                                      names.begin() + static_cast<std::ptrdiff_t>(std::min(names.size(), begin + slice)));
        std::vector<std::string> leases;
        std::vector<std::string> args{options_.node_id, std::to_string(options_.name_ttl.count())};
        for (const auto& n : part) {
            leases.push_back(keys::name_lease(n));
            leases.push_back(keys::users_index(partition_of(n)));
            args.push_back(n);
        }
        eval(scripts::renew_names, leases, args,
             [this, part](std::optional<redis_reply> reply) { on_renew_answer(part, reply); });
    }
}

void cluster_node::on_renew_answer(const std::vector<std::string>& part, const std::optional<redis_reply>& reply) {
    if (!is_ok(reply)) {
        return;
    }
    for (const auto& index : reply->elements) {
        auto i = static_cast<std::size_t>(index.integer);
        if (i < 1 || i > part.size()) {
            continue;
        }
        // Another node took the name while this one could not renew it: its holder there keeps
        // it, and ours is told and closed (two people never hold one name).
        const std::string& user = part[i - 1];
        owned_names_.erase(user);
        ++names_lost_;
        report(report_level::warn, "name '" + user + "' is held on another node now; closing its sessions here");
        kick_local(user);
    }
}

rooms::cluster_health cluster_node::health() const {
    rooms::cluster_health s;
    const std::uint64_t down = shards_down_.load(std::memory_order_relaxed);
    s.degraded = degraded() || down != 0;
    s.shards_down = static_cast<std::uint64_t>(std::popcount(down));
    s.events_received = events_received_.load(std::memory_order_relaxed);
    s.messages_received = messages_received_.load(std::memory_order_relaxed);
    s.rooms_fed = rooms_fed_.load(std::memory_order_relaxed);
    s.messages_sequenced = messages_sequenced_.load(std::memory_order_relaxed);
    s.resyncs = resyncs_.load(std::memory_order_relaxed);
    s.names_lost = names_lost_.load(std::memory_order_relaxed);
    s.remote_nodes = remote_nodes_.load(std::memory_order_relaxed);
    s.remote_users = remote_users_.load(std::memory_order_relaxed);
    return s;
}

// ---- Redis calls ----

void cluster_node::command(std::initializer_list<std::string_view> argv, redis_callback cb) {
    flush_says();  // what was said before goes before
    link_.command(std::span<const std::string_view>(argv.begin(), argv.size()),
                  cb ? std::move(cb) : [](std::optional<redis_reply>) {});
}

void cluster_node::eval(std::string_view script, const std::vector<std::string>& keys_list,
                        const std::vector<std::string>& args, redis_callback cb) {
    flush_says();
    std::vector<std::string_view> key_views(keys_list.begin(), keys_list.end());
    std::vector<std::string_view> arg_views(args.begin(), args.end());
    link_.script(script, key_views, arg_views, cb ? std::move(cb) : [](std::optional<redis_reply>) {});
}

}  // namespace parley::cluster
