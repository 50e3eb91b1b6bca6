#pragma once

#include "protocol/shared_frame.hpp"
#include "registry/session_handle.hpp"
#include "rooms/history/history_store.hpp"
#include "rooms/history/room_log.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::rooms {

// How the node stands in its cluster, for /healthz and /metrics.
struct cluster_health {
    bool degraded = true;                  // Redis (or one of its shards) unreachable, or not in sync yet
    std::uint64_t shards_down = 0;         // Redis servers other than the first that are unreachable
    std::uint64_t events_received = 0;     // events read from the cluster's channels
    std::uint64_t messages_received = 0;   // of them, room messages (says and numbered events)
    std::uint64_t rooms_fed = 0;           // rooms whose channel this node is subscribed to
    std::uint64_t messages_sequenced = 0;  // says of this node's users numbered by the cluster
    std::uint64_t resyncs = 0;             // times the node read the cluster's state (first join included)
    std::uint64_t names_lost = 0;          // names another node took while this one was cut off
    std::uint64_t remote_users = 0;        // users logged in on other nodes
    std::uint64_t remote_nodes = 0;        // other live nodes
};

// A log (a room, or a direct conversation by its key "dm:A:B") a user has a read marker in, as
// `welcome` lists it: the marker and the log's newest message.
struct marked_log {
    std::string key;
    std::int64_t read = 0;
    log_activity activity;
};

// The answer to a read marker saved in the cluster.
struct read_outcome {
    enum class result {
        moved,            // the marker is `seq` now
        unchanged,        // it was at or past the seq read already; it is `seq`
        no_conversation,  // a direct conversation that does not exist
        unavailable,      // the cluster could not answer (unreachable, or Redis refused)
    };
    result what = result::unavailable;
    std::int64_t seq = 0;
};

// What a session asks of the cluster its node belongs to: the seam that the Redis cluster node
// (server/cluster) implements. With no cluster configured the hub has none and sessions go the
// single-node way.
// Thread: every method may be called from any worker; none blocks (each only queues work for the
// cluster's own loop, or reads a replica under a short lock).
// A room of the cluster's room list (cluster_link::list_rooms).
struct listed_room {
    std::string name;
    std::size_t members = 0;
    std::string topic;
};

class cluster_link {
public:
    virtual ~cluster_link() = default;

    enum class claim_outcome { claimed, taken };
    // Takes user's name cluster-wide for a session that already holds it in this node's
    // registry. done runs later on the session's worker (posted there), or never for a session
    // that is gone by then (the claim is released again when no local session holds the name).
    // While the cluster is unreachable the name is claimed when it returns, and done runs at once
    // with `claimed`: a node without Redis goes on serving its own users.
    virtual void claim_name(std::string_view user, registry::session_handle who,
                            std::function<void(claim_outcome)> done) = 0;
    // No session of this node holds user any more: the name is free in the cluster.
    virtual void release_name(std::string_view user) = 0;

    // A say in a clustered room: the cluster assigns its seq, stores it in the shared history and
    // delivers it to the room on every node (this one included, through room::apply_message).
    // The sender (when ack_id is not empty) gets its `ack` before its own copy of the message.
    // While the cluster is unreachable the say is handed back to the sender's session
    // (chat_session::say_here, posted to its worker), which serves the room locally.
    virtual void submit_say(std::string_view room, std::string_view from, std::string_view text, std::int64_t ts,
                            registry::session_handle sender, std::string_view ack_id) = 0;

    // A room event other than a say (a moderation action, an edit, a delete, a creator's
    // ownership), encoded by the sender's worker with its seq left out
    // (protocol::split_around_seq): numbered, stored and delivered like a say, and it changes the
    // room on every node when it arrives (room::apply_message). The sender (when ack_id is not
    // empty) gets its ack before the event. These are never made on one node alone: while the
    // cluster is unreachable, or when Redis refuses, the sender is told `unavailable`; an edit or
    // delete of a message deleted meanwhile is told `message_not_found`.
    struct numbered_event {
        std::string room;
        std::string json_before;  // the event's JSON around its seq
        std::string json_after;
        std::int64_t ts = 0;
        // What the event changes of the room's stored settings, kept by the cluster with it.
        std::vector<room_setting> settings;
        // Stored messages the event rewrites (an edit's new text, a delete's tombstone and the
        // deleted message's earlier edits without their text): the old entries leave the cluster's
        // stream, these take their seqs.
        std::vector<log_entry> revisions;
        // An edit's or a delete's message: refused if it was deleted before this event's turn.
        std::int64_t target = 0;
        // Stored only while the room has never held a message (a new room's creator becomes its
        // owner; whoever comes second in the cluster does not).
        bool new_room_only = false;
        // Stored only while the room's first setting in `settings` still holds this value (the
        // end of a timed ban or mute, offered by every node that sees it: kept once, and never
        // lifting a newer ban of the same user).
        std::optional<std::string> only_if_stored;
    };
    virtual void submit_event(numbered_event event, registry::session_handle sender, std::string_view ack_id) = 0;
    // A node receives the messages of the rooms it feeds only: those where it has members (and
    // for a while after the last one left). Before a join into a room that is not fed here
    // (room::join_request::needs_feed), the session asks the cluster to feed it: the node
    // subscribes to the room's messages and catches the room up (history, seq, settings), then
    // marks it fed (room::set_fed). done runs once, on the cluster's thread: true when the room
    // is fed, false when the cluster cannot feed it now (unreachable: the room is served by this
    // node alone until it returns). The caller posts what follows to its own worker.
    virtual void open_room(std::string_view room, std::function<void(bool fed)> done) = 0;

    // False while the cluster cannot number the room's messages (Redis, or the Redis server
    // holding the room, unreachable): its says are served by this node alone (say_here).
    virtual bool sequencing(std::string_view room) const = 0;
    // While unreachable: the epoch this node's rooms continue in (a room's seqs from now on are
    // this node's alone, so they must not pass for the cluster's), and the says made meanwhile,
    // which join the shared history when the cluster returns.
    virtual std::int64_t detached_epoch() const = 0;
    virtual void keep_for_cluster(std::string_view room, std::string_view from, std::string_view text,
                                  std::int64_t ts) = 0;

    // Any thread.
    virtual cluster_health health() const = 0;

    // Delivers a live `dm` frame to user `to`'s sessions on the other nodes. done runs once, on
    // the cluster's thread: true when a node holding the name got it, false when none did (the
    // user is not logged in anywhere else, or the cluster cannot be reached).
    virtual void send_dm(std::string_view to, const protocol::shared_frame& frame, std::function<void(bool)> done) = 0;
    // The names logged in anywhere in the cluster, read from the cluster's data, sorted. done
    // runs once, on the cluster's thread: nullopt when the cluster cannot say now (the caller
    // then lists this node's users).
    virtual void list_users(std::function<void(std::optional<std::vector<std::string>>)> done) = 0;
    // Every room with members anywhere in the cluster, with their number and topic, read from
    // the cluster's data (each node holds only the members of the rooms it feeds). done runs
    // once, on the cluster's thread: nullopt when the cluster cannot say now (the caller then
    // lists this node's rooms).
    virtual void list_rooms(std::function<void(std::optional<std::vector<listed_room>>)> done) = 0;

    // ---- state kept for identities (token mode): in the cluster's Redis, so every node sees it ----

    // A dm stored in the conversation of from and to: the cluster numbers it, stores it, makes
    // the conversation one of both users' (from's marker moves to it) and gives it to the
    // sessions of both users on every node except `sender`. Then the sender's session (posted to
    // its worker) gets its copy and, when ack_id is not empty, its ack; or `unavailable` (with
    // ack_id as `re`) when the cluster cannot take it: unreachable now, or Redis refused it. A dm
    // whose answer a lost connection took is sent again when Redis returns and stored once; its
    // sender hears of it then.
    virtual void submit_dm(std::string_view from, std::string_view to, std::string_view text, std::int64_t ts,
                           registry::session_handle sender, std::string_view ack_id) = 0;

    // Moves user's read marker in `key` (a room's name, or a conversation's key) to seq, never
    // back and never past the log's last message. done runs once, posted to who's worker (so
    // it finds the session only if it is still there).
    virtual void save_read(std::string_view user, std::string_view key, std::int64_t seq, registry::session_handle who,
                           std::function<void(read_outcome)> done) = 0;

    // Every log user has a marker in, with its newest message, for `welcome`. done runs once,
    // posted to who's worker: with them in no order, or with nullopt when the cluster cannot
    // answer (unreachable, or Redis refused).
    virtual void load_conversations(std::string_view user, registry::session_handle who,
                                    std::function<void(std::optional<std::vector<marked_log>>)> done) = 0;
};

}  // namespace parley::rooms
