#pragma once

#include "protocol/server_messages.hpp"
#include "protocol/shared_frame.hpp"
#include "protocol/stored_event.hpp"
#include "registry/session_handle.hpp"
#include "rooms/chat_events.hpp"
#include "rooms/cluster_link.hpp"
#include "rooms/history/history_store.hpp"
#include "rooms/history/log_cache.hpp"
#include "rooms/history/room_log.hpp"
#include "rooms/message_bus.hpp"
#include "rooms/room_moderation.hpp"
#include "rooms/session_output.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <cstdint>
#include <map>
#include <utility>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::rooms {

class room_directory;
class worker_context;

// One chat room: its members, its seq and history (through its room_log), and the fan-out.
//
// Every broadcast is encoded ONCE into a shared frame, then ONE task per worker that has members
// is posted while the room's lock is held, so every worker sees the room's events in order.
// The lock is held only for bookkeeping and posting: never across I/O.
// Thread: every public method may be called from any worker thread.
class room : public std::enable_shared_from_this<room> {
public:
    // The room holds its log's handle: the log stays in memory while the room exists.
    // settings: what the store holds for the room (history_store::room_settings); with a
    // directory, changes are saved through the directory's store. identities: whether names are
    // identities (token mode), see set_identities.
    room(std::string name, log_handle log, message_bus& bus, std::vector<worker_context*> workers,
         room_directory* directory, bool permanent, const std::vector<room_setting>& settings = {},
         bool identities = false);

    const std::string& name() const { return name_; }
    // Member sessions right now; read without the lock (for `rooms` listings).
    std::size_t member_count() const { return member_count_.load(std::memory_order_relaxed); }

    struct join_result {
        // not_fed: join_request::needs_feed and the room is not fed here (nothing changed).
        enum class status { joined, full, banned, gone, not_fed } outcome = status::gone;
        std::int64_t epoch = 0;
        protocol::member_list members;  // the first joined_members_max names, and the count
        std::vector<protocol::shared_frame> history;
        std::optional<bool> recovered;
        std::uint64_t joined_event = 0;
        protocol::room_standing standing;  // topic, roles, slow mode, bans and mutes
        bool may_own = false;              // join_request::ownership_by_cluster: the room looks new here
    };
    struct join_request {
        std::string_view user;
        registry::session_handle who;
        std::optional<std::int64_t> after;
        std::optional<std::int64_t> epoch;
        std::size_t recent = 50;           // messages in `joined` without `after`
        std::size_t recover_limit = 1000;  // at most this many with `after`
        // Names in `joined`: the first this many of the sorted list (members_truncated beyond).
        std::size_t joined_members_max = 100;
        std::size_t max_members = 100000;
        // Above this many members, joins and leaves are not announced (presence storms).
        std::size_t presence_max_members = 1000;
        // Token mode: the user who makes a room that never had a message or a role owns it.
        bool owns_if_new = false;
        // In a cluster only the cluster knows whether the room is new: join_result::may_own
        // says it looks so here, and the session asks the cluster (ownership_event).
        bool ownership_by_cluster = false;
        // Token mode: the role the user's token claims in this room (member: none).
        room_role claimed_role = room_role::member;
        // In a cluster: join only a room that is fed here (see set_fed), else answer not_fed, so
        // the session has the cluster feed it first (cluster_link::open_room).
        bool needs_feed = false;
    };
    // Adds the member and tells the others (presence join). `gone` means the room was closed
    // concurrently: look it up again.
    join_result join(const join_request& request);

    // The `joined` reply for a session that is already a member (a client resyncing), with no
    // change to membership and no presence.
    join_result describe(const join_request& request) const;

    // Removes the member; others get presence leave and, when `disconnected`, a system line,
    // unless the room has more than presence_max_members.
    void leave(std::string_view user, registry::session_handle who, bool disconnected,
               std::size_t presence_max_members = SIZE_MAX);

    // The topic shown (the one set in the room, else the configuration's; empty: none).
    std::string topic() const;

    // A page of the sorted list of members on every node: the names after `after` (empty: from
    // the start), at most limit of them, and the member count; `more` when names remain after
    // the page. Costs the page, not the room: a big room pages without copying its list.
    protocol::member_list members_page(std::string_view after, std::size_t limit, bool& more) const;

    // In a room above presence_max_members (no presence events), tells the members here its
    // member count with presence_count, when it changed since the last one sent and at least
    // interval_ms after it. Called by room_directory::tick about once a second.
    void show_member_count(std::int64_t now_ms, std::int64_t interval_ms, std::size_t presence_max_members);

    // Declared in the configuration (exists with no members) or not, and its topic. A room
    // that stops being declared closes when its last member leaves, or now if it is empty.
    // Returns false when the room had already closed (look it up again).
    // roles: the configuration's owners and moderators (applied only while names are identities).
    bool set_declared(bool permanent, std::string topic, room_moderation::role_map roles = {});
    // Whether names are identities (token mode). Without, stored roles, bans and mutes are kept
    // but not applied, since the next holder of a free name is someone else (docs/security.md);
    // the topic and slow mode apply either way.
    void set_identities(bool identities);

    // Assigns the next seq, encodes the message once, stores it and fans it out. Returns the seq.
    // With ack_to, the sender's `ack` (re: ack_id) is queued first: the sender's own copy of the
    // message may be queued during this call, and the ack is to come before it.
    // A muted sender, or one slowed by slow mode, is refused: seq 0 and the refusal (nothing
    // stored or sent). The check costs one branch while nobody is muted and slow mode is off.
    enum class say_refusal { none, muted, slowed };
    struct said {
        std::int64_t seq = 0;
        say_refusal refused = say_refusal::none;
    };
    said say(std::string_view from, std::string_view text, std::int64_t ts, session_output* ack_to = nullptr,
             std::string_view ack_id = {});

    // In a cluster, before a say goes to be numbered: whether user may say now (a mute, slow
    // mode; a turn of slow mode is taken). The same check say() makes on one node.
    say_refusal may_say(std::string_view user, std::int64_t ts);

    // ---- moderation (room_moderate.cpp) ----
    struct moderation_request {
        std::string_view actor;
        moderation_action action = moderation_action::kick;
        std::string_view target;               // whom it is about; empty for the room's settings
        std::string_view reason;               // kick, ban, mute
        std::optional<std::int64_t> until_ms;  // ban, mute: absent, until lifted
        room_role role = room_role::member;    // set_role
        std::string_view topic;                // set_topic
        std::int64_t interval_s = 0;           // set_slow_mode
        // The admin API: no role needed (actor names the admin for the event). Roles, bans and
        // mutes still need identities (token mode).
        bool as_admin = false;
    };
    // unavailable: only from moderate_as_admin, a cluster that cannot take it now.
    // not_fed: only from moderate_as_admin, a cluster's room not fed on this node.
    enum class moderation_outcome {
        done, forbidden, not_a_member, unchanged, last_owner, too_many, gone, unavailable, not_fed
    };
    // A room keeps at most this many bans, mutes and roles of its own (memory and store bounded).
    static constexpr std::size_t max_settings = 10000;
    // Checks the actor's role and applies the action. When done, the action is an event in the
    // room's sequence (protocol::encode_moderation): stored and given to every member, the
    // actor's `ack` first, and replayed on catch-up. A kicked or banned user's sessions are not
    // removed here: their workers do that (chat_session::evict), after this returns.
    moderation_outcome moderate(const moderation_request& request, std::int64_t ts, session_output* ack_to,
                                std::string_view ack_id);
    // In a cluster: whether moderate() would do it now (the outcome it would give), and the
    // event it would make, for the cluster to number (cluster_link::submit_event) with the
    // stored settings it changes; the change is made on every node when the event arrives
    // (apply_effects_locked).
    moderation_outcome check_moderation(const moderation_request& request) const;
    cluster_link::numbered_event cluster_event(const moderation_request& request, std::int64_t ts) const;
    // In a cluster: the event that makes user the owner of a room nobody has used yet in the
    // whole cluster (join_result::may_own); the cluster stores it only if that still holds.
    cluster_link::numbered_event ownership_event(std::string_view user, std::int64_t ts) const;
    // The cluster's stored settings of the room replace the room's own roles, bans, mutes, topic
    // and slow mode (a node that rebases the room on the cluster's state).
    void replace_settings(const std::vector<room_setting>& rows);
    // Gives a role without a check (the configuration's owners, a token's claim, the creator).
    void grant_role(std::string_view user, room_role role);
    room_role role_of(std::string_view user) const;
    // Ends the timed bans and mutes that are over, each as an event, and forgets slow mode's
    // old entries; called from a periodic tick for the rooms that need_care(). In a cluster
    // (cluster not null) the events are the cluster's to number: each node that sees an end
    // offers it, and it is kept once (numbered_event::only_if_stored).
    void end_expired_sanctions(std::int64_t now_ms, cluster_link* cluster = nullptr);
    // Timed bans or mutes, or slow mode: the tick has work here. Read without the lock.
    bool needs_care() const { return needs_care_.load(std::memory_order_relaxed); }

    // ---- edit and delete (room_revise.cpp) ----
    struct change_request {
        std::string_view actor;
        std::int64_t seq = 0;                  // the message's
        std::optional<std::string_view> text;  // edit: the new text; nullopt: delete
        std::int64_t edit_window_ms = 0;       // how long after saying it its author may edit it
        bool as_admin = false;                 // the admin API deletes any message
    };
    // unavailable: only from delete_as_admin, a cluster that cannot take it now.
    // not_fed: only from delete_as_admin, as moderation_outcome's.
    enum class change_outcome { done, not_found, not_author, too_late, forbidden, gone, unavailable, not_fed };
    // Edits or deletes a message the room's memory holds (its newest messages): the stored copy is
    // replaced (history_store rewrites it, so deleted text leaves storage), and the change is an
    // event in the room's sequence (`edited` or `deleted`, the actor's `ack` first). A delete
    // also takes the text out of the message's earlier `edited` events. Only the author edits,
    // within edit_window_ms; the author, a moderator or an owner deletes.
    change_outcome change_message(const change_request& request, std::int64_t ts, session_output* ack_to,
                                  std::string_view ack_id);
    // In a cluster: whether change_message would do it now, and the event for the cluster to
    // number, with the stored messages it rewrites (the change is made on every node when its
    // event arrives, apply_effects_locked).
    change_outcome check_change(const change_request& request, std::int64_t ts) const;
    cluster_link::numbered_event cluster_event(const change_request& request, std::int64_t ts) const;

    // A `system` line to every member (an announcement; not stored, no seq).
    void announce(std::string_view text);

    // Relays a typing notice to the other members (not stored, no seq).
    void typing(std::string_view user, registry::session_handle who);

    // ---- cluster: events from the other nodes, applied by the cluster's loop ----

    // A message sequenced by the cluster (seq assigned by Redis): stored and delivered to the
    // local members. `duplicate` when seq is not above the log's last seq (already applied),
    // `gap` when messages before it are missing (nothing applied: the caller fetches those
    // first), `gone` when the room closed meanwhile (look it up again).
    // allow_gap: apply even after missing seqs (read from a stream that no longer holds them).
    // before_fanout, when set, runs under the room's lock just before the members' copies are
    // queued, only when the message is applied (the sender's ack goes there, so it comes first).
    // It is set on the node the message was said on, which alone reports it (chat_events).
    // A room nobody is in any more (on any node) closes afterwards.
    enum class apply_outcome { applied, duplicate, gap, gone };
    apply_outcome apply_message(std::int64_t seq, std::int64_t ts, const protocol::shared_frame& frame,
                                bool allow_gap = false, const std::function<void()>& before_fanout = {});
    // In a cluster: whether the cluster's messages for this room reach this node and its log
    // and settings are caught up with them (its channel is subscribed), so a join may be answered
    // from what the room holds. Set by the cluster's thread when it has fed the room; cleared
    // when the node stops feeding it, which it may do only while nobody here is in the room
    // (stop_feed_if_unused: checked and cleared under the lock that joins take).
    void set_fed(bool fed);
    bool fed() const;
    bool stop_feed_if_unused();
    // The log's last seq, read under the lock.
    std::int64_t last_seq() const;
    // Epoch and last seq of the log, together.
    std::pair<std::int64_t, std::int64_t> log_position() const;

    // A join, leave, typing notice or announcement made on node `node`; frame is what that node
    // sent its own members, delivered here as it is. Returns false when the room had closed.
    // Presence is shown to local members only while the room has at most presence_max_members.
    bool apply_remote(room_event event, std::string_view node, std::string_view user,
                      const protocol::shared_frame& frame, std::size_t presence_max_members = SIZE_MAX);
    // Makes the members on other nodes exactly `remote` (user -> node), telling the local
    // members of every difference (presence). Used when a node (re)reads the cluster's state,
    // and with an empty map for a node that died. Returns false when the room had closed.
    bool set_remote_members(const std::map<std::string, std::string, std::less<>>& remote);
    // Removes the members of node `node` (a node that died or restarted), as if they
    // disconnected. Returns false when the room had closed.
    bool drop_node(std::string_view node);
    // Users with a session here in the room, sorted (what this node tells the cluster).
    std::vector<std::string> local_members() const;

    // Replaces the log's content with the cluster's: epoch, and its newest messages (oldest
    // first). When the epoch or anything the local members were shown changed, they get a fresh
    // `joined` (without `re`), with recovered false, so clients start the room over.
    // last_seq: the cluster's last seq for the room (its stream may hold fewer than that).
    // Returns false when the room had closed (look it up again).
    bool rebase(std::int64_t epoch, std::int64_t last_seq, std::vector<log_entry> newest);

    // The cluster is unreachable and this node is about to number the room's messages alone:
    // the log moves to `epoch` (keeping its messages and seq), and local members get a fresh
    // `joined` saying so, so no client takes this node's seqs for the cluster's. Nothing when
    // the log is in that epoch already.
    void detach(std::int64_t epoch);

    // Closes the room when nobody is in it on any node and it is not declared.
    void close_if_unused();

    // History query (oldest first): before/after as in protocol v1, else the newest. What memory
    // does not hold is left in the answer's `stored` part, for history_store::complete.
    history_answer history(std::optional<std::int64_t> before, std::optional<std::int64_t> after,
                           std::size_t limit) const;
    // For history_store::complete, which holds a copy while it reads.
    const log_handle& log() const { return log_; }

private:
    // Requires mutex_. Replaces message target (by from, at ts) by its tombstone, and its earlier
    // `edited` events by ones without text.
    void erase_text_locked(std::int64_t target, std::string_view from, std::int64_t ts);
    // Requires mutex_. What erase_text_locked writes, each at its seq.
    std::vector<log_entry> text_erasures_locked(std::int64_t target, std::string_view from, std::int64_t ts) const;
    // Requires mutex_. The event a moderation request makes, with its seq.
    protocol::shared_frame moderation_event_frame_locked(const moderation_request& request, std::int64_t seq,
                                                         std::int64_t ts) const;
    // Requires mutex_. cluster_event of a moderation request.
    cluster_link::numbered_event cluster_event_locked(const moderation_request& request, std::int64_t ts) const;
    // Requires mutex_. The stored settings the action changes.
    std::vector<room_setting> settings_changed_by_locked(const moderation_request& request) const;
    // Requires mutex_. What a moderation, edited or deleted event numbered by the cluster does to
    // the room's state on this node (room_effects.cpp); nothing for any other frame.
    void apply_effects_locked(const protocol::shared_frame& frame);
    // Requires mutex_. change_message()'s checks, without a change; fills in the message and
    // what it says when found.
    change_outcome vet_change_locked(const change_request& request, std::int64_t ts,
                                     std::optional<log_entry>& original,
                                     std::optional<protocol::stored_event>& shown) const;
    // Requires mutex_. moderate()'s checks, without a change.
    moderation_outcome vet_locked(const moderation_request& request) const;
    // Requires mutex_. Saves a changed setting through the directory's store.
    void save_locked(const room_setting& setting);
    // Requires mutex_. Updates needs_care().
    void note_care_locked();
    // Requires mutex_. The topic shown: the one set in the room, else the configuration's.
    const std::string& topic_locked() const { return own_topic_ ? *own_topic_ : configured_topic_; }
    // Requires mutex_. Fills epoch, members, history and recovered of a `joined` reply.
    void fill_reply_locked(const join_request& request, join_result& result) const;
    // Requires mutex_. Posts frame to every worker with members; skips `except`. The calling
    // thread's own worker, when its members here are few, is served at once instead (see
    // inline_fanout_limit in room.cpp).
    void broadcast_locked(const protocol::shared_frame& frame, registry::session_handle except);
    // Requires mutex_. Tells the local members the room starts over in the log's epoch.
    void send_fresh_joined_locked();
    // Requires mutex_. Members on every node, for presence limits and the member count. (A name
    // moving between nodes may be counted twice for a moment.)
    std::size_t all_members_locked() const { return members_.size() + remote_members_.size(); }
    // Requires mutex_. members_page().
    protocol::member_list members_page_locked(std::string_view after, std::size_t limit, bool& more) const;
    // Requires mutex_. Hands a chat event to the directory's sink when anyone wants its kind (the
    // lock keeps one room's events in order); a branch when nobody does.
    void report_locked(protocol::webhook_event kind, std::string_view user, const protocol::shared_frame& frame,
                       std::int64_t ts_ms) const;
    // Requires mutex_. The event a frame numbered in the room's sequence is, for report_locked.
    static protocol::webhook_event event_kind_of(const protocol::shared_frame& frame);
    // Requires mutex_. Closes when nobody is here on any node and the room is not declared.
    void close_if_unused_locked();
    // Requires mutex_. Shows the members a leave: its presence frame and, when `disconnected`,
    // a system line saying so.
    void show_leave_locked(const protocol::shared_frame& presence, std::string_view user, bool disconnected,
                           registry::session_handle except);
    // Requires mutex_. Removes the remote members (user, node) that `which` picks, as leaves.
    // Defined in room_cluster.cpp, its only user.
    template <typename Predicate>
    void drop_remote_locked(Predicate which, bool disconnected);

    const std::string name_;
    const log_handle log_;
    message_bus& bus_;
    const std::vector<worker_context*> workers_;
    room_directory* const directory_;

    mutable std::mutex mutex_;
    std::map<std::string, std::uint32_t, std::less<>> members_;  // name -> sessions of that name
    // Members on other nodes of a cluster: user -> node (a name is held by one node).
    std::map<std::string, std::string, std::less<>> remote_members_;
    std::vector<std::uint32_t> members_per_worker_;
    // Per worker: delivery tasks posted to it and not yet run. A broadcast made on a worker's
    // own thread reaches that worker's members at once (no task) only while this is zero, so
    // it cannot overtake an earlier broadcast still queued there. Raised under mutex_, lowered
    // by the task on its worker.
    std::unique_ptr<std::atomic<std::uint32_t>[]> undelivered_;
    std::uint64_t event_ = 0;  // counts broadcasts, so a new member skips those it was shown already
    bool closed_ = false;      // removed from the directory: joiners must look again
    bool permanent_;           // declared in the configuration
    bool identities_;          // names are identities: roles, bans and mutes apply
    bool fed_ = false;         // set_fed
    std::string configured_topic_;
    std::optional<std::string> own_topic_;  // set by set_topic (stored); wins over the configuration's
    std::size_t count_shown_ = 0;      // the member count last sent in presence_count
    std::int64_t count_sent_ms_ = 0;   // when
    room_moderation moderation_;  // under mutex_
    std::atomic<std::size_t> member_count_{0};
    std::atomic<bool> needs_care_{false};
};

}  // namespace parley::rooms
