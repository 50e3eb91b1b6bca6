#pragma once

#include <array>
#include <cstddef>
#include <string_view>

// The Lua scripts of state kept for identities (cluster_node_conversations.cpp): stored direct
// conversations, read markers and the listing of a user's conversations. Part of the scripts the
// transport loads (cluster_scripts.hpp, `all`).
namespace parley::cluster::scripts {

// ---- state kept for identities (token mode): stored direct conversations, read markers ----

// KEYS: the conversation's seq counter, its stream, the sender's markers hash, the recipient's
// (left out where they live in other slots, Redis Cluster: the node moves them after).
// ARGV: two unused, ts, JSON before the seq, JSON after it, stream length, the conversation's
// key (the markers' field), "NODE:RUN:NUMBER" of the dm, and "1" when it is sent again after its
// answer was lost. Numbers the dm, stores it, makes the conversation one of both users' (the
// sender's marker moves to it, the recipient's starts at 0); returns its seq, and the node
// publishes it on both users' channels (which live in other slots). A dm sent again that is
// among the conversation's newest entries already is not stored twice: its seq is returned.
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
if KEYS[3] then
  local mine = tonumber(redis.call('HGET', KEYS[3], ARGV[7]) or '0')
  if seq > mine then redis.call('HSET', KEYS[3], ARGV[7], seq) end
  redis.call('HSETNX', KEYS[4], ARGV[7], 0)
end
return seq
)lua";

// KEYS: the user's markers hash, the log's seq counter (a room's or a conversation's) when it
// lives on the same server. ARGV: the field (room name or conversation key), the seq read, "1"
// for a conversation, and the log's last seq when it lives on another server (read there
// first). The marker only moves forward and never past the log's last seq. Returns {marker,
// 1 when it moved else 0}, or {-1, 0} for a conversation that does not exist.
inline constexpr std::string_view read_marker = R"lua(
local last = tonumber((KEYS[2] and redis.call('GET', KEYS[2])) or ARGV[4] or '0')
if ARGV[3] == '1' and last == 0 then return {-1, 0} end
local seq = math.min(tonumber(ARGV[2]), last)
local mark = redis.call('HGET', KEYS[1], ARGV[1])
if mark and tonumber(mark) >= seq then return {tonumber(mark), 0} end
redis.call('HSET', KEYS[1], ARGV[1], seq)
return {seq, 1}
)lua";

// Scripts made of parts, joined at compile time: a Lua function two scripts share.
template <const std::string_view&... parts>
struct joined {
    static constexpr auto text = [] {
        std::array<char, (parts.size() + ...)> out{};
        std::size_t at = 0;
        for (const std::string_view part : {parts...}) {
            for (const char c : part) {
                out[at++] = c;
            }
        }
        return out;
    }();
    static constexpr std::string_view value{text.data(), text.size()};
};

// Lua's newest_ts(log): the time of a stream's newest message, '0' when it holds none. Its t, or
// the time of the last say of a batch's c (the entry "FIRST-C" holds the node's line and C says
// of five lines each, the time second; with TS0 on the node's line, "NODE:RUN:NUMBER0:TS0", the
// time is an offset from it), or of an earlier version's x or b (likewise, without the node's
// line).
inline constexpr std::string_view newest_ts_function = R"lua(
local function newest_ts(log)
  local newest = redis.call('XREVRANGE', log, '+', '-', 'COUNT', 1)[1]
  if not newest then return '0' end
  local count = tonumber(string.match(newest[1], '%-(%d+)$')) or 1
  local fields, ts = newest[2], '0'
  for j = 1, #fields, 2 do
    local value = fields[j + 1]
    local ts0 = nil
    if fields[j] == 't' then ts = value end
    if fields[j] == 'c' then ts0 = tonumber(string.match(value, '^[^\n]*:%d+:(%d+)\n')) end
    if fields[j] == 'b' or fields[j] == 'c' then
      local at = 0
      local lines = 5 * (count - 1)
      if fields[j] == 'c' then lines = lines + 1 end
      for _ = 1, lines do at = string.find(value, '\n', at + 1, true) or #value end
      value = string.sub(value, at + 1)
    end
    if ts0 then
      local offset = tonumber(string.match(value, '^%-?%d+\n(%-?%d+)'))
      if offset then ts = string.format('%d', ts0 + offset) end
    elseif fields[j] == 'x' or fields[j] == 'b' or fields[j] == 'c' then
      ts = string.match(value, '^%d+\n(%d+)') or ts
    end
  end
  return ts
end
)lua";

// KEYS: the user's markers hash. Returns {field, marker, last seq, last ts, ...}: each log the
// user has a marker in, with its last seq (its counter) and the time of its newest stored
// message (0 when the stream holds none). Builds the logs' key names itself (cluster_keys.hpp; the
// partition as migrate_layout computes it): a field starting "dm:" is a conversation, any other a room.
inline constexpr std::string_view conversations_body = R"lua(
local function tag(owner)
  local h = 37
  for i = 1, #owner do h = (bit.bxor(h, string.byte(owner, i) % 128) * 51) % 128 end
  return '{p' .. h .. '}'
end
local out = {}
local markers = redis.call('HGETALL', KEYS[1])
for i = 1, #markers, 2 do
  local field = markers[i]
  local base = 'parley:' .. tag(field) .. ':room:' .. field
  if string.sub(field, 1, 3) == 'dm:' then base = 'parley:' .. tag(field) .. ':' .. field end
  table.insert(out, field)
  table.insert(out, markers[i + 1])
  table.insert(out, redis.call('GET', base .. ':seq') or '0')
  table.insert(out, newest_ts(base .. ':log'))
end
return out
)lua";
inline constexpr std::string_view conversations = joined<newest_ts_function, conversations_body>::value;

// KEYS: pairs of a log's seq counter and its stream. Returns {last seq, last ts, ...}, one pair
// per log, as scripts::conversations gives them: for a user's logs on a server other than the
// one holding the user's markers.
inline constexpr std::string_view log_tips_body = R"lua(
local out = {}
for i = 1, #KEYS, 2 do
  table.insert(out, redis.call('GET', KEYS[i]) or '0')
  table.insert(out, newest_ts(KEYS[i + 1]))
end
return out
)lua";
inline constexpr std::string_view log_tips = joined<newest_ts_function, log_tips_body>::value;

}  // namespace parley::cluster::scripts
