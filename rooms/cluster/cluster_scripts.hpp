#pragma once

#include "rooms/cluster/conversation_scripts.hpp"
#include "rooms/cluster/presence_scripts.hpp"

#include <array>
#include <cstddef>
#include <string_view>

// The Lua scripts the cluster runs in Redis. Each runs atomically: what it checks, writes and
// publishes happens with nothing of another node's in between, so a name is given once and a
// room's seqs reach the channel in the order they were assigned. Loaded (SCRIPT LOAD) on every
// connect by the transport (see `all` below) and called by their SHA.
// Keys are named as in cluster_keys.hpp; scripts that walk the node list build key names
// themselves, all under the tag {cluster} (one slot). A script that has to name a partitioned
// key itself computes its partition as partition_of does (see migrate_layout's tag()).
namespace parley::cluster::scripts {

// ---- names: a lease per name in the user's partition, and the partition's users index ----

// KEYS: name lease, this node's users hash, the partition's users index. ARGV: node, ttl ms,
// user. 1 when the name is this node's now, 0 when another node holds it.
inline constexpr std::string_view claim_name = R"lua(
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], '1')
redis.call('HSET', KEYS[3], ARGV[3], ARGV[1])
return 1
)lua";

// KEYS: name lease, this node's users hash, the partition's users index. ARGV: node, user.
inline constexpr std::string_view release_name = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
if redis.call('HGET', KEYS[3], ARGV[2]) == ARGV[1] then redis.call('HDEL', KEYS[3], ARGV[2]) end
redis.call('HDEL', KEYS[2], ARGV[2])
return 1
)lua";

// Where a name's lease and this node's users hash live in different slots (Redis Cluster), the
// two scripts above go in two steps: the lease (claim_lease, release_leases), then the users hash
// (node_user).
// KEYS: name lease, the partition's users index. ARGV: node, ttl ms, user. 1 when the name is this
// node's now, 0 when another holds it.
inline constexpr std::string_view claim_lease = R"lua(
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[1])
return 1
)lua";

// KEYS: pairs of a name lease and its partition's users index. ARGV: node, then the names.
// Frees those this node holds.
inline constexpr std::string_view release_leases = R"lua(
for i = 1, #KEYS, 2 do
  local user = ARGV[(i + 1) / 2 + 1]
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('DEL', KEYS[i]) end
  if redis.call('HGET', KEYS[i + 1], user) == ARGV[1] then redis.call('HDEL', KEYS[i + 1], user) end
end
return 1
)lua";

// KEYS: this node's users hash. ARGV: '+' or '-', user.
inline constexpr std::string_view node_user = R"lua(
if ARGV[1] == '+' then return redis.call('HSET', KEYS[1], ARGV[2], '1') end
return redis.call('HDEL', KEYS[1], ARGV[2])
)lua";

// KEYS: partitions' users indexes (one server's, or one slot's). Returns {user, node, ...} for
// the names whose lease still names the node; entries whose lease ran out or moved are dropped.
inline constexpr std::string_view users_index = R"lua(
local out = {}
for _, index in ipairs(KEYS) do
  local prefix = string.sub(index, 1, #index - 5)
  local rows = redis.call('HGETALL', index)
  for i = 1, #rows, 2 do
    if redis.call('GET', prefix .. 'name:' .. rows[i]) == rows[i + 1] then
      out[#out + 1] = rows[i]
      out[#out + 1] = rows[i + 1]
    else
      redis.call('HDEL', index, rows[i])
    end
  end
end
return out
)lua";

// KEYS: pairs of a name lease held by this node and its partition's users index. ARGV: node, ttl
// ms, then the names. Renews each (a lease that ran out is taken again, and the name listed
// again); returns the (1-based) positions of the names another node holds now (this node lost
// them, e.g. after an outage).
inline constexpr std::string_view renew_names = R"lua(
local lost = {}
for i = 1, #KEYS, 2 do
  local n = (i + 1) / 2
  local holder = redis.call('GET', KEYS[i])
  if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[i], ARGV[2])
  elseif not holder then
    redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
    redis.call('HSET', KEYS[i + 1], ARGV[n + 2], ARGV[1])
  else table.insert(lost, n) end
end
return lost
)lua";

// ARGV: node, ttl ms, channel. This node is alive for another ttl; nodes whose lease ran out are
// removed, with their users and rooms, and announced gone (once: only the remover publishes).
// Returns {node, {room, ...}, ...}: the nodes removed and the rooms they had members in, which
// the remover clears (room_members_of) so that each member leaves each room once.
inline constexpr std::string_view heartbeat = R"lua(
local prefix = 'parley:{cluster}:node:'
redis.call('SET', prefix .. ARGV[1], '1', 'PX', ARGV[2])
redis.call('SADD', 'parley:{cluster}:nodes', ARGV[1])
local gone = {}
for _, id in ipairs(redis.call('SMEMBERS', 'parley:{cluster}:nodes')) do
  if redis.call('EXISTS', prefix .. id) == 0 then
    redis.call('SREM', 'parley:{cluster}:nodes', id)
    local rooms, seen = {}, {}
    for _, field in ipairs(redis.call('HKEYS', prefix .. id .. ':rooms')) do
      local room = string.match(field, '^([^\n]*)\n')
      if room and not seen[room] then
        seen[room] = true
        rooms[#rooms + 1] = room
      end
    end
    gone[#gone + 1] = id
    gone[#gone + 1] = rooms
    redis.call('DEL', prefix .. id .. ':users', prefix .. id .. ':rooms')
    redis.call('PUBLISH', ARGV[3], 'X\n' .. id .. '\n\n\n')
  end
end
return gone
)lua";

// Numbers, stores and publishes a batch of messages (says and room events): every message a
// node sends in one pass of its loop, in order.
// KEYS: four per message: its room's seq counter, stream, settings hash and revised set
// (cluster_keys.hpp).
// ARGV: stream length, the node, the node's run, the message count N; then per message a
// block: event head, ts, ack ticket, JSON before the seq, JSON after it, its room's channel, the message's
// number in the node's run, "1" when it is sent again after its answer was lost, and an event's
// further arguments (cluster_link::submit_event; a say gives 0, 0, 0): S, then S pairs
// "KIND\nSUBJECT", value (empty: removed) for the settings hash; a guard (0 none; a seq: refused
// when that message was deleted; -1: stored only into a room that has no seq yet; "if:VALUE":
// stored only while the first setting's field holds VALUE); R, then R triples seq, ts, JSON of
// stored messages it rewrites: their stream entries are deleted and the set holds the new ones.
// Each message is numbered, stored (with the rest) and published on its room's channel; a
// message sent again is looked for among the room's newest entries first and not stored twice.
// (This script takes events and says sent again, which are few; plain says go through `says`.)
// Returns per message: its seq; 0 when not stored (already stored, or a guard dropped it); -1
// when its target was deleted (an edit or delete of a message deleted meanwhile).
inline constexpr std::string_view say = R"lua(
local out = {}
local at = 5
for m = 1, tonumber(ARGV[4]) do
  local k = (m - 1) * 4
  local seq_key, log_key, settings_key, revised_key = KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4]
  local head, ts, ack, before, after = ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3], ARGV[at + 4]
  local channel, number, resend = ARGV[at + 5], ARGV[at + 6], ARGV[at + 7]
  local settings = tonumber(ARGV[at + 8])
  local settings_at = at + 9
  local guard_arg = ARGV[settings_at + 2 * settings]
  local revisions = tonumber(ARGV[settings_at + 2 * settings + 1])
  local revisions_at = settings_at + 2 * settings + 2
  at = revisions_at + 3 * revisions
  local said = ARGV[2] .. ':' .. ARGV[3] .. ':' .. number
  local result = nil
  if resend == '1' then
    -- stored already, by this script (n), by a batch of says (c: this node's run on its first
    -- line, then the number first of each say's five lines, less the first line's NUMBER0 when
    -- it has one) or by an earlier version's batch (x and b hold NODE:RUN:NUMBER on its own line)?
    local line = '\n' .. said .. '\n'
    local run = ARGV[2] .. ':' .. ARGV[3]
    local wanted = tonumber(number)
    for _, entry in ipairs(redis.call('XREVRANGE', log_key, '+', '-', 'COUNT', 1000)) do
      local fields = entry[2]
      for i = 1, #fields, 2 do
        local value = fields[i + 1]
        if (fields[i] == 'n' and value == said) or
           ((fields[i] == 'x' or fields[i] == 'b') and string.find(value, line, 1, true)) then
          result = 0
        end
        local after_run = string.sub(value, #run + 1, #run + 1)
        if fields[i] == 'c' and string.sub(value, 1, #run) == run and (after_run == '\n' or after_run == ':') then
          local at = (string.find(value, '\n', 1, true) or #value) + 1
          local number0 = tonumber(string.match(value, '^[^\n]*:(%d+):%d+\n')) or 0
          while not result and at <= #value do
            local stop = string.find(value, '\n', at, true) or (#value + 1)
            local offset = tonumber(string.sub(value, at, stop - 1))
            if offset and offset + number0 == wanted then result = 0 end
            for _ = 1, 4 do stop = string.find(value, '\n', stop + 1, true) or (#value + 1) end
            at = stop + 1
          end
        end
      end
    end
  end
  if not result then
    local guard = tonumber(guard_arg) or 0
    if string.sub(guard_arg, 1, 3) == 'if:' then
      if redis.call('HGET', settings_key, ARGV[settings_at]) ~= string.sub(guard_arg, 4) then result = 0 end
    elseif guard == -1 then
      if redis.call('EXISTS', seq_key) == 1 then result = 0 end
    elseif guard > 0 then
      for _, member in ipairs(redis.call('ZRANGEBYSCORE', revised_key, guard, guard)) do
        if string.find(member, '"deleted":true', 1, true) then result = -1 end
      end
    end
  end
  if not result then
    local seq = redis.call('INCR', seq_key)
    local json = before .. seq .. after
    -- Trimmed by seq, not by entries: an entry of a batch of says holds many.
    local oldest = string.format('%d', math.max(seq - tonumber(ARGV[1]) + 1, 0))
    redis.call('XADD', log_key, 'MINID', '~', oldest, seq .. '-1', 'j', json, 't', ts, 'a', ack, 'n', said)
    for i = 0, settings - 1 do
      local field, value = ARGV[settings_at + 2 * i], ARGV[settings_at + 2 * i + 1]
      if value == '' then redis.call('HDEL', settings_key, field) else redis.call('HSET', settings_key, field, value) end
    end
    for i = 0, revisions - 1 do
      local r = revisions_at + 3 * i
      redis.call('XDEL', log_key, ARGV[r] .. '-1')
      redis.call('ZREMRANGEBYSCORE', revised_key, ARGV[r], ARGV[r])
      redis.call('ZADD', revised_key, ARGV[r], ARGV[r + 1] .. '\n' .. ARGV[r + 2])
    end
    if revisions > 0 then
      -- what the stream's retention dropped has no use for its revisions (trimmed loosely, as the stream)
      redis.call('ZREMRANGEBYSCORE', revised_key, '-inf', '(' .. (seq - 2 * tonumber(ARGV[1])))
    end
    redis.call('SPUBLISH', channel, head .. seq .. '\n' .. ts .. '\n' .. ack .. '\n' .. json)
    result = seq
  end
  out[m] = result
end
return out
)lua";

// The fast path of says: a batch of plain says (no event, none sent again), which is what a busy
// cluster sends. Per room it numbers once (INCRBY), stores once (one stream entry holds the
// room's says of the batch) and publishes once, and trims the stream (XTRIM MINID, by seq) when
// its seq passes a multiple of 64; the node did all the text work before. Every string Lua makes
// costs a copy, and a stream entry its allocation and bookkeeping, so the script makes one of
// each per room, none per say.
// KEYS: two per room of the batch: its seq counter, its stream.
// ARGV: stream length, the room count R, then per room: its count of says C, its channel, and
// its says as a block (said_batch.hpp: the node, its run and the first say's number and time,
// then per say its number and time as offsets from those, its ack ticket, sender and text).
// Stores the block as the entry "FIRST-C" with the field c (the says are numbered FIRST,
// FIRST + 1, ... in order). Publishes on each room's channel "Y" and the entry's id "FIRST-C",
// then the block as it came: a second publication costs Redis less than a string joined in Lua,
// which copies and hashes the block once more (said_batch_joiner.hpp puts the two together
// again; for_each_said reads them; the reader knows the room by the channel).
// Returns each room's first seq, in the rooms' order. (Entries that an earlier version stored
// with the field b, whose says were five lines "OFFSET\nTS\nACK\nNODE:RUN:NUMBER\nJSON" each, are
// still read: read_log, newest_ts and the say script know both.)
inline constexpr std::string_view says = R"lua(
local firsts = {}
local length = tonumber(ARGV[1])
for r = 1, tonumber(ARGV[2]) do
  local base = 3 * r
  local count = tonumber(ARGV[base])
  -- The count as given, a string: Redis turns a Lua number argument into text with '%.17g'
  local last = redis.call('INCRBY', KEYS[2 * r - 1], ARGV[base])
  local first = last - count + 1
  local log = KEYS[2 * r]
  -- '%d', not first .. '': Lua turns a number into text with '%.14g', a costly float format.
  -- The id is made once and published too: each string Lua makes costs a copy and a hash.
  local id = string.format('%d-%d', first, count)
  redis.call('XADD', log, id, 'c', ARGV[base + 2])
  -- Trimmed when the batch crosses a multiple of 64 seqs: the stream holds at most that many
  -- more than its length until then, and most batches pay no XTRIM.
  if math.floor(last / 64) ~= math.floor((first - 1) / 64) and last > length then
    redis.call('XTRIM', log, 'MINID', '~', string.format('%d', last - length + 1))
  end
  redis.call('SPUBLISH', ARGV[base + 1], 'Y' .. id)
  redis.call('SPUBLISH', ARGV[base + 1], ARGV[base + 2])
  firsts[r] = first
end
return firsts
)lua";

// KEYS: a room's stream, its revised set. ARGV: the lowest seq, the highest ('' for the newest),
// at most how many, and "1" for newest first. The stream's messages in that range with the
// revised messages merged in at their seqs, in the stream's reply form (XRANGE, or XREVRANGE),
// one entry per message: a batch's entry is given as one "SEQ-1" entry per say, with y: the
// block's first line and the say's five (said_batch.hpp), a block of one say (or, for an entry
// an earlier version stored with b, with x: the say's five lines as they were).
inline constexpr std::string_view read_log = R"lua(
local low, count, newest = tonumber(ARGV[1]), tonumber(ARGV[3]), ARGV[4] == '1'
local high_seq = ARGV[2] == '' and math.huge or tonumber(ARGV[2])
local high_id = ARGV[2] == '' and '+' or ARGV[2]
local raw
if newest then
  raw = redis.call('XREVRANGE', KEYS[1], high_id, ARGV[1], 'COUNT', count)
else
  raw = redis.call('XRANGE', KEYS[1], ARGV[1], high_id, 'COUNT', count)
end
-- A batch's entry ("FIRST-C", scripts::says) that starts below the range may reach into it.
local below = redis.call('XREVRANGE', KEYS[1], string.format('%d', low - 1), '-', 'COUNT', 1)
-- Each say of a batch's entry becomes an entry of its own, "SEQ-1" with its x, in the order
-- asked; the range and the count cut (what is past the count is never made).
local entries = {}
local function take(list, backwards)
  for _, entry in ipairs(list) do
    local first, n = string.match(entry[1], '^(%d+)%-(%d+)$')
    first, n = tonumber(first), tonumber(n)
    local fields = entry[2]
    if fields[1] == 'b' or fields[1] == 'c' then
      local says, at, block = {}, 1, fields[2]
      -- c: the block's first line (the node) goes with each say
      local field, node = 'x', ''
      if fields[1] == 'c' then
        at = (string.find(block, '\n', 1, true) or #block) + 1
        field, node = 'y', string.sub(block, 1, at - 1)
      end
      for k = 0, n - 1 do
        local stop = at - 1
        for _ = 1, 5 do stop = string.find(block, '\n', stop + 1, true) or (#block + 1) end
        local seq = first + k
        if seq >= low and seq <= high_seq then says[#says + 1] = {seq, at, stop - 1} end
        at = stop + 1
      end
      local from, to, step = 1, #says, 1
      if backwards then from, to, step = #says, 1, -1 end
      for s = from, to, step do
        if #entries >= count then return end
        local say = says[s]
        entries[#entries + 1] = {string.format('%d-1', say[1]), {field, node .. string.sub(block, say[2], say[3])}}
      end
    elseif first and first >= low and first <= high_seq then
      if #entries >= count then return end
      entries[#entries + 1] = entry
    end
  end
end
if newest then
  take(raw, true)
  take(below, true)
else
  take(below, false)
  take(raw, false)
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

// ARGV: node, ttl ms, channel, node_state event, user count U, then U users, then "ROOM\nUSER"
// fields. Replaces what the cluster knows of this node (after an outage its users and rooms may
// have changed) and tells the others to read its users again. Returns the "ROOM\nUSER" fields it
// replaced: the node makes those rooms' members agree with it (room_members_of).
inline constexpr std::string_view register_node = R"lua(
local prefix = 'parley:{cluster}:node:' .. ARGV[1]
local old = redis.call('HKEYS', prefix .. ':rooms')
redis.call('DEL', prefix .. ':users', prefix .. ':rooms')
local users = tonumber(ARGV[5])
for i = 6, 5 + users do redis.call('HSET', prefix .. ':users', ARGV[i], '1') end
for i = 6 + users, #ARGV do redis.call('HSET', prefix .. ':rooms', ARGV[i], '1') end
redis.call('SET', prefix, '1', 'PX', ARGV[2])
redis.call('SADD', 'parley:{cluster}:nodes', ARGV[1])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return old
)lua";

// ARGV: node, epoch to use when the cluster has none, channel, marker event. Returns {epoch,
// {node, ...}} for the other live nodes, then publishes the marker: events before it on the
// channel are in this answer, events after it are not. (The rooms' members and seqs are read
// per room, room_state; users per partition, users_index.)
inline constexpr std::string_view snapshot = R"lua(
local epoch = redis.call('GET', 'parley:{cluster}:epoch')
if not epoch then
  redis.call('SET', 'parley:{cluster}:epoch', ARGV[2])
  epoch = ARGV[2]
end
local nodes = {}
for _, id in ipairs(redis.call('SMEMBERS', 'parley:{cluster}:nodes')) do
  if id ~= ARGV[1] and redis.call('EXISTS', 'parley:{cluster}:node:' .. id) == 1 then
    table.insert(nodes, id)
  end
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return {epoch, nodes}
)lua";

// ARGV: node, channel, node_gone event. The node leaves at a shutdown (its names were freed
// before, release_leases): the others drop it at once.
inline constexpr std::string_view depart = R"lua(
local prefix = 'parley:{cluster}:node:' .. ARGV[1]
redis.call('DEL', prefix, prefix .. ':users', prefix .. ':rooms')
redis.call('SREM', 'parley:{cluster}:nodes', ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
)lua";

// ---- the keys' layout ----

// ARGV: the layout key, the layout (cluster_keys.hpp). Moves the keys of the first layout, which
// had no partitions ("parley:room:ROOM:log"), to their partitions ("parley:{pN}:room:ROOM:log"),
// and those of the second, whose cluster keys had no tag ("parley:epoch"), under "{cluster}",
// once: a Redis whose layout key holds the layout already is left alone. Run by the transport on
// every connect before the node hears that Redis is up (a plain EVAL: it runs once per connect).
// A key whose new name exists already is left where it is. The partition is computed as
// partition_of does: FNV-1a modulo 128 only needs the hash's low 7 bits, which Lua's numbers
// hold exactly. Returns how many keys moved.
inline constexpr std::string_view migrate_layout = R"lua(
local was = redis.call('GET', ARGV[1])
if was == ARGV[2] then return 0 end
local function tag(owner)
  local h = 37
  for i = 1, #owner do h = (bit.bxor(h, string.byte(owner, i) % 128) * 51) % 128 end
  return '{p' .. h .. '}'
end
local moved = 0
local function move(pattern, target_of)
  local cursor = '0'
  repeat
    local page = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = page[1]
    for _, key in ipairs(page[2]) do
      local target = target_of(key)
      if target and redis.call('RENAMENX', key, target) == 1 then moved = moved + 1 end
    end
  until cursor == '0'
end
local kinds = {seq = true, log = true, settings = true, revised = true, read = true}
if was ~= '2' then
move('parley:room:*', function(key)
  local room, kind = string.match(key, '^parley:room:(.+):(%a+)$')
  if room and kinds[kind] then return 'parley:' .. tag(room) .. ':room:' .. room .. ':' .. kind end
end)
move('parley:dm:*', function(key)
  local conversation, kind = string.match(key, '^parley:(dm:.+):(%a+)$')
  if conversation and kinds[kind] then return 'parley:' .. tag(conversation) .. ':' .. conversation .. ':' .. kind end
end)
move('parley:user:*', function(key)
  local user = string.match(key, '^parley:user:(.+):read$')
  if user then return 'parley:' .. tag(user) .. ':user:' .. user .. ':read' end
end)
move('parley:name:*', function(key)
  local user = string.match(key, '^parley:name:(.+)$')
  if user then return 'parley:' .. tag(user) .. ':name:' .. user end
end)
end
if was ~= '2' then redis.call('DEL', 'parley:rooms') end
-- Layout 3: the cluster's own keys carry the tag {cluster}. The epoch keeps its value; the nodes
-- are written again by each node when it connects (nodes of the earlier layout are stopped).
if redis.call('EXISTS', 'parley:epoch') == 1 and redis.call('RENAMENX', 'parley:epoch', 'parley:{cluster}:epoch') == 1 then
  moved = moved + 1
end
local cursor = '0'
repeat
  local page = redis.call('SCAN', cursor, 'MATCH', 'parley:node:*', 'COUNT', 1000)
  cursor = page[1]
  for _, key in ipairs(page[2]) do redis.call('DEL', key) end
until cursor == '0'
redis.call('DEL', 'parley:nodes')
redis.call('SET', ARGV[1], ARGV[2])
return moved
)lua";

// Every script above: the transport loads them all (SCRIPT LOAD) on every connect, before the
// node hears that Redis is up, so calls by SHA never meet a Redis that lacks one.
inline constexpr std::array<std::string_view, 22> all = {
    claim_name,    release_name, renew_names, heartbeat,   say,         presence,       room_members_of, room_state,
    rooms_index,   users_index,  register_node, snapshot,  depart,      dm,             read_marker,     conversations,
    read_log,      says,         log_tips,    claim_lease, release_leases, node_user};

}  // namespace parley::cluster::scripts
