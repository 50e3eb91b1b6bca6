#pragma once

#include <array>
#include <string_view>

// The Lua scripts the cluster runs in Redis. Each runs atomically: what it checks, writes and
// publishes happens with nothing of another node's in between, so a name is given once and a
// room's seqs reach the channel in the order they were assigned. Loaded (SCRIPT LOAD) on every
// connect by the transport (see `all` below) and called by their SHA.
// Keys are named as in cluster_keys.hpp; scripts that walk the node list build key names
// themselves, so the cluster needs one Redis server (not Redis Cluster's sharding).
namespace parley::cluster::scripts {

// KEYS: name lease, this node's users hash. ARGV: node, ttl ms, user, channel, login event.
// 1 when the name is this node's now, 0 when another node holds it.
inline constexpr std::string_view claim_name = R"lua(
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if redis.call('HSET', KEYS[2], ARGV[3], '1') == 1 then redis.call('PUBLISH', ARGV[4], ARGV[5]) end
return 1
)lua";

// KEYS: name lease, this node's users hash. ARGV: node, user, channel, logout event.
inline constexpr std::string_view release_name = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
if redis.call('HDEL', KEYS[2], ARGV[2]) == 1 then redis.call('PUBLISH', ARGV[3], ARGV[4]) end
return 1
)lua";

// KEYS: name leases held by this node. ARGV: node, ttl ms. Renews each; returns the (1-based)
// positions of those another node holds now (this node lost them, e.g. after an outage).
inline constexpr std::string_view renew_names = R"lua(
local lost = {}
for i, key in ipairs(KEYS) do
  local holder = redis.call('GET', key)
  if holder == ARGV[1] then redis.call('PEXPIRE', key, ARGV[2])
  elseif not holder then redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
  else table.insert(lost, i) end
end
return lost
)lua";

// ARGV: node, ttl ms, channel. This node is alive for another ttl; nodes whose lease ran out are
// removed, with their users and rooms, and announced gone (once: only the remover publishes).
inline constexpr std::string_view heartbeat = R"lua(
local prefix = 'parley:node:'
redis.call('SET', prefix .. ARGV[1], '1', 'PX', ARGV[2])
redis.call('SADD', 'parley:nodes', ARGV[1])
for _, id in ipairs(redis.call('SMEMBERS', 'parley:nodes')) do
  if redis.call('EXISTS', prefix .. id) == 0 then
    redis.call('SREM', 'parley:nodes', id)
    redis.call('DEL', prefix .. id .. ':users', prefix .. id .. ':rooms')
    redis.call('PUBLISH', ARGV[3], 'X\n' .. id .. '\n\n\n')
  end
end
return 1
)lua";

// KEYS: the room's seq counter, its stream; for an event also its settings hash and its revised
// set (cluster_keys.hpp). ARGV: channel, event head, ts, ack ticket, JSON before the seq, JSON
// after it, stream length, room, the node, the node's run, the say's number in that run, and "1"
// when the say is sent again after its answer was lost. An event (cluster_link::submit_event)
// adds: N, then N pairs "KIND\nSUBJECT", value (empty: removed) for the settings hash; a guard
// (0 none; a seq: refused with target_gone when that message was deleted; -1: stored only into a
// room that has no seq yet; "if:VALUE": stored only while the first setting's field holds
// VALUE; 0 is returned when a guard drops it); R, then R triples seq, ts, JSON of stored
// messages it rewrites: their stream entries are deleted and the set holds the new ones. Numbers
// the message, stores it (and the rest) and publishes it, in that order, and returns its seq. A
// say sent again is looked for among the room's newest entries first, and not stored twice (0 is
// returned then).
inline constexpr std::string_view target_gone = "PARLEY_GONE";
inline constexpr std::string_view say = R"lua(
local said = ARGV[9] .. ':' .. ARGV[10] .. ':' .. ARGV[11]
if ARGV[12] == '1' then
  for _, entry in ipairs(redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1000)) do
    local fields = entry[2]
    for i = 1, #fields, 2 do
      if fields[i] == 'n' and fields[i + 1] == said then return 0 end
    end
  end
end
local settings = tonumber(ARGV[13] or '0')
local guard_at = 14 + 2 * settings
local guard_arg = ARGV[guard_at] or '0'
local guard = tonumber(guard_arg) or 0
if string.sub(guard_arg, 1, 3) == 'if:' then
  if redis.call('HGET', KEYS[3], ARGV[14]) ~= string.sub(guard_arg, 4) then return 0 end
end
if guard == -1 and redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if guard > 0 then
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], guard, guard)) do
    if string.find(member, '"deleted":true', 1, true) then
      return redis.error_reply('PARLEY_GONE message ' .. guard .. ' was deleted')
    end
  end
end
local seq = redis.call('INCR', KEYS[1])
local json = ARGV[5] .. seq .. ARGV[6]
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[7], seq .. '-1', 'j', json, 't', ARGV[3], 'a', ARGV[4], 'n', said)
if seq == 1 then redis.call('SADD', 'parley:rooms', ARGV[8]) end
for i = 0, settings - 1 do
  local field, value = ARGV[14 + 2 * i], ARGV[15 + 2 * i]
  if value == '' then redis.call('HDEL', KEYS[3], field) else redis.call('HSET', KEYS[3], field, value) end
end
local revisions = tonumber(ARGV[guard_at + 1] or '0')
for i = 0, revisions - 1 do
  local at = guard_at + 2 + 3 * i
  redis.call('XDEL', KEYS[2], ARGV[at] .. '-1')
  redis.call('ZREMRANGEBYSCORE', KEYS[4], ARGV[at], ARGV[at])
  redis.call('ZADD', KEYS[4], ARGV[at], ARGV[at + 1] .. '\n' .. ARGV[at + 2])
end
if revisions > 0 then
  -- what the stream's retention dropped has no use for its revisions (trimmed loosely, as the stream)
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. (seq - 2 * tonumber(ARGV[7])))
end
redis.call('PUBLISH', ARGV[1], ARGV[2] .. seq .. '\n' .. ARGV[3] .. '\n' .. ARGV[4] .. '\n' .. json)
return seq
)lua";

// KEYS: a room's stream, its revised set. ARGV: the lowest seq, the highest ('' for the newest),
// at most how many, and "1" for newest first. The stream's entries in that range with the
// revised messages merged in at their seqs, in the stream's reply form (XRANGE, or XREVRANGE).
inline constexpr std::string_view read_log = R"lua(
local low, count, newest = tonumber(ARGV[1]), tonumber(ARGV[3]), ARGV[4] == '1'
local high_id = ARGV[2] == '' and '+' or (ARGV[2] .. '-1')
local entries
if newest then
  entries = redis.call('XREVRANGE', KEYS[1], high_id, low .. '-1', 'COUNT', count)
else
  entries = redis.call('XRANGE', KEYS[1], low .. '-1', high_id, 'COUNT', count)
end
if redis.call('EXISTS', KEYS[2]) == 0 then return entries end
local high = ARGV[2] == '' and '+inf' or ARGV[2]
local revised
if newest then
  revised = redis.call('ZREVRANGEBYSCORE', KEYS[2], high, low, 'WITHSCORES', 'LIMIT', 0, count)
else
  revised = redis.call('ZRANGEBYSCORE', KEYS[2], low, high, 'WITHSCORES', 'LIMIT', 0, count)
end
local out, i, j = {}, 1, 1
while #out < count and (i <= #entries or j <= #revised) do
  local from_set = i > #entries
  if not from_set and j <= #revised then
    local a = tonumber(string.match(entries[i][1], '^(%d+)'))
    local b = tonumber(revised[j + 1])
    if a == b then
      i = i + 1
      from_set = true
    elseif newest then
      from_set = b > a
    else
      from_set = b < a
    end
  end
  if from_set then
    local member = revised[j]
    local cut = string.find(member, '\n', 1, true)
    out[#out + 1] = {revised[j + 1] .. '-1', {'j', string.sub(member, cut + 1), 't', string.sub(member, 1, cut - 1)}}
    j = j + 2
  else
    out[#out + 1] = entries[i]
    i = i + 1
  end
end
return out
)lua";

// KEYS: this node's rooms hash. ARGV: '+' or '-', field "ROOM\nUSER", channel, event.
inline constexpr std::string_view membership = R"lua(
if ARGV[1] == '+' then redis.call('HSET', KEYS[1], ARGV[2], '1') else redis.call('HDEL', KEYS[1], ARGV[2]) end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
)lua";

// ARGV: node, ttl ms, channel, node_state event, user count U, then U users, then "ROOM\nUSER"
// fields. Replaces what the cluster knows of this node (after an outage its users and rooms may
// have changed) and tells the others to read it again.
inline constexpr std::string_view register_node = R"lua(
local prefix = 'parley:node:' .. ARGV[1]
redis.call('DEL', prefix .. ':users', prefix .. ':rooms')
local users = tonumber(ARGV[5])
for i = 6, 5 + users do redis.call('HSET', prefix .. ':users', ARGV[i], '1') end
for i = 6 + users, #ARGV do redis.call('HSET', prefix .. ':rooms', ARGV[i], '1') end
redis.call('SET', prefix, '1', 'PX', ARGV[2])
redis.call('SADD', 'parley:nodes', ARGV[1])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
)lua";

// ARGV: node, epoch to use when the cluster has none, channel, marker event. Returns
// {epoch, {node, users, room fields, ...}, {room, last seq, ...}} for the other live nodes and
// every room with history, then publishes the marker: events before it on the channel are in
// this answer, events after it are not.
inline constexpr std::string_view snapshot = R"lua(
local epoch = redis.call('GET', 'parley:epoch')
if not epoch then
  redis.call('SET', 'parley:epoch', ARGV[2])
  epoch = ARGV[2]
end
local nodes = {}
for _, id in ipairs(redis.call('SMEMBERS', 'parley:nodes')) do
  if id ~= ARGV[1] and redis.call('EXISTS', 'parley:node:' .. id) == 1 then
    table.insert(nodes, id)
    table.insert(nodes, redis.call('HKEYS', 'parley:node:' .. id .. ':users'))
    table.insert(nodes, redis.call('HKEYS', 'parley:node:' .. id .. ':rooms'))
  end
end
local rooms = {}
for _, r in ipairs(redis.call('SMEMBERS', 'parley:rooms')) do
  table.insert(rooms, r)
  table.insert(rooms, redis.call('GET', 'parley:room:' .. r .. ':seq') or '0')
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return {epoch, nodes, rooms}
)lua";

// KEYS: the name leases this node holds. ARGV: node, channel, node_gone event. The node leaves
// at a shutdown: its names are free and the others drop its users at once.
inline constexpr std::string_view depart = R"lua(
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('DEL', key) end
end
local prefix = 'parley:node:' .. ARGV[1]
redis.call('DEL', prefix, prefix .. ':users', prefix .. ':rooms')
redis.call('SREM', 'parley:nodes', ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
)lua";

// ---- state kept for identities (token mode): stored direct conversations, read markers ----

// KEYS: the conversation's seq counter, its stream, the sender's markers hash, the recipient's.
// ARGV: channel, event head (its sender line included), ts, JSON before the seq, JSON after it,
// stream length, the conversation's key (the markers' field), "NODE:RUN:NUMBER" of the dm, and
// "1" when it is sent again after its answer was lost. Numbers the dm, stores it, makes the
// conversation one of both users' (the sender's marker moves to it, the recipient's starts at
// 0) and publishes it; returns its seq. A dm sent again that is among the conversation's newest
// entries already is neither stored nor published twice: its seq is returned.
inline constexpr std::string_view dm = R"lua(
if ARGV[9] == '1' then
  for _, entry in ipairs(redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1000)) do
    local fields = entry[2]
    for i = 1, #fields, 2 do
      if fields[i] == 'n' and fields[i + 1] == ARGV[8] then return tonumber(string.match(entry[1], '^%d+')) end
    end
  end
end
local seq = redis.call('INCR', KEYS[1])
local json = ARGV[4] .. seq .. ARGV[5]
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], seq .. '-1', 'j', json, 't', ARGV[3], 'n', ARGV[8])
local mine = tonumber(redis.call('HGET', KEYS[3], ARGV[7]) or '0')
if seq > mine then redis.call('HSET', KEYS[3], ARGV[7], seq) end
redis.call('HSETNX', KEYS[4], ARGV[7], 0)
redis.call('PUBLISH', ARGV[1], ARGV[2] .. json)
return seq
)lua";

// KEYS: the user's markers hash, the log's seq counter (a room's or a conversation's). ARGV: the
// field (room name or conversation key), the seq read, "1" for a conversation. The marker only
// moves forward and never past the log's last seq. Returns {marker, 1 when it moved else 0},
// or {-1, 0} for a conversation that does not exist.
inline constexpr std::string_view read_marker = R"lua(
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if ARGV[3] == '1' and last == 0 then return {-1, 0} end
local seq = math.min(tonumber(ARGV[2]), last)
local mark = redis.call('HGET', KEYS[1], ARGV[1])
if mark and tonumber(mark) >= seq then return {tonumber(mark), 0} end
redis.call('HSET', KEYS[1], ARGV[1], seq)
return {seq, 1}
)lua";

// KEYS: the user's markers hash. Returns {field, marker, last seq, last ts, ...}: each log the
// user has a marker in, with its last seq (its counter) and the time of its newest stored
// message (0 when the stream holds none). Builds the logs' key names itself (cluster_keys.hpp):
// a field starting "dm:" is a conversation, any other a room.
inline constexpr std::string_view conversations = R"lua(
local out = {}
local markers = redis.call('HGETALL', KEYS[1])
for i = 1, #markers, 2 do
  local field = markers[i]
  local base = 'parley:room:' .. field
  if string.sub(field, 1, 3) == 'dm:' then base = 'parley:' .. field end
  local ts = '0'
  local newest = redis.call('XREVRANGE', base .. ':log', '+', '-', 'COUNT', 1)
  if newest[1] then
    local fields = newest[1][2]
    for j = 1, #fields, 2 do
      if fields[j] == 't' then ts = fields[j + 1] end
    end
  end
  table.insert(out, field)
  table.insert(out, markers[i + 1])
  table.insert(out, redis.call('GET', base .. ':seq') or '0')
  table.insert(out, ts)
end
return out
)lua";

// Every script above: the transport loads them all (SCRIPT LOAD) on every connect, before the
// node hears that Redis is up, so calls by SHA never meet a Redis that lacks one.
inline constexpr std::array<std::string_view, 13> all = {claim_name, release_name, renew_names,  heartbeat, say,
                                                         membership, register_node, snapshot,   depart,    dm,
                                                         read_marker, conversations, read_log};

}  // namespace parley::cluster::scripts
