#pragma once

#include <string_view>

// The Lua scripts of presence per room (cluster_node_presence.cpp): a room's members hash and
// version, its partition's rooms index, and the reads behind `joined` and `rooms`. Part of the
// scripts the transport loads (cluster_scripts.hpp, `all`).
namespace parley::cluster::scripts {

// ---- presence: who is in a room, kept in the room's partition and told on its channel ----
// A room's members hash maps each member to the node that holds it, and its field "\n" (no
// name holds a newline) to the room's membership version, which every change moves on by one
// and never back. Each change is published on the room's channel as "J", "L" or "D" (left
// because the connection ended), then the node, the room, the user, the version and the
// presence JSON (empty: the reader makes it), one per line, so the nodes that feed the room see
// it in order with the room's messages. A partition's rooms index maps each room with members to
// their number (the cluster-wide room list).

// KEYS: the room's members hash, its partition's rooms index. ARGV: 'J', 'L' or 'D', user,
// node, room, room's channel, presence JSON. A join from node N makes the user N's member (moved
// from another node that still held it); a leave counts only from the node that holds it.
// Returns the new version, 0 when nothing changed.
inline constexpr std::string_view presence = R"lua(
local holder = redis.call('HGET', KEYS[1], ARGV[2])
if ARGV[1] == 'J' then
  if holder == ARGV[3] then return 0 end
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
  if not holder then redis.call('HINCRBY', KEYS[2], ARGV[4], 1) end
else
  if holder ~= ARGV[3] then return 0 end
  redis.call('HDEL', KEYS[1], ARGV[2])
  if redis.call('HINCRBY', KEYS[2], ARGV[4], -1) <= 0 then redis.call('HDEL', KEYS[2], ARGV[4]) end
end
local v = redis.call('HINCRBY', KEYS[1], '\n', 1)
redis.call('SPUBLISH', ARGV[5], ARGV[1] .. '\n' .. ARGV[3] .. '\n' .. ARGV[4] .. '\n' .. ARGV[2] .. '\n' .. string.format('%d', v) .. '\n' .. ARGV[6])
return v
)lua";

// KEYS: the room's members hash, its partition's rooms index. ARGV: node, room, room's channel,
// then the users node holds in the room now (empty after the node is gone). Makes the hash agree:
// node's members not listed leave ("D", disconnected), listed users it lacks join. Each change
// is published once, however many nodes run this for the same dead node. Returns the version.
inline constexpr std::string_view room_members_of = R"lua(
local keep = {}
for i = 4, #ARGV do keep[ARGV[i]] = true end
local fields = redis.call('HGETALL', KEYS[1])
local v = tonumber(redis.call('HGET', KEYS[1], '\n') or '0')
local function told(kind, user)
  v = redis.call('HINCRBY', KEYS[1], '\n', 1)
  redis.call('SPUBLISH', ARGV[3], kind .. '\n' .. ARGV[1] .. '\n' .. ARGV[2] .. '\n' .. user .. '\n' .. string.format('%d', v) .. '\n')
end
for i = 1, #fields, 2 do
  local user, node = fields[i], fields[i + 1]
  if user ~= '\n' then
    if node == ARGV[1] and not keep[user] then
      redis.call('HDEL', KEYS[1], user)
      if redis.call('HINCRBY', KEYS[2], ARGV[2], -1) <= 0 then redis.call('HDEL', KEYS[2], ARGV[2]) end
      told('D', user)
    elseif keep[user] then
      if node ~= ARGV[1] then
        redis.call('HSET', KEYS[1], user, ARGV[1])
        told('J', user)
      end
      keep[user] = nil
    end
  end
end
for i = 4, #ARGV do
  if keep[ARGV[i]] then
    keep[ARGV[i]] = nil
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[1])
    redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
    told('J', ARGV[i])
  end
end
return v
)lua";

// KEYS: a room's seq counter, its members hash. Returns {last seq, membership version, {user,
// node, ...}} (0 for a counter not made yet).
inline constexpr std::string_view room_state = R"lua(
local fields = redis.call('HGETALL', KEYS[2])
local members = {}
local v = '0'
for i = 1, #fields, 2 do
  if fields[i] == '\n' then v = fields[i + 1] else
    members[#members + 1] = fields[i]
    members[#members + 1] = fields[i + 1]
  end
end
return {redis.call('GET', KEYS[1]) or '0', v, members}
)lua";

// KEYS: partitions' rooms indexes (one server's, or one slot's). Returns per room with members
// in them: its name, its member count and its topic ('' for none).
inline constexpr std::string_view rooms_index = R"lua(
local out = {}
for _, index in ipairs(KEYS) do
  local prefix = string.sub(index, 1, #index - 5)
  local rows = redis.call('HGETALL', index)
  for i = 1, #rows, 2 do
    out[#out + 1] = rows[i]
    out[#out + 1] = rows[i + 1]
    out[#out + 1] = redis.call('HGET', prefix .. 'room:' .. rows[i] .. ':settings', 'topic\n') or ''
  end
end
return out
)lua";

}  // namespace parley::cluster::scripts
