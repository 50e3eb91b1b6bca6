#pragma once

#include "config/settings.hpp"

#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>

#include <string>
#include <string_view>

namespace parley::rooms {
class chat_hub;
}

namespace parley::server {

// The admin API under /admin/, on the daemon's own port, for operators and their scripts.
// Every request must carry "Authorization: Bearer <admin.token>" (compared in constant time);
// with admin.token empty the API is off and answers 404. Bodies and answers are JSON.
//
//   GET  /admin/users       {"users": [{"name", "connections"}]}
//   GET  /admin/rooms       {"rooms": [{"name", "members"}]}
//   POST /admin/kick        {"user", "reason"?}  every connection of the user is closed with 4000
//   POST /admin/announce    {"text", "room"?}    a system line to everyone, or to one room
//   POST /admin/close_room  {"room", "reason"?}  every member leaves the room
//   POST /admin/moderate    {"room", "action", ...}  ban, mute, roles, topic... (admin_moderation.hpp)
//
// Errors: 401 (no or wrong token), 404 (unknown path, user not online, no such room), 405 (wrong
// method, with Allow), 400 (body not a JSON object, a field missing or invalid), each with
// {"error": "what is wrong"}.
struct admin_reply {
    boost::beast::http::status status = boost::beast::http::status::ok;
    std::string body;         // JSON
    std::string_view allow;   // for 405: the method the path takes
    bool challenge = false;   // for 401: send WWW-Authenticate
    // In a cluster: a room this node must feed (cluster_link::open_room) before the request can
    // be answered from what it holds; the caller has the cluster feed it, then asks again with
    // room_fed set. Empty otherwise.
    std::string wait_for_room;
};

// path: the request path, starting with "/admin". room_fed: asked again after the cluster fed
// the room that admin_reply::wait_for_room named (then it is not waited for again).
admin_reply handle_admin(boost::beast::http::verb method, std::string_view path, std::string_view authorization,
                         std::string_view body, rooms::chat_hub& hub, const config::settings& settings,
                         bool room_fed = false);

}  // namespace parley::server
