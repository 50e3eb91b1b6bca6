#pragma once

// What the chat must answer to one request, checked on the frames the session was sent while it
// handled the request (everything in reply is sent before chat_session::on_text returns; only
// broadcasts from other sessions and dms from others arrive later, through tasks).

#include "config/settings.hpp"

#include <nlohmann/json.hpp>

#include <string_view>
#include <vector>

namespace parley::fuzz {

// text: the message as the client sent it. user: the session's name once the request was handled
// (empty when not logged in). replies: what the session was sent meanwhile, as JSON.
//
// A request that does not parse gets exactly one error, with the parser's code and the id when
// it was readable. Otherwise there is either one error and nothing else, or the request's own
// answer (welcome, joined, left, an ack for a say with an id, the dm's echo, users, rooms,
// history; typing has none) with only what may come with it (the motd after welcome, the sender's
// copy of its message, an ack for a dm with an id). Every "re" is the request's id; the answer
// carries it. The answers agree with the request: names, room, text, seq order, limits, before
// and after.
void check_replies(std::string_view text, std::string_view user, const std::vector<nlohmann::json>& replies,
                   const config::settings& settings);

}  // namespace parley::fuzz
