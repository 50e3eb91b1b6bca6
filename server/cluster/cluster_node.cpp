#include "server/cluster/cluster_node.hpp"

#include "protocol/close_code.hpp"
#include "protocol/frame_encoder.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/room.hpp"
#include "rooms/history/unix_clock.hpp"
#include "rooms/worker_context.hpp"
#include "server/cluster/cluster_keys.hpp"
#include "server/cluster/cluster_scripts.hpp"

#include <boost/asio/post.hpp>
#include <openssl/sha.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <mutex>
#include <span>

namespace parley::cluster {

namespace asio = boost::asio;
using protocol::shared_frame;
using rooms::room_event;

namespace {

// The scripts by name, with the SHA-1 Redis knows each by (EVALSHA), computed here once.
struct loaded_script {
    std::string_view text;
    std::string sha;
};

std::string sha1_hex(std::string_view text) {
    unsigned char digest[SHA_DIGEST_LENGTH];
    SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char b : digest) {
        out.push_back(hex[b >> 4]);
        out.push_back(hex[b & 15]);
    }
    return out;
}

const std::vector<loaded_script>& all_scripts() {
    static const std::vector<loaded_script> list = [] {
        std::vector<loaded_script> out;
        for (std::string_view s : {scripts::claim_name, scripts::release_name, scripts::renew_names, scripts::heartbeat,
                                   scripts::say, scripts::membership, scripts::register_node, scripts::snapshot,
                                   scripts::depart}) {
            out.push_back({s, sha1_hex(s)});
        }
        return out;
    }();
    return list;
}

const std::string& sha_of(std::string_view script) {
    for (const auto& s : all_scripts()) {
        if (s.text.data() == script.data()) {
            return s.sha;
        }
    }
    static const std::string none;
    return none;
}

template <typename T>
bool parse_number(std::string_view text, T& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

// A stream entry ["SEQ-1", [field, value, ...]] as a log entry (and its origin and ack fields).
struct stream_entry {
    std::int64_t seq = 0;
    std::int64_t ts = 0;
    std::string json;
    std::string origin;
    std::string ack;
};

std::vector<stream_entry> parse_stream(const redis_reply& reply) {
    std::vector<stream_entry> out;
    if (reply.type != redis_reply::kind::array) {
        return out;
    }
    for (const auto& item : reply.elements) {
        if (item.type != redis_reply::kind::array || item.elements.size() != 2) {
            continue;
        }
        stream_entry e;
        std::string_view id = item.elements[0].text;
        if (!parse_number(id.substr(0, id.find('-')), e.seq)) {
            continue;
        }
        const auto& fields = item.elements[1].elements;
        for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
            const std::string& name = fields[i].text;
            const std::string& value = fields[i + 1].text;
            if (name == "j") {
                e.json = value;
            } else if (name == "t") {
                parse_number(std::string_view(value), e.ts);
            } else if (name == "n") {
                e.origin = value.substr(0, value.find(':'));  // "NODE:RUN:NUMBER"; ids hold no ':'
            } else if (name == "a") {
                e.ack = value;
            }
        }
        if (!e.json.empty()) {
            out.push_back(std::move(e));
        }
    }
    return out;
}

std::string membership_field(std::string_view room, std::string_view user) {
    std::string field(room);
    field.push_back('\n');
    field.append(user);
    return field;
}

bool is_ok(const std::optional<redis_reply>& reply) { return reply && !reply->is_error(); }

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

// A room's log on a node of a cluster: the newest messages in memory, everything from seq 1 in
// the room's stream (as far as its length keeps), read through the node.
class cluster_room_log final : public rooms::room_log {
public:
    cluster_room_log(std::string name, std::int64_t epoch, std::size_t memory_limit)
        : room_log(epoch, 0, memory_limit, 0), name_(std::move(name)) {
        stored_first_.store(1, std::memory_order_release);
    }
    const std::string& name() const { return name_; }

private:
    // The cluster stored it before this node saw it.
    void stored(std::int64_t, std::int64_t, const shared_frame&) override {}
    std::string name_;
};

class cluster_history_store final : public rooms::history_store {
public:
    cluster_history_store(cluster_node& node, std::size_t per_room) : node_(node), per_room_(per_room) {}

    rooms::room_log* open(std::string_view room) override {
        std::lock_guard lock(mutex_);
        auto it = logs_.find(std::string(room));
        std::int64_t epoch = node_.log_epoch();
        if (it == logs_.end()) {
            auto log = std::make_unique<cluster_room_log>(std::string(room), epoch, per_room_);
            it = logs_.emplace(std::string(room), std::move(log)).first;
        } else if (it->second->last_seq() == 0 && it->second->epoch() != epoch) {
            // Made before this node knew the cluster's epoch, and never used: no room holds it
            // now (a room opens its log once, when it is made), so it may start over.
            it->second->reset(epoch, 0, {}, 1);
        }
        return it->second.get();
    }

    void stop_reads() override { stopped_.store(true, std::memory_order_relaxed); }

protected:
    void read_stored(rooms::room_log& log, rooms::history_answer answer,
                     std::function<void(std::vector<shared_frame>)> done) override {
        const std::string& room = static_cast<cluster_room_log&>(log).name();
        rooms::stored_read what = *answer.stored;
        node_.read_stream(room, what,
                          [this, answer = std::move(answer), done = std::move(done)](
                              std::vector<rooms::log_entry> entries) mutable {
                              if (stopped_.load(std::memory_order_relaxed)) {
                                  return;
                              }
                              std::vector<shared_frame> frames;
                              frames.reserve(entries.size());
                              for (auto& e : entries) {
                                  frames.push_back(std::move(e.frame));
                              }
                              done(rooms::join_answer(std::move(frames), answer));
                          });
    }

private:
    cluster_node& node_;
    std::size_t per_room_;
    std::atomic<bool> stopped_{false};
    std::mutex mutex_;
    std::unordered_map<std::string, std::unique_ptr<cluster_room_log>> logs_;
};

}  // namespace

cluster_node::cluster_node(asio::any_io_executor executor, cluster_options options)
    : executor_(std::move(executor)),
      options_(std::move(options)),
      start_epoch_(rooms::unix_millis()),
      incarnation_(std::to_string(start_epoch_)),
      detached_epoch_(start_epoch_),
      log_epoch_(start_epoch_) {}

cluster_node::~cluster_node() { stop(); }

std::unique_ptr<rooms::message_bus> cluster_node::make_bus() { return std::make_unique<cluster_bus>(*this); }

std::unique_ptr<rooms::history_store> cluster_node::make_history_store() {
    return std::make_unique<cluster_history_store>(*this, options_.history_per_room);
}

void cluster_node::run(std::function<void()> task) { asio::post(executor_, std::move(task)); }

// ---- connections and phases ----

void cluster_node::start() {
    run([this] {
        redis_connection::options opts;
        opts.host = options_.redis.host;
        opts.port = options_.redis.port;
        opts.password = options_.redis.password;
        commands_ = redis_connection::create(executor_, opts, "commands");
        subscriber_ = redis_connection::create(executor_, opts, "events");
        for (auto* c : {&commands_, &subscriber_}) {
            (*c)->on_up([this] { on_connection_up(); });
            (*c)->on_down([this] { on_connection_down(); });
        }
        subscriber_->subscribe({std::string(keys::channel)},
                               [this](std::string_view, std::string_view payload) { on_channel_message(payload); });
        commands_->start();
        subscriber_->start();
        heartbeat_timer_ = std::make_unique<asio::steady_timer>(executor_);
        schedule_heartbeat();
        spdlog::info("cluster: node {} joining through redis {}:{}", options_.node_id, options_.redis.host,
                     options_.redis.port);
    });
}

void cluster_node::stop() {
    if (stopped_) {
        return;
    }
    stopped_ = true;
    if (heartbeat_timer_) {
        heartbeat_timer_->cancel();
        heartbeat_timer_.reset();
    }
    for (auto* c : {&commands_, &subscriber_}) {
        if (*c) {
            (*c)->stop();
            c->reset();
        }
    }
    sequencing_.store(false, std::memory_order_release);
    degraded_.store(true, std::memory_order_relaxed);
}

void cluster_node::depart(std::function<void()> done) {
    run([this, done = std::move(done)]() mutable {
        if (stopped_ || phase_ != phase::up) {
            done();
            return;
        }
        std::vector<std::string> leases;
        for (const auto& name : owned_names_) {
            leases.push_back(keys::name_lease(name));
        }
        phase_ = phase::down;  // nothing more goes out; the answer below ends it
        sequencing_.store(false, std::memory_order_release);
        std::string gone = format_event(event_type::node_gone, options_.node_id, {}, {}, {});
        bool sent = eval(scripts::depart, leases, {options_.node_id, std::string(keys::channel), gone},
                         [done](std::optional<redis_reply>) mutable { done(); });
        if (!sent) {
            done();
        }
    });
}

void cluster_node::on_connection_up() {
    if (stopped_ || phase_ != phase::down || !commands_ || !commands_->connected() || !subscriber_->connected()) {
        return;
    }
    begin_sync();
}

void cluster_node::on_connection_down() {
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
    spdlog::warn("cluster: lost redis {}:{}; node {} serves its own users alone until it returns",
                 options_.redis.host, options_.redis.port, options_.node_id);
}

void cluster_node::begin_sync() {
    phase_ = phase::syncing;
    // Both connections are up: says go to the cluster again (their messages come back after the
    // sync below, in order), so no room detaches for the moment the sync takes.
    sequencing_.store(true, std::memory_order_release);
    ++sync_count_;
    sync_nonce_ = incarnation_ + "-" + std::to_string(sync_count_);
    marker_seen_ = false;
    snapshot_.reset();
    buffered_.clear();
    for (const auto& s : all_scripts()) {
        command({"SCRIPT", "LOAD", s.text});
    }
    // Says whose answer a lost connection took: sent again under their own numbers, which the
    // say script remembers, so each is stored once whether or not it had arrived.
    std::vector<pending_say> again = std::move(unanswered_);
    unanswered_.clear();
    std::sort(again.begin(), again.end(), [](const auto& a, const auto& b) { return a.nonce < b.nonce; });
    for (auto& say : again) {
        send_say(say, true);
    }
    for (auto& say : kept_) {
        say.nonce = ++next_nonce_;
        send_say(say);
    }
    kept_.clear();
    renew_names();
    // What this node has now (its users and memberships may have changed while cut off).
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
    eval(scripts::register_node, {}, args);
    std::string marker = format_event(event_type::marker, options_.node_id, sync_nonce_, {}, {});
    eval(scripts::snapshot, {}, {options_.node_id, std::to_string(rooms::unix_millis()), std::string(keys::channel), marker},
         [this, count = sync_count_](std::optional<redis_reply> reply) {
             if (count == sync_count_) {
                 on_snapshot(std::move(reply));
             }
         });
}

void cluster_node::on_snapshot(std::optional<redis_reply> reply) {
    if (phase_ != phase::syncing) {
        return;
    }
    if (!is_ok(reply) || reply->type != redis_reply::kind::array || reply->elements.size() != 3) {
        if (reply) {
            spdlog::error("cluster: reading the cluster's state failed: {}", reply->text);
        }
        return;  // a lost connection starts over when it returns
    }
    snapshot_ = std::move(reply);
    finish_sync_if_ready();
}

void cluster_node::finish_sync_if_ready() {
    if (!marker_seen_ || !snapshot_ || hub_ == nullptr) {
        return;
    }
    const auto& parts = snapshot_->elements;
    std::int64_t epoch = 0;
    parse_number(std::string_view(parts[0].text), epoch);
    epoch_ = epoch;
    log_epoch_.store(epoch, std::memory_order_release);

    std::map<std::string, node_state, std::less<>> fresh;
    const auto& listed = parts[1].elements;
    for (std::size_t i = 0; i + 2 < listed.size(); i += 3) {
        node_state state;
        for (const auto& u : listed[i + 1].elements) {
            state.users.insert(u.text);
        }
        for (const auto& f : listed[i + 2].elements) {
            auto cut = f.text.find('\n');
            if (cut != std::string::npos) {
                state.rooms[f.text.substr(0, cut)].insert(f.text.substr(cut + 1));
            }
        }
        fresh.emplace(listed[i].text, std::move(state));
    }
    std::set<std::string, std::less<>> touched;
    for (const auto& [node, state] : nodes_) {
        for (const auto& [room, users] : state.rooms) {
            touched.insert(room);
        }
    }
    for (const auto& [node, state] : fresh) {
        for (const auto& [room, users] : state.rooms) {
            touched.insert(room);
        }
    }
    nodes_ = std::move(fresh);
    rebuild_remote_users();
    for (const auto& room : touched) {
        refresh_room_members(room);
    }

    // Each room's history, caught up with the cluster's.
    std::map<std::string, std::int64_t, std::less<>> seqs;
    const auto& rooms_listed = parts[2].elements;
    for (std::size_t i = 0; i + 1 < rooms_listed.size(); i += 2) {
        std::int64_t seq = 0;
        parse_number(std::string_view(rooms_listed[i + 1].text), seq);
        seqs[rooms_listed[i].text] = seq;
    }
    for (const auto& r : hub_->rooms().all()) {
        seqs.try_emplace(r->name(), 0);
    }
    for (const auto& [name, seq] : seqs) {
        auto r = hub_->rooms().find_or_create(name);
        auto [room_epoch, last] = r->log_position();
        if (room_epoch == epoch_ && last == seq) {
            // In step already.
        } else if (room_epoch == epoch_ && last < seq &&
                   static_cast<std::size_t>(seq - last) <= options_.history_per_room) {
            catch_up(name, last + 1, seq);
        } else {
            rebase_room(name, seq);
        }
        r->close_if_unused();
    }

    phase_ = phase::up;
    sequencing_.store(true, std::memory_order_release);
    degraded_.store(false, std::memory_order_relaxed);
    ++resyncs_;
    spdlog::info("cluster: node {} in sync: {} other node(s), {} room(s) with history", options_.node_id,
                 nodes_.size(), seqs.size());
    std::vector<std::string> later = std::move(buffered_);
    buffered_.clear();
    snapshot_.reset();
    for (const auto& payload : later) {
        if (auto e = parse_event(payload)) {
            handle_event(*e);
        }
    }
}

void cluster_node::schedule_heartbeat() {
    if (!heartbeat_timer_) {
        return;
    }
    heartbeat_timer_->expires_after(options_.name_ttl / 3);
    heartbeat_timer_->async_wait([this](boost::system::error_code ec) {
        if (ec || stopped_) {
            return;
        }
        heartbeat();
        schedule_heartbeat();
    });
}

void cluster_node::heartbeat() {
    if (phase_ != phase::up) {
        return;
    }
    eval(scripts::heartbeat, {}, {options_.node_id, std::to_string(options_.name_ttl.count()), std::string(keys::channel)});
    renew_names();
}

void cluster_node::renew_names() {
    // In slices, so one script never holds Redis for long.
    constexpr std::size_t slice = 500;
    std::vector<std::string> names(owned_names_.begin(), owned_names_.end());
    for (std::size_t begin = 0; begin < names.size(); begin += slice) {
        std::vector<std::string> part(names.begin() + static_cast<std::ptrdiff_t>(begin),
                                      names.begin() + static_cast<std::ptrdiff_t>(std::min(names.size(), begin + slice)));
        std::vector<std::string> leases;
        for (const auto& n : part) {
            leases.push_back(keys::name_lease(n));
        }
        eval(scripts::renew_names, leases, {options_.node_id, std::to_string(options_.name_ttl.count())},
             [this, part](std::optional<redis_reply> reply) {
                 if (!is_ok(reply)) {
                     return;
                 }
                 for (const auto& index : reply->elements) {
                     auto i = static_cast<std::size_t>(index.integer);
                     if (i < 1 || i > part.size()) {
                         continue;
                     }
                     // Another node took the name while this one could not renew it: its holder
                     // there keeps it, and ours is told and closed (two people never hold one name).
                     const std::string& user = part[i - 1];
                     owned_names_.erase(user);
                     ++names_lost_;
                     spdlog::warn("cluster: name '{}' is held on another node now; closing its sessions here", user);
                     kick_local(user);
                 }
             });
    }
}

// ---- the cluster_link, from any worker ----

void cluster_node::claim_name(std::string_view user, registry::session_handle who,
                              std::function<void(claim_outcome)> done) {
    run([this, user = std::string(user), who, done = std::move(done)]() mutable {
        auto answer = [this, who, done](claim_outcome outcome) {
            hub_->worker(who.worker).executor().post([done, outcome] { done(outcome); });
        };
        if (phase_ == phase::down) {
            // Cut off: this node's registry vouches for the name; the cluster hears of it on return.
            owned_names_.insert(user);
            answer(claim_outcome::claimed);
            return;
        }
        std::string login = format_event(event_type::login, options_.node_id, {}, user, {});
        bool sent = eval(scripts::claim_name, {keys::name_lease(user), keys::node_users(options_.node_id)},
                         {options_.node_id, std::to_string(options_.name_ttl.count()), user,
                          std::string(keys::channel), login},
                         [this, user, answer](std::optional<redis_reply> reply) {
                             if (reply && reply->is_error()) {
                                 spdlog::error("cluster: claiming a name failed: {}", reply->text);
                                 answer(claim_outcome::taken);
                                 return;
                             }
                             if (reply && reply->integer != 1) {
                                 answer(claim_outcome::taken);
                                 return;
                             }
                             // Claimed, or the connection went before the answer (then the name
                             // is claimed again with the others when it returns).
                             if (hub_->users().lookup(user)) {
                                 owned_names_.insert(user);
                             } else if (phase_ != phase::down) {
                                 // The session left while the claim was on its way.
                                 release_name(user);
                             }
                             answer(claim_outcome::claimed);
                         });
        if (!sent) {
            owned_names_.insert(user);
            answer(claim_outcome::claimed);
        }
    });
}

void cluster_node::release_name(std::string_view user) {
    run([this, user = std::string(user)] {
        owned_names_.erase(user);
        if (phase_ == phase::down) {
            return;  // the lease runs out by itself; the next sync rewrites this node's users
        }
        std::string logout = format_event(event_type::logout, options_.node_id, {}, user, {});
        eval(scripts::release_name, {keys::name_lease(user), keys::node_users(options_.node_id)},
             {options_.node_id, user, std::string(keys::channel), logout});
    });
}

void cluster_node::submit_say(std::string_view room, std::string_view from, std::string_view text, std::int64_t ts,
                              registry::session_handle sender, std::string_view ack_id) {
    // Encoded here, on the sender's worker: the cluster's thread only sends it.
    auto json = protocol::encode_message_around_seq(room, from, text, ts);
    pending_say say{0,  std::string(room), std::string(from), std::move(json.before), std::move(json.after), ts,
                    ack_id.empty() ? std::string() : format_ack_ticket(sender, ack_id), sender, std::string(text),
                    std::string(ack_id)};
    run([this, say = std::move(say)]() mutable {
        if (phase_ == phase::down) {
            // Redis went away after the session looked: the sender's session serves it alone.
            hub_->worker(say.sender.worker).executor().post([this, say = std::move(say)] {
                auto& owner = hub_->worker(say.sender.worker);
                if (rooms::chat_session* s = owner.find_session(say.sender.session)) {
                    s->say_here(say.room, say.text, say.ts, say.ack_id);
                }
            });
            return;
        }
        say.nonce = ++next_nonce_;
        send_say(say);
    });
}

void cluster_node::keep_for_cluster(std::string_view room, std::string_view from, std::string_view text,
                                    std::int64_t ts) {
    auto json = protocol::encode_message_around_seq(room, from, text, ts);
    pending_say say{0, std::string(room), std::string(from), std::move(json.before), std::move(json.after), ts, {}, {},
                    {}, {}};
    run([this, say = std::move(say)]() mutable {
        if (phase_ != phase::down) {
            say.nonce = ++next_nonce_;
            send_say(say);
        } else {
            kept_.push_back(std::move(say));
        }
    });
}

void cluster_node::send_say(const pending_say& say, bool resend) {
    in_flight_.push_back(say);
    // The hot path: the arguments as views of strings that live until command() has copied them.
    const std::string seq_key = keys::room_seq(say.room);
    const std::string stream_key = keys::room_stream(say.room);
    const std::string head = message_event_head(options_.node_id, say.room, say.from);
    const std::string ts = std::to_string(say.ts);
    const std::string length = std::to_string(options_.stream_length);
    const std::string nonce = std::to_string(say.nonce);
    const std::string_view argv[] = {"EVALSHA",      sha_of(scripts::say), "2",      seq_key,      stream_key,
                                     keys::channel,  head,                 ts,       say.ack,      say.json_before,
                                     say.json_after, length,               say.room, options_.node_id,
                                     incarnation_,   nonce,                resend ? "1" : "0"};
    bool sent = commands_ && commands_->command(std::span<const std::string_view>(argv),
                                                [this, number = say.nonce](std::optional<redis_reply> reply) {
                                                    on_say_answer(number, std::move(reply));
                                                });
    if (!sent) {
        unanswered_.push_back(in_flight_.back());
        in_flight_.pop_back();
    }
}

void cluster_node::on_say_answer(std::uint64_t nonce, std::optional<redis_reply> reply) {
    auto it = std::find_if(in_flight_.begin(), in_flight_.end(), [nonce](const pending_say& p) { return p.nonce == nonce; });
    if (it == in_flight_.end()) {
        return;
    }
    if (!reply) {
        unanswered_.push_back(std::move(*it));  // sent again on return
    } else if (reply->is_error()) {
        spdlog::error("cluster: a message to room '{}' was refused by redis: {}", it->room, reply->text);
        if (!it->ack_id.empty()) {
            auto& owner = hub_->worker(it->sender.worker);
            owner.executor().post([&owner, sender = it->sender, re = it->ack_id] {
                if (rooms::chat_session* s = owner.find_session(sender.session)) {
                    s->output().send(protocol::encode_error(protocol::error_code::bad_request,
                                                            "the message could not be stored by the cluster", re));
                }
            });
        }
    } else {
        messages_sequenced_.fetch_add(1, std::memory_order_relaxed);
    }
    in_flight_.erase(it);
}

bool cluster_node::online_elsewhere(std::string_view user) const {
    if (degraded()) {
        return false;  // what this node last heard may be stale, and a dm could not go out anyway
    }
    std::shared_lock lock(remote_users_mutex_);
    return remote_users_.find(std::string(user)) != remote_users_.end();
}

void cluster_node::append_remote_users(std::vector<std::string>& out) const {
    if (degraded()) {
        return;
    }
    std::shared_lock lock(remote_users_mutex_);
    for (const auto& [user, node] : remote_users_) {
        out.push_back(user);
    }
}

void cluster_node::send_dm(std::string_view to, const shared_frame& frame) {
    run([this, to = std::string(to), json = std::string(protocol::frame_payload(frame.view()))] {
        if (phase_ == phase::down) {
            return;
        }
        std::string node;
        {
            std::shared_lock lock(remote_users_mutex_);
            auto it = remote_users_.find(to);
            if (it == remote_users_.end()) {
                return;  // logged out since
            }
            node = it->second;
        }
        command({"PUBLISH", keys::channel, format_event(event_type::dm, options_.node_id, node, to, json)});
    });
}

void cluster_node::publish(room_event event, std::string_view room, std::string_view user, const shared_frame& frame) {
    // Called under the room's lock: copy and queue only.
    run([this, event, room = std::string(room), user = std::string(user),
         json = std::string(protocol::frame_payload(frame.view()))] {
        if (phase_ == phase::down) {
            return;  // the next sync tells the others what this node's rooms hold then
        }
        event_type type = event_type::system;
        switch (event) {
        case room_event::join: type = event_type::join; break;
        case room_event::leave: type = event_type::leave; break;
        case room_event::leave_disconnected: type = event_type::leave_disconnected; break;
        case room_event::typing: type = event_type::typing; break;
        case room_event::system: type = event_type::system; break;
        }
        std::string payload = format_event(type, options_.node_id, room, user, json);
        if (type == event_type::join || type == event_type::leave || type == event_type::leave_disconnected) {
            eval(scripts::membership, {keys::node_rooms(options_.node_id)},
                 {type == event_type::join ? "+" : "-", membership_field(room, user), std::string(keys::channel),
                  payload});
        } else {
            command({"PUBLISH", keys::channel, payload});
        }
    });
}

void cluster_node::read_stream(std::string room, rooms::stored_read what,
                               std::function<void(std::vector<rooms::log_entry>)> done) {
    run([this, room = std::move(room), what, done = std::move(done)]() mutable {
        if (phase_ == phase::down) {
            done({});
            return;
        }
        std::string low = keys::stream_id(what.after + 1);
        std::string high = what.below == std::numeric_limits<std::int64_t>::max() ? std::string("+")
                                                                                    : keys::stream_id(what.below - 1);
        if (what.below - 1 < what.after + 1 || what.limit == 0) {
            done({});
            return;
        }
        std::string count = std::to_string(what.limit);
        std::string stream = keys::room_stream(room);
        auto on_reply = [done = std::move(done), newest_first = what.newest_first](std::optional<redis_reply> reply) {
            std::vector<rooms::log_entry> out;
            if (is_ok(reply)) {
                for (auto& e : parse_stream(*reply)) {
                    out.push_back({e.seq, e.ts, protocol::frame_of_json(e.json)});
                }
            }
            if (newest_first) {
                std::reverse(out.begin(), out.end());
            }
            done(std::move(out));
        };
        bool sent = what.newest_first ? command({"XREVRANGE", stream, high, low, "COUNT", count}, std::move(on_reply))
                                      : command({"XRANGE", stream, low, high, "COUNT", count}, std::move(on_reply));
        (void)sent;  // not sent: the callback ran with nothing
    });
}

rooms::cluster_health cluster_node::health() const {
    rooms::cluster_health s;
    s.degraded = degraded();
    s.events_received = events_received_.load(std::memory_order_relaxed);
    s.messages_sequenced = messages_sequenced_.load(std::memory_order_relaxed);
    s.resyncs = resyncs_.load(std::memory_order_relaxed);
    s.names_lost = names_lost_.load(std::memory_order_relaxed);
    s.remote_nodes = remote_nodes_.load(std::memory_order_relaxed);
    std::shared_lock lock(remote_users_mutex_);
    s.remote_users = remote_users_.size();
    return s;
}

// ---- events from the channel ----

void cluster_node::on_channel_message(std::string_view payload) {
    events_received_.fetch_add(1, std::memory_order_relaxed);
    auto e = parse_event(payload);
    if (!e) {
        spdlog::debug("cluster: ignored a message on the channel that is not an event");
        return;
    }
    if (phase_ == phase::syncing) {
        if (e->type == event_type::marker && e->origin == options_.node_id && e->room == sync_nonce_) {
            marker_seen_ = true;
            finish_sync_if_ready();
        } else if (marker_seen_) {
            buffered_.emplace_back(payload);  // newer than the snapshot being read
        }
        return;  // older than the snapshot: it holds them
    }
    if (phase_ == phase::up) {
        handle_event(*e);
    }
}

void cluster_node::handle_event(const cluster_event& e) {
    if (e.type == event_type::message) {
        apply_message(e.room, e.seq, e.ts, e.body, e.origin, e.ack, false);
        return;
    }
    const std::string origin(e.origin);
    if (origin == options_.node_id) {
        if (e.type == event_type::node_gone && phase_ == phase::up) {
            // Others took this node for dead (its lease ran out): say again what it holds.
            spdlog::warn("cluster: the cluster dropped node {}; registering again", options_.node_id);
            begin_sync();
        }
        return;  // this node's own events were applied when they happened
    }
    const std::size_t presence_limit = options_.presence_max_members;
    switch (e.type) {
    case event_type::join:
    case event_type::leave:
    case event_type::leave_disconnected:
    case event_type::typing:
    case event_type::system: {
        room_event kind = e.type == event_type::join                 ? room_event::join
                          : e.type == event_type::leave              ? room_event::leave
                          : e.type == event_type::leave_disconnected ? room_event::leave_disconnected
                          : e.type == event_type::typing             ? room_event::typing
                                                                     : room_event::system;
        if (kind == room_event::join) {
            nodes_[origin].rooms[std::string(e.room)].insert(std::string(e.user));
        } else if (kind == room_event::leave || kind == room_event::leave_disconnected) {
            auto node = nodes_.find(origin);
            if (node != nodes_.end()) {
                auto r = node->second.rooms.find(e.room);
                if (r != node->second.rooms.end()) {
                    r->second.erase(std::string(e.user));
                    if (r->second.empty()) {
                        node->second.rooms.erase(r);
                    }
                }
            }
        }
        shared_frame frame = protocol::frame_of_json(e.body);
        for (;;) {
            auto target = kind == room_event::join ? hub_->rooms().find_or_create(e.room) : hub_->rooms().find(e.room);
            if (!target || target->apply_remote(kind, origin, e.user, frame, presence_limit)) {
                break;
            }
        }
        break;
    }
    case event_type::login: {
        nodes_[origin].users.insert(std::string(e.user));
        std::unique_lock lock(remote_users_mutex_);
        remote_users_[std::string(e.user)] = origin;
        break;
    }
    case event_type::logout: {
        if (auto node = nodes_.find(origin); node != nodes_.end()) {
            node->second.users.erase(std::string(e.user));
        }
        std::unique_lock lock(remote_users_mutex_);
        if (auto it = remote_users_.find(std::string(e.user)); it != remote_users_.end() && it->second == origin) {
            remote_users_.erase(it);
        }
        break;
    }
    case event_type::dm:
        if (e.room == options_.node_id) {
            deliver_dm(e.user, e.body);
        }
        break;
    case event_type::node_gone:
        drop_node(origin);
        break;
    case event_type::node_state:
        read_node_state(origin);
        break;
    case event_type::marker:
    case event_type::message:
        break;
    }
}

void cluster_node::apply_message(std::string_view room, std::int64_t seq, std::int64_t ts, std::string_view json,
                                 std::string_view origin, std::string_view ack, bool from_stream) {
    const std::string name(room);
    if (!from_stream) {
        if (auto waiting = catching_up_.find(name); waiting != catching_up_.end()) {
            waiting->second.push_back({seq, ts, std::string(json), std::string(origin), std::string(ack)});
            return;
        }
    }
    // One decode per node: the JSON becomes one frame for every member here.
    shared_frame frame = protocol::frame_of_json(json);
    // The sender's ack, when the sender is here: one pointer, so the std::function holds it
    // without an allocation.
    struct ack_to_send {
        cluster_node* node;
        std::string_view ticket;
        std::string_view room;
        std::int64_t seq;
    } pending{this, ack, room, seq};
    std::function<void()> ack_first;
    if (origin == options_.node_id && !ack.empty()) {
        ack_first = [&pending] { pending.node->deliver_ack(pending.ticket, pending.room, pending.seq); };
    }
    for (;;) {
        auto target = hub_->rooms().find_or_create(name);
        auto outcome = target->apply_message(seq, ts, frame, from_stream, ack_first);
        if (outcome == rooms::room::apply_outcome::gone) {
            continue;  // closed meanwhile: the directory has a new one
        }
        if (outcome == rooms::room::apply_outcome::gap) {
            // Messages before it never came (the node was catching up or lost some): fetch them
            // from the stream, then this one.
            catching_up_[name].push_back({seq, ts, std::string(json), std::string(origin), std::string(ack)});
            catch_up(name, target->last_seq() + 1, seq - 1);
        }
        return;
    }
}

void cluster_node::catch_up(const std::string& room, std::int64_t from_seq, std::int64_t to_seq) {
    catching_up_[room];  // messages arriving meanwhile wait
    std::string count = std::to_string(to_seq - from_seq + 1);
    bool sent = command({"XRANGE", keys::room_stream(room), keys::stream_id(from_seq), keys::stream_id(to_seq), "COUNT",
                         count},
                        [this, room, generation = sync_count_](std::optional<redis_reply> reply) {
                            if (generation != sync_count_ || phase_ == phase::down) {
                                return;
                            }
                            if (is_ok(reply)) {
                                for (const auto& e : parse_stream(*reply)) {
                                    apply_message(room, e.seq, e.ts, e.json, e.origin, e.ack, true);
                                }
                            }
                            drain_queue(room);
                        });
    (void)sent;
}

void cluster_node::rebase_room(const std::string& room, std::int64_t last_seq) {
    catching_up_[room];
    std::string count = std::to_string(options_.history_per_room);
    command({"XREVRANGE", keys::room_stream(room), "+", "-", "COUNT", count},
            [this, room, last_seq, generation = sync_count_](std::optional<redis_reply> reply) {
                if (generation != sync_count_ || phase_ == phase::down) {
                    return;
                }
                std::vector<rooms::log_entry> newest;
                if (is_ok(reply)) {
                    for (auto& e : parse_stream(*reply)) {
                        if (e.seq <= last_seq) {
                            newest.push_back({e.seq, e.ts, protocol::frame_of_json(e.json)});
                        }
                    }
                }
                std::reverse(newest.begin(), newest.end());
                for (;;) {
                    auto target = hub_->rooms().find_or_create(room);
                    if (target->rebase(epoch_, last_seq, std::move(newest))) {
                        target->close_if_unused();
                        break;
                    }
                }
                drain_queue(room);
            });
}

void cluster_node::drain_queue(const std::string& room) {
    auto it = catching_up_.find(room);
    if (it == catching_up_.end()) {
        return;
    }
    std::deque<queued_message> waiting = std::move(it->second);
    catching_up_.erase(it);
    while (!waiting.empty()) {
        queued_message m = std::move(waiting.front());
        waiting.pop_front();
        apply_message(room, m.seq, m.ts, m.json, m.origin, m.ack, false);
        if (auto again = catching_up_.find(room); again != catching_up_.end()) {
            // Another gap: the rest wait behind it, in order.
            for (auto& rest : waiting) {
                again->second.push_back(std::move(rest));
            }
            return;
        }
    }
}

void cluster_node::deliver_ack(std::string_view ticket, std::string_view room, std::int64_t seq) {
    auto t = parse_ack_ticket(ticket);
    if (!t || t->sender.worker >= hub_->worker_count()) {
        return;
    }
    rooms::worker_context& owner = hub_->worker(t->sender.worker);
    shared_frame ack = protocol::encode_ack(t->re, room, seq);
    std::uint32_t session = t->sender.session;
    auto send = [&owner, session, ack] {
        if (rooms::chat_session* s = owner.find_session(session)) {
            s->output().send(ack);
        }
    };
    if (rooms::worker_context::current() == &owner) {
        send();  // the fan-out below may serve this worker at once too
    } else {
        owner.executor().post(std::move(send));
    }
}

void cluster_node::deliver_dm(std::string_view user, std::string_view json) {
    std::vector<registry::session_handle> targets;
    if (hub_->users().lookup_all(user, targets) == 0) {
        return;
    }
    shared_frame frame = protocol::frame_of_json(json);
    for (registry::session_handle target : targets) {
        rooms::worker_context& owner = hub_->worker(target.worker);
        owner.executor().post([&owner, session = target.session, frame] {
            if (rooms::chat_session* s = owner.find_session(session)) {
                s->output().send(frame);
            }
        });
    }
}

void cluster_node::kick_local(const std::string& user) {
    std::vector<registry::session_handle> targets;
    hub_->users().lookup_all(user, targets);
    shared_frame notice = protocol::encode_system("the name '" + user + "' is in use on another node of the cluster");
    for (registry::session_handle target : targets) {
        rooms::worker_context& owner = hub_->worker(target.worker);
        owner.executor().post([&owner, session = target.session, notice] {
            if (rooms::chat_session* s = owner.find_session(session)) {
                s->output().send(notice);
                s->output().close(protocol::close_code::policy_violation, "name taken in the cluster");
            }
        });
    }
}

// ---- the presence replica ----

void cluster_node::rebuild_remote_users() {
    std::unique_lock lock(remote_users_mutex_);
    remote_users_.clear();
    for (const auto& [node, state] : nodes_) {
        for (const auto& user : state.users) {
            remote_users_[user] = node;
        }
    }
    remote_nodes_.store(nodes_.size(), std::memory_order_relaxed);
}

void cluster_node::refresh_room_members(std::string_view room) {
    std::map<std::string, std::string, std::less<>> members;
    for (const auto& [node, state] : nodes_) {
        if (auto r = state.rooms.find(room); r != state.rooms.end()) {
            for (const auto& user : r->second) {
                members.emplace(user, node);
            }
        }
    }
    for (;;) {
        auto target = members.empty() ? hub_->rooms().find(room) : hub_->rooms().find_or_create(room);
        if (!target || target->set_remote_members(members)) {
            return;
        }
    }
}

void cluster_node::set_node_state(const std::string& node, node_state state) {
    std::set<std::string, std::less<>> touched;
    if (auto old = nodes_.find(node); old != nodes_.end()) {
        for (const auto& [room, users] : old->second.rooms) {
            touched.insert(room);
        }
    }
    for (const auto& [room, users] : state.rooms) {
        touched.insert(room);
    }
    nodes_[node] = std::move(state);
    rebuild_remote_users();
    for (const auto& room : touched) {
        refresh_room_members(room);
    }
}

void cluster_node::drop_node(const std::string& node) {
    auto it = nodes_.find(node);
    if (it == nodes_.end()) {
        return;
    }
    std::vector<std::string> rooms_of_node;
    for (const auto& [room, users] : it->second.rooms) {
        rooms_of_node.push_back(room);
    }
    nodes_.erase(it);
    rebuild_remote_users();
    spdlog::info("cluster: node {} left the cluster", node);
    for (const auto& room : rooms_of_node) {
        if (auto target = hub_->rooms().find(room)) {
            target->drop_node(node);
        }
    }
}

void cluster_node::read_node_state(const std::string& node) {
    auto state = std::make_shared<node_state>();
    command({"HKEYS", keys::node_users(node)}, [state](std::optional<redis_reply> reply) {
        if (is_ok(reply)) {
            for (const auto& u : reply->elements) {
                state->users.insert(u.text);
            }
        }
    });
    command({"HKEYS", keys::node_rooms(node)},
            [this, node, state, generation = sync_count_](std::optional<redis_reply> reply) {
                if (!is_ok(reply) || generation != sync_count_ || phase_ != phase::up) {
                    return;
                }
                for (const auto& f : reply->elements) {
                    auto cut = f.text.find('\n');
                    if (cut != std::string::npos) {
                        state->rooms[f.text.substr(0, cut)].insert(f.text.substr(cut + 1));
                    }
                }
                set_node_state(node, std::move(*state));
            });
}

// ---- Redis calls ----

bool cluster_node::command(std::initializer_list<std::string_view> argv, redis_callback cb) {
    if (!commands_) {
        return false;
    }
    return commands_->command(argv, cb ? std::move(cb) : [](std::optional<redis_reply>) {});
}

bool cluster_node::command(const std::vector<std::string>& argv, redis_callback cb) {
    if (!commands_) {
        return false;
    }
    std::vector<std::string_view> views(argv.begin(), argv.end());
    return commands_->command(std::span<const std::string_view>(views), cb ? std::move(cb) : [](std::optional<redis_reply>) {});
}

bool cluster_node::eval(std::string_view script, const std::vector<std::string>& keys_list,
                        const std::vector<std::string>& args, redis_callback cb) {
    std::vector<std::string> argv;
    argv.reserve(3 + keys_list.size() + args.size());
    argv.emplace_back("EVALSHA");
    argv.push_back(sha_of(script));
    argv.push_back(std::to_string(keys_list.size()));
    argv.insert(argv.end(), keys_list.begin(), keys_list.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return command(argv, std::move(cb));
}

}  // namespace parley::cluster
