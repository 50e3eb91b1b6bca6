#pragma once

#include "protocol/error_code.hpp"
#include "protocol/request.hpp"
#include "protocol/server_messages.hpp"
#include "protocol/shared_frame.hpp"
#include "registry/session_handle.hpp"
#include "rooms/cluster_link.hpp"
#include "rooms/history/unix_clock.hpp"
#include "rooms/room.hpp"
#include "rooms/room_access.hpp"
#include "rooms/session_output.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::rooms {

class chat_hub;
class room;
class worker_context;

// The protocol v1 state machine of one connection: logged in or not, the rooms it is in, its
// throttles. It receives complete text messages and answers through its session_output; it owns
// no socket, so every protocol rule is testable without a network.
// Thread: every method runs on the owning worker's thread.
class chat_session {
public:
    // The hub is the worker's (worker_context::hub()).
    chat_session(worker_context& worker, session_output& output);
    ~chat_session();
    chat_session(const chat_session&) = delete;
    chat_session& operator=(const chat_session&) = delete;

    // One complete WebSocket text message from the client.
    void on_text(std::string_view message);

    // Leaves r because an administrator closed it: the client gets `left` and a system line
    // with the reason. Nothing when the session is not in r.
    void evict(const room* r, std::string_view reason);
    // Leaves r because its moderators removed the user (kick or ban): `left`, then `notice` as a
    // system line. Nothing when the session is not in r.
    void remove_from(const room* r, std::string_view notice);

    // The connection is ending: leave every room (others see presence leave and, when
    // `disconnected`, a system line) and free the name. Idempotent.
    void end(bool disconnected = true);

    // A say the cluster could not take (it lost Redis): served by this node alone, in the room's
    // detached epoch, and kept for the shared history. Nothing when the session left the room.
    void say_here(std::string_view room_name, std::string_view text, std::int64_t ts, std::string_view ack_id);

    session_output& output() { return output_; }
    registry::session_handle handle() const { return handle_; }
    const std::string& user() const { return user_; }
    bool logged_in() const { return !user_.empty() && !claiming_; }
    std::size_t room_count() const { return rooms_.size(); }

private:
    struct membership {
        std::shared_ptr<room> joined;
        std::int64_t last_typing_ms = 0;
    };
    using request = protocol::request;

    void dispatch(request& req);
    void on_login(request& req);
    // retried: a join the cluster was asked to feed the room for (open_then_join), which
    // goes ahead as the room is now.
    void on_join(request& req, bool retried = false);
    // A join whose room the cluster must feed here first (room::join_request::needs_feed):
    // later requests wait in held_ until it is answered, so they keep their order.
    void open_then_join(request req);
    // The requests held while a join waited, in order, until one waits again.
    void release_held(std::unique_ptr<std::vector<std::string>> held);
    void on_leave(request& req);
    void on_say(request& req);
    void on_dm(request& req);
    void on_users(request& req);
    void on_rooms(request& req);
    // The user list to this session: this node's names and the cluster's (nullopt: none read).
    void answer_users(std::optional<std::vector<std::string>> cluster_users, const std::string& re);
    // The room list to this session: the cluster's (nullopt: this node's rooms), its private
    // rooms left out when the user may not join them.
    void answer_rooms(std::optional<std::vector<listed_room>> cluster_rooms, const std::string& re);
    void on_history(request& req);
    // A page of a room's member list, for its members (the room then knows every node's).
    void on_members(request& req);
    void on_typing(request& req);
    // Direct conversations and read markers: chat_session_conversations.cpp.
    void on_dm_history(request& req);
    void on_read(request& req);
    // Moderation, edit and delete: chat_session_moderation.cpp.
    void on_moderate(request& req);
    void on_change_message(request& req);
    // A dm stored in the conversation of user_ and req.to, then delivered to whoever is online.
    void send_stored_dm(request& req);
    // Gives frame to every other session of user_ and of `to` (when not user_) on this node.
    void deliver_dm(const protocol::shared_frame& frame, std::string_view to);
    // A dm this session sent, for webhooks that want dms.
    void report_dm(const protocol::shared_frame& frame) const;

    // Direct messages and read markers are stored for the user: with tokens, where a name is
    // an identity (docs/security.md). On a single node in the history store; on a node of a
    // cluster in Redis, through the cluster_link.
    bool keeps_identities() const;
    // keeps_identities() on a node of a cluster: the user's state is the cluster's, not this node's.
    cluster_link* identities_in_cluster() const;
    // The rooms and direct conversations the user has a marker in, from this node's store.
    std::vector<marked_log> marked_logs_here() const;
    // welcome's `conversations` from those logs: the ones the user may still see, newest
    // activity first, at most history.welcome_conversations.
    std::vector<protocol::conversation_summary> summarize(std::vector<marked_log> logs) const;
    // The reply to `read` (the marker as it stands) and, when it moved, the same to the user's
    // other sessions here.
    void answer_read(bool is_room, std::string_view name, std::int64_t seq, bool moved, std::string_view re);
    // `read` on a node of a cluster: the marker is saved in Redis, and answered when it is.
    void read_in_cluster(cluster_link& cluster, bool is_room, std::string key, std::string name, std::int64_t seq,
                         std::string re);
    // The limit of a history or dm_history request; fails req with bad_request when out of range.
    std::optional<std::size_t> page_limit(const request& req);

    // What a login may hold: without tokens one session and every room; with a token, the
    // configured sessions per user and the rooms the token names (all when it names none).
    struct login_rights {
        std::size_t max_sessions = 1;
        std::optional<room_grant> grant;  // the token's rooms and roles, when it has either
    };
    // The token check of a login when the settings ask for tokens; a token that does not prove
    // req.user refuses the login (refuse_login) and gives nullopt.
    std::optional<login_rights> check_token(const request& req);
    // Takes req.user in this node's registry; fails the request (false) when it is held.
    bool register_name(const request& req, std::size_t max_sessions);
    // Asks the cluster for the name (user_) on behalf of a login; finish_login runs when it answers.
    void claim_in_cluster(cluster_link& cluster, std::string re, std::optional<room_grant> grant);
    // The end of a login that waited for the cluster to grant the name.
    void finish_login(cluster_link::claim_outcome outcome, std::string re,
                      std::optional<room_grant> grant);
    // Logged in: `welcome`, with `conversations` when logs are given (token mode; on a node of a
    // cluster, unless Redis could not say), then the motd.
    void welcome(std::string_view re, const std::optional<std::vector<marked_log>>& logs);
    // Gives the name up in this node's registry and, when no session here holds it any more, in
    // the cluster.
    void release_name(const std::string& user);
    bool take_token();
    // A login that could not prove its name: `unauthorized`, then close (1008).
    void refuse_login(std::string_view why, std::string_view re);
    std::vector<membership>::iterator find_room(std::string_view name);
    // The membership req.room names; when there is none, fails req with not_in_room and gives end.
    std::vector<membership>::iterator room_of(const request& req);
    bool check_text(const request& req);
    // Fails a say that room refused (muted, slow mode); false when it was not refused.
    bool refused_say(room::say_refusal refusal, const std::string& room_name, std::string_view re);
    void leave_room(std::vector<membership>::iterator it, bool disconnected);
    void send(const protocol::shared_frame& frame) { output_.send(frame); }
    void fail(protocol::error_code code, std::string_view message, std::string_view re);

    worker_context& worker_;
    session_output& output_;
    registry::session_handle handle_;
    std::string user_;
    std::vector<membership> rooms_;
    // Token bucket of requests (rate, burst from the settings), kept small: every connection
    // has one.
    static std::uint64_t steady_micros();
    std::uint64_t refilled_us_;
    float tokens_;
    // Bit fields, so that the counter and the flags share one word (every session pays for its
    // size). The counter needs no more than the largest allowed strike limit (10^6).
    std::uint32_t rejected_in_a_row_ : 24 = 0;
    std::uint32_t ended_ : 1 = 0;
    // A login waits for the cluster (to grant the name, then, in token mode, for the user's
    // conversations); user_ holds the name meanwhile.
    std::uint32_t claiming_ : 1 = 0;
    std::uint32_t markers_attached_ : 1 = 0;  // user_'s read markers are held for this session
    std::uint32_t welcomed_ : 1 = 0;  // the login completed: its end is reported (user_disconnected)
    // While a join waits for the cluster to feed its room (open_then_join), the requests that
    // come meanwhile are kept, at most max_held of them (more is a client that does not wait for
    // answers: refused as rate_limited).
    // Set (an empty list at first) exactly while a join waits; behind a pointer, since every
    // session pays for what it holds.
    std::unique_ptr<std::vector<std::string>> held_;
    static constexpr std::size_t max_held = 64;
};

}  // namespace parley::rooms
