#pragma once

#include "server/admin_api.hpp"

#include <nlohmann/json_fwd.hpp>

namespace parley::server {

// POST /admin/moderate (admin_api.hpp): a room's moderation as the administrator, with the
// fields of the protocol's requests:
//   {"room", "action": "kick" | "ban" | "unban" | "mute" | "unmute" | "set_role" | "set_topic" |
//    "set_slow_mode", "user"?, "reason"?, "duration_s"?, "role"?, "text"?, "interval_s"?}
// Answers {"room", "action", "seq"?} once done; 400 for a field missing or out of range, 403 for
// roles, bans and mutes without auth.mode = "token", 404 for a kick or unban/unmute of someone not
// in the room or not banned or muted, 409 when the room would lose its last owner or holds too
// many settings. Every action done is logged as one audit line, "admin audit: {json}", with the
// request's fields.
// room_fed: see handle_admin.
admin_reply moderate_from_admin(const nlohmann::json& body, rooms::chat_hub& hub, bool room_fed = false);

}  // namespace parley::server
