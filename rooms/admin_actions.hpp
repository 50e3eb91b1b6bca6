#pragma once

#include "protocol/close_code.hpp"
#include "rooms/room.hpp"

#include <memory>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::rooms {

class chat_hub;

// What an operator may do to the running chat (the admin API calls these). Each reaches the
// sessions through tasks posted to the workers that own them, as a dm does, so no lock is held
// across sessions and the caller may be on any thread. Effects land shortly after the call
// returns, in each worker's order.

struct user_summary {
    std::string name;
    std::size_t connections = 0;
};

// Online users, sorted, with how many connections each holds.
std::vector<user_summary> list_users(chat_hub& hub);

// Closes every connection of user on this node with code and reason (an administrator's kick:
// 4000 and the reason given), each connection first getting `notice` as a system line when it is
// not empty. Returns how many were asked to close (0: the user is not online here).
std::size_t kick_user(chat_hub& hub, std::string_view user, std::string_view reason,
                      protocol::close_code code = protocol::close_code::kicked, std::string_view notice = {});

// A `system` line to every logged-in connection.
void announce_to_all(chat_hub& hub, std::string_view text);

// A `system` line to the members of room; false when no such room exists.
bool announce_to_room(chat_hub& hub, std::string_view room, std::string_view text);

// Every session of user on this node leaves room r, each on its own worker, getting `left` and
// notice as a system line (a kick or a ban).
void remove_from_room(chat_hub& hub, const std::shared_ptr<room>& r, std::string_view user, std::string notice);

// A moderation action as the administrator: no role is needed (request.as_admin is set here, and
// request.actor names the administrator in the event). The room is made when it does not exist
// (a ban or a topic may come before anyone joins) and closes again if nobody is in it. A kicked
// or banned user's sessions leave the room.
// needs_feed: in a cluster, a room this node does not feed is not acted on (not_fed): what it
// holds may be stale; the caller has the cluster feed it (cluster_link::open_room) first.
room::moderation_outcome moderate_as_admin(chat_hub& hub, std::string_view room_name,
                                           room::moderation_request request, bool needs_feed = false);

// Deletes message seq of room as the administrator (room::change_message); gone when no such
// room exists.
// needs_feed as for moderate_as_admin.
room::change_outcome delete_as_admin(chat_hub& hub, std::string_view room_name, std::int64_t seq,
                                     bool needs_feed = false);

// Every member leaves room (each gets `left` and a system line with the reason); a room not
// declared in the configuration then disappears. Returns the members it had, or nullopt when no
// such room exists.
std::optional<std::size_t> close_room(chat_hub& hub, std::string_view room, std::string_view reason);

}  // namespace parley::rooms
