#pragma once

#include "protocol/error_code.hpp"
#include "rooms/cluster/cluster_event.hpp"
#include "rooms/cluster/partitions.hpp"
#include "rooms/cluster/redis_link.hpp"
#include "rooms/cluster_link.hpp"
#include "rooms/history/history_store.hpp"
#include "rooms/message_bus.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace parley::rooms {
class chat_hub;
class room;
}  // namespace parley::rooms

namespace parley::cluster {

// How important a line the node reports is (the server logs it at that level).
enum class report_level { debug, info, warn, error };

struct cluster_options {
    std::string node_id;
    std::chrono::milliseconds name_ttl{15000};
    std::size_t stream_length = 10000;    // messages per room stream
    std::size_t history_per_room = 1000;  // messages per room in memory (read at a resync)
    std::size_t presence_max_members = 1000;
    // Where the node's log lines go (nothing when empty). Thread: the cluster's.
    std::function<void(report_level, std::string_view)> report;
};


// This daemon as a node of a cluster that meets in Redis: the cluster's logic, without sockets.
//
// Presence goes per room: a join or leave changes the room's members hash in its partition and
// is published on the room's channel with a version, in order with its says, so only the nodes
// that feed the room hear of it; a node starting to feed a room reads its members with its seq.
// The cluster-wide room and user lists are read from the partitions on request (list_rooms,
// list_users: a name's lease and the partition's users index). A user's dms go on the user's
// own channel, which the node holding the name reads. The cluster's channel carries only the
// nodes' comings and goings (and sync markers). A say is numbered, stored in the
// room's stream and published by one script; each node turns the published JSON into one frame
// and fans it out to its own members. The sender's node sends the ack first.
//
// With identities (token mode) the state kept per user is in Redis as well, so a user finds it
// on any node: a stored dm is numbered, stored in its conversation's stream and published by one
// script, as a say is; read markers are one hash per user, moved forward by a script; welcome's
// conversations are read in one script.
//
// Redis unreachable: the node is degraded. It serves its own users: says are numbered locally
// in a detached epoch and kept; names are claimed locally and kept. When Redis returns the node
// resynchronizes: kept says join the shared history, names are claimed, and the node reads the
// others' state again (a snapshot bracketed by a marker on the channel, so no event is missed
// or applied twice), catching each room up from its stream.
//
// Redis is reached only through a redis_link (server/cluster/redis_transport over RESP on Asio; a
// fake in the unit tests), which also tells the node when Redis comes and goes and hands it
// the channel's messages.
//
// Thread: the cluster_link methods, health(), publish() and read_stream() may be called from
// any worker; everything else runs on the cluster's thread (where the link runs its tasks).
class cluster_node final : public rooms::cluster_link {
public:
    cluster_node(redis_link& link, cluster_options options);
    ~cluster_node() override;
    cluster_node(const cluster_node&) = delete;
    cluster_node& operator=(const cluster_node&) = delete;

    // The bus the hub's rooms publish their events on, and the history store of a cluster (room
    // logs in memory, older messages read from the rooms' streams). Both refer to this node.
    std::unique_ptr<rooms::message_bus> make_bus();
    std::unique_ptr<rooms::history_store> make_history_store();

    // Before the link starts: the hub whose rooms and users this node serves.
    void attach(rooms::chat_hub& hub) { hub_ = &hub; }

    // ---- from the link, on the cluster's thread ----
    // Both connections answer (commands and the subscription to the channel): sync.
    void on_redis_up();
    // Either connection was lost: degraded until on_redis_up.
    void on_redis_down();
    // With several Redis servers: shard (not the first, which on_redis_up and on_redis_down
    // are about) is lost, or answers again. Only its rooms are served by this node alone
    // meanwhile; when it returns they are caught up as after a sync. The link reports every
    // shard other than the first as down before it connects, and up when it answers.
    void on_shard_down(std::uint32_t shard);
    void on_shard_up(std::uint32_t shard);
    // On a Redis Cluster: shard's master left the slot map, so none of the node's rooms lives
    // there any more (the masters that took its slots are down until they answer, and catch
    // those rooms up). Its state clears without a resync.
    void on_shard_gone(std::uint32_t shard);
    // A publication on a channel (one event, or a room's batch of messages), in Redis's order.
    // A batch names no room: it is the channel's (keys::room_of_channel).
    void on_channel_message(std::string_view publication, std::string_view channel = {});
    // Redis confirmed a subscription this node asked for (redis_link::subscribe).
    void on_subscribed(std::string_view channel);
    // Every name_ttl / 3: renew this node's lease and its names; stop feeding the rooms nobody
    // here has been in since the last one.
    void heartbeat();

    // Thread: any. Leaves the cluster: this node's names and presence go at once instead of
    // after their lease; done runs (on the cluster's thread) when Redis confirmed it or could not.
    void depart(std::function<void()> done);
    // Thread: the cluster's. Nothing more goes to Redis; answers still to come are ignored.
    void stop();

    // Thread: any.
    rooms::cluster_health health() const override;
    bool degraded() const { return degraded_.load(std::memory_order_relaxed); }
    const std::string& node_id() const { return options_.node_id; }

    // ---- rooms::cluster_link ----
    void claim_name(std::string_view user, registry::session_handle who,
                    std::function<void(claim_outcome)> done) override;
    void release_name(std::string_view user) override;
    void open_room(std::string_view room, std::function<void(bool fed)> done) override;
    void submit_say(std::string_view room, std::string_view from, std::string_view text, std::int64_t ts,
                    registry::session_handle sender, std::string_view ack_id) override;
    void submit_event(numbered_event event, registry::session_handle sender, std::string_view ack_id) override;
    bool sequencing(std::string_view room) const override;
    std::int64_t detached_epoch() const override { return detached_epoch_.load(std::memory_order_acquire); }
    void keep_for_cluster(std::string_view room, std::string_view from, std::string_view text,
                          std::int64_t ts) override;
    void send_dm(std::string_view to, const protocol::shared_frame& frame, std::function<void(bool)> done) override;
    void list_users(std::function<void(std::optional<std::vector<std::string>>)> done) override;
    void list_rooms(std::function<void(std::optional<std::vector<rooms::listed_room>>)> done) override;
    void submit_dm(std::string_view from, std::string_view to, std::string_view text, std::int64_t ts,
                   registry::session_handle sender, std::string_view ack_id) override;
    void save_read(std::string_view user, std::string_view key, std::int64_t seq, registry::session_handle who,
                   std::function<void(rooms::read_outcome)> done) override;
    void load_conversations(std::string_view user, registry::session_handle who,
                            std::function<void(std::optional<std::vector<rooms::marked_log>>)> done) override;

    // Thread: any. A room event for the other nodes (the bus forwards here).
    void publish(rooms::room_event event, std::string_view room, std::string_view user,
                 const protocol::shared_frame& frame);
    // Thread: any. Reads stored messages of a log's stream (history_store::read_stored): a room's,
    // or a direct conversation's when `room` is a conversation key ("dm:A:B");
    // done runs once, on the cluster's thread, with the messages oldest first, or with nullopt
    // when Redis could not answer (unreachable, or lost before the answer).
    void read_stream(std::string room, rooms::stored_read what,
                     std::function<void(std::optional<std::vector<rooms::log_entry>>)> done);
    // Thread: any. The epoch a room log made now starts in: the cluster's once this node has
    // read it, this node's start time before.
    std::int64_t log_epoch() const { return log_epoch_.load(std::memory_order_acquire); }

private:
    enum class phase { down, syncing, up };
    // One say on its way to Redis (kept until answered, so a connection lost meanwhile loses none).
    struct pending_say {
        std::uint64_t nonce = 0;  // numbers this node's says within its run (the say script drops repeats)
        std::string room;
        std::string from;
        std::string json_before;  // the message's JSON around its seq (encoded once, by the sender's worker)
        std::string json_after;
        std::int64_t ts = 0;
        std::string ack;  // ack ticket, or empty
        // For handing the say back to its session when the cluster cannot take it.
        registry::session_handle sender;
        std::string text;
        std::string ack_id;
        bool from_session = false;  // false: a say kept while detached, which no session waits for
        bool event = false;         // a moderation, edit or delete event: never served by this node alone
        // An event's further arguments to the say script (settings, guard, revisions).
        std::vector<std::string> event_args;
        // A say's text as a JSON string in json_before (protocol::message_text_around_seq):
        // what a batch of says carries of it (said_batch.hpp).
        std::size_t text_at = 0;
        std::size_t text_size = 0;
    };
    // A stored dm on its way to Redis (kept until answered, as a say is).
    struct pending_dm {
        std::uint64_t nonce = 0;  // numbered with the says (the dm script drops repeats)
        std::string from;
        std::string to;
        std::string json_before;  // the dm's JSON around its seq (encoded by the sender's worker)
        std::string json_after;
        std::int64_t ts = 0;
        registry::session_handle sender;
        std::string ack_id;
    };
    // A message received for a room that is being caught up from its stream: applied after.
    struct queued_message {
        std::int64_t seq = 0;
        std::int64_t ts = 0;
        std::string json;
        std::string origin;
        std::string ack;
    };

    // A room this node feeds: its channel is subscribed (or being subscribed), so its messages
    // reach the node. Rooms with members here are fed, and for one to two heartbeats after the
    // last one left.
    struct fed_room {
        enum class state {
            subscribing,  // waiting for Redis to confirm the subscription
            catching_up,  // subscribed; the room's history, seq and settings are being read
            fed,          // caught up, and kept so by the channel
        } now = state::subscribing;
        bool for_sync = false;  // subscribed by begin_sync, which waits for it before its snapshot
        bool idle = false;      // nobody here at the last heartbeat: unsubscribed at the next
        std::vector<std::function<void(bool)>> waiting;  // open_room calls to answer
        // The room's membership version as last read or heard (scripts::presence); -1 while its
        // members are being read, when joins and leaves from its channel wait in members_waiting.
        std::int64_t members_version = -1;
        std::vector<std::string> members_waiting;
    };

    void run(std::function<void()> task);  // posts to the cluster's thread
    // The shard a room lives on, and whether it is unreachable now (thread: any).
    std::uint32_t shard_of_room(std::string_view room) const;
    // Reads each partition's shard from the link into partition_shards_ (thread: the cluster's).
    // On a Redis Cluster the slot map may change while the node runs: read at every shard's
    // loss and return (the transport tells a loss under the old map, a return under the new).
    void read_partition_shards();
    bool shard_down(std::uint32_t shard) const {
        return shard != 0 && ((shards_down_.load(std::memory_order_acquire) >> shard) & 1) != 0;
    }
    bool room_shard_down(std::string_view room) const {
        return shards_down_.load(std::memory_order_acquire) != 0 && shard_down(shard_of_room(room));
    }
    // Keys with the same scope may go in one script (thread: the cluster's): the shard on
    // standalone servers, the slot on a Redis Cluster (redis_link::scripts_per_slot).
    std::uint32_t scope_of(std::string_view key) const {
        return link_.scripts_per_slot() ? key_slot(key) : link_.shard_of(key);
    }
    // Keys grouped by scope_of, each group in the keys' order.
    std::map<std::uint32_t, std::vector<std::string>> by_scope(std::vector<std::string> keys_list) const;
    // Renews the leases of names whose leases share one scope, in slices.
    void renew_names_in(const std::vector<std::string>& names);
    // A shard returned while the node was up: its rooms' says go out and the rooms catch up.
    void resync_shard(std::uint32_t shard);
    void report(report_level level, std::string_view line) const;

    // Phases.
    // subscribed: every channel the node asked for is confirmed (Redis has just come back);
    // else rooms still subscribing are waited for before the snapshot.
    void begin_sync(bool subscribed);
    void register_and_snapshot();
    void apply_snapshot_rooms();
    std::pair<std::int64_t, std::int64_t> room_position(const std::string& name);  // (epoch, last seq)
    // resend: the say went out before and its answer was lost; the script stores it only if it
    // did not arrive then.
    // Says and events are sent in batches: what the cluster's loop gathered while the previous
    // batch to the same scope was out goes in one script call when that one is answered (or at
    // the end of the pass, when none is out); any other command sends every say waiting first,
    // which keeps their order with the node's other events.
    void send_say(pending_say&& say, bool resend = false);
    // hold_busy: says of a scope with a batch out keep waiting.
    void flush_says(bool hold_busy = false);
    // One call for a run of plain says (scripts::says), or for events and says sent again
    // (scripts::say, with resent[i] for part[i]); scope: where they go (says_out_).
    void send_plain_says(const std::vector<const pending_say*>& part, std::uint32_t scope);
    void send_general(const std::vector<const pending_say*>& part, const std::vector<bool>& resent,
                      std::uint32_t scope);
    // The answer to a batch: each message's part of it, to on_say_answer. per_room: the says
    // per room of a scripts::says batch, whose answer is each room's first seq.
    redis_callback answer_batch(std::vector<std::uint64_t> numbers, std::uint32_t scope,
                                std::vector<std::size_t> per_room = {});
    // Tells an event's sender that the cluster did not take it (unavailable, or
    // message_not_found for an edit or delete of a message deleted meanwhile).
    void refuse_event(const pending_say& event, protocol::error_code why);
    void on_say_answer(std::uint64_t nonce, std::optional<redis_reply> reply);
    void on_snapshot(std::optional<redis_reply> reply);
    void finish_sync_if_ready();
    void renew_names();
    void on_renew_answer(const std::vector<std::string>& part, const std::optional<redis_reply>& reply);
    void on_claim_answer(const std::string& user, const std::optional<redis_reply>& reply,
                         const std::function<void(claim_outcome)>& answer);

    // Events from the channel.
    void on_event(std::string_view payload, std::int64_t batch_seq);
    // One say of a room's batch (for_each_said), as on_event takes an event.
    void on_said(const cluster_event& e);
    void handle_event(const cluster_event& e);
    void handle_room_event(const cluster_event& e, const std::string& origin);
    // seq_at: where seq's digits go into json, for a message of a batch of says (npos: json is whole).
    void apply_message(std::string_view room, std::int64_t seq, std::int64_t ts, std::string_view json,
                       std::string_view origin, std::string_view ack, bool from_stream,
                       std::size_t seq_at = std::string_view::npos);
    // Feeding rooms (cluster_node_feeds.cpp).
    void start_feeding(const std::string& room, bool for_sync);
    // Catches a fed room up with the cluster's last seq for it (fetch the gap, or start over
    // from the stream's newest); the room is fed when its queue drains (room_caught_up).
    void position_room(const std::string& room, std::int64_t seq);
    // Reads a subscribed room's seq and members (scripts::room_state), sets its members, then
    // positions it when `position` (a lost answer leaves it to the next sync, or to its shard's
    // return). During a sync the seq goes to sync_seqs_ instead.
    void read_room_state(const std::string& room, bool position);
    // The members in a room_state answer applied to the room; returns the room's seq (an error
    // is logged, and counts as 0: the room starts over from its stream).
    std::int64_t apply_room_state(const std::string& room, const redis_reply& reply);
    void room_caught_up(const std::string& room);
    void answer_waiting(fed_room& fed, bool outcome);
    void stop_idle_feeds();
    void catch_up(const std::string& room, std::int64_t from_seq, std::int64_t to_seq);
    void rebase_room(const std::string& room, std::int64_t last_seq);
    void drain_queue(const std::string& room);
    void deliver_ack(std::string_view ticket, std::string_view room, std::int64_t seq);
    void deliver_dm(std::string_view user, std::string_view json);

    // Stored direct conversations (cluster_node_conversations.cpp).
    // A read marker saved by scripts::read_marker; last: the log's last seq when it was read on
    // another shard (log_seq is empty then).
    void save_marker(const std::string& markers, const std::string& log_seq, const std::string& key, std::int64_t seq,
                     const std::string& last, bool conversation, std::function<void(rooms::read_outcome)> answer);
    void load_conversations_sharded(const std::string& user,
                                    std::function<void(std::optional<std::vector<rooms::marked_log>>)> answer);
    void send_stored_dm(const pending_dm& dm, bool resend = false);
    // A stored dm's markers, where they could not go in its script (Redis Cluster).
    void mark_dm(std::uint64_t nonce, std::int64_t seq);
    void on_dm_answer(std::uint64_t nonce, std::optional<redis_reply> reply);
    // The sender's copy and ack, or `unavailable`, to the sending session.
    void answer_dm_sender(const pending_dm& dm, std::optional<std::int64_t> seq);
    // Publishes a stored dm on both users' channels.
    void publish_stored_dm(const pending_dm& dm, std::int64_t seq);
    // A stored dm from a user's channel: to that user's sessions here, except the sender's.
    void deliver_stored_dm(const cluster_event& e);

    // Presence (cluster_node_presence.cpp). A join or leave from a room's channel, applied in
    // its version's order (payload: the publication, kept while the room's members are read).
    void on_membership(const cluster_event& e, std::string_view payload);
    // Makes rooms' members hashes agree with what `node` holds in them now (nothing, for a node
    // that is gone): each member that is not there any more leaves each room once.
    // holds_local: node is this one, and keeps the members it holds now (after an outage).
    void settle_members(const std::string& node, const std::vector<std::string>& rooms_list, bool holds_local);
    // The users this node holds in a room now.
    std::vector<std::string> local_members_of(const std::string& room) const;
    // Reads every partition's index with `script`, one call per scope, handing each answer to
    // take; finish runs once all answered (answered of asked: shards that did not are left out).
    void read_partitions(std::string_view script, std::string (*index_of)(std::uint32_t),
                         std::function<void(const redis_reply&)> take,
                         std::function<void(std::size_t answered, std::size_t asked)> finish);

    // The other live nodes.
    void drop_node(const std::string& node);
    void kick_local(const std::string& user);

    void command(std::initializer_list<std::string_view> argv, redis_callback cb = {});
    void eval(std::string_view script, const std::vector<std::string>& keys, const std::vector<std::string>& args,
              redis_callback cb = {});

    redis_link& link_;
    cluster_options options_;
    rooms::chat_hub* hub_ = nullptr;
    const std::int64_t start_epoch_;
    const std::string incarnation_;  // this run of the node: says are numbered within it
    bool stopped_ = false;

    phase phase_ = phase::down;
    std::atomic<bool> sequencing_{false};
    std::atomic<bool> degraded_{true};
    std::atomic<std::int64_t> detached_epoch_;
    // Bit N: shard N (never the first) is unreachable. Shards that returned while the node was
    // syncing are caught up when the sync ends (shards_returned_).
    std::atomic<std::uint64_t> shards_down_{0};
    // Per partition, its shard as the link last gave it; read by shard_of_room on any thread.
    std::array<std::atomic<std::uint32_t>, partition_count> partition_shards_{};
    std::uint64_t shards_returned_ = 0;
    std::int64_t epoch_ = 0;  // the cluster's history epoch, from the last sync
    std::atomic<std::int64_t> log_epoch_;

    // Sync bookkeeping: a snapshot is read while a marker goes through the channel.
    std::string sync_nonce_;
    std::uint64_t sync_count_ = 0;
    bool marker_seen_ = false;
    std::optional<redis_reply> snapshot_;
    // The seqs of the fed rooms, read beside the snapshot (room_state).
    std::map<std::string, std::int64_t, std::less<>> sync_seqs_;
    std::size_t sync_reads_ = 0;  // of those, not answered yet
    // Channel events after the marker, before the snapshot applied (with their batch's seq).
    std::vector<std::pair<std::string, std::int64_t>> buffered_;
    // Where a batch's says get their JSON back, one after another (for_each_said): the
    // cluster's thread only.
    std::string said_json_;

    std::set<std::string, std::less<>> owned_names_;
    // Rooms whose joins or leaves here could not be told (their shard was down).
    std::set<std::string, std::less<>> presence_unsent_;
    std::uint64_t next_nonce_ = 0;
    std::deque<pending_say> in_flight_;   // sent, not answered
    // Says not sent yet (with "sent again"), in order, and per scope the batches out.
    std::vector<std::pair<pending_say, bool>> unsent_;
    bool flush_posted_ = false;
    std::map<std::uint32_t, std::size_t> says_out_;
    std::vector<pending_say> unanswered_;  // sent, connection lost before the answer
    std::vector<pending_say> kept_;        // made while detached, for the shared history
    std::deque<pending_dm> dms_in_flight_;
    std::vector<pending_dm> dms_unanswered_;  // sent, connection lost before the answer
    std::unordered_map<std::string, std::deque<queued_message>> catching_up_;

    struct name_hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
    };
    std::unordered_map<std::string, fed_room, name_hash, std::equal_to<>> fed_;
    std::size_t sync_subscriptions_ = 0;  // begin_sync's subscriptions not confirmed yet
    // Rooms asked for while syncing: fed once the sync is done.
    std::vector<std::pair<std::string, std::function<void(bool)>>> deferred_opens_;

    std::set<std::string, std::less<>> nodes_;  // the other live nodes
    // A list read from every partition's index on request (list_rooms, list_users): kept a
    // second for the requests that follow, and read once for requests that come meanwhile.
    template <typename T>
    struct cached_list {
        std::optional<T> kept;
        std::chrono::steady_clock::time_point read_at{};
        std::vector<std::function<void(std::optional<T>)>> waiting;
        bool fresh() const { return kept && std::chrono::steady_clock::now() - read_at < std::chrono::seconds(1); }
        // Answers every request waiting; a whole list (every shard answered) is kept.
        void answer(std::optional<T> listed, bool whole) {
            if (listed && whole) {
                kept = *listed;
                read_at = std::chrono::steady_clock::now();
            }
            auto asking = std::move(waiting);
            waiting.clear();
            for (auto& done : asking) {
                done(listed);
            }
        }
    };
    cached_list<std::vector<rooms::listed_room>> room_list_;
    cached_list<std::vector<std::string>> user_list_;
    std::atomic<std::size_t> remote_users_{0};  // in the last user list, on other nodes

    std::atomic<std::uint64_t> events_received_{0};
    std::atomic<std::uint64_t> messages_received_{0};
    std::atomic<std::size_t> rooms_fed_{0};
    std::atomic<std::uint64_t> messages_sequenced_{0};
    std::atomic<std::uint64_t> resyncs_{0};
    std::atomic<std::uint64_t> names_lost_{0};
    std::atomic<std::size_t> remote_nodes_{0};
};

}  // namespace parley::cluster
