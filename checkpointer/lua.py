"""The Lua scripts: each reads or changes one thread atomically, in one round trip.

Every script takes the thread's four keys as KEYS (c, w, b, e; see `keys.py`), so Redis Cluster
routes it to the thread's slot. Record layouts are described in `records.py`. Scripts that write
end by giving every key of the thread the same TTL when one is configured, so no key of a thread
outlives (or dies before) the others.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

_COMMON = r"""
local SEP = "\0"

-- `count` NUL-terminated fields of `s` from `pos`; returns them and the position after.
local function split(s, count, pos)
  local out = {}
  pos = pos or 1
  for i = 1, count do
    local e = string.find(s, SEP, pos, true)
    out[i] = string.sub(s, pos, e - 1)
    pos = e + 1
  end
  return out, pos
end

-- A checkpoint member's header (ns, id, parent, run, root, flags, n) and its n (channel,
-- version) pairs.
local function header(m)
  local h, pos = split(m, 7)
  local refs = split(m, 2 * tonumber(h[7]), pos)
  return h, refs
end

local function upper(ns, cid)
  return "(" .. ns .. SEP .. cid .. "\1"
end

-- cmd key args[from..to], in slices small enough for unpack(); collects table replies.
local function chunked(cmd, key, args, from, to)
  local out = {}
  local i = from
  while i <= to do
    local j = math.min(i + 999, to)
    local r = redis.call(cmd, key, unpack(args, i, j))
    if type(r) == "table" then
      for k = 1, j - i + 1 do out[#out + 1] = r[k] end
    end
    i = j + 1
  end
  return out
end

local function expire(ttl)
  if ttl > 0 then
    for i = 1, 4 do redis.call("PEXPIRE", KEYS[i], ttl) end
  end
end

-- Element fields of a list record `L log,start,end;...`, appended to `acc`.
local function element_fields(rec, acc)
  for log, a, b in string.gmatch(string.sub(rec, 2), "(%w+),(%d+),(%d+);") do
    for p = tonumber(a), tonumber(b) - 1 do acc[#acc + 1] = log .. p end
  end
  return acc
end

-- Appends a checkpoint's channel records, each list record followed by its elements, and its
-- writes (count, then members) to `out`. `known[log]` = n: the caller has positions < n of that
-- log already (see GET), so they are left out.
local function load(out, ns, cid, m, known)
  local _, refs = header(m)
  local fields = {}
  for i = 1, #refs, 2 do fields[#fields + 1] = ns .. SEP .. refs[i] .. SEP .. refs[i + 1] end
  local recs = chunked("HMGET", KEYS[3], fields, 1, #fields)
  for i = 1, #fields do
    local rec = recs[i]
    out[#out + 1] = rec
    if rec and string.byte(rec, 1) == 76 then
      local ef = {}
      for log, a, b in string.gmatch(string.sub(rec, 2), "(%w+),(%d+),(%d+);") do
        for p = math.max(tonumber(a), known[log] or 0), tonumber(b) - 1 do
          ef[#ef + 1] = log .. p
        end
      end
      local els = chunked("HMGET", KEYS[4], ef, 1, #ef)
      for j = 1, #ef do out[#out + 1] = els[j] end
    end
  end
  local ws = redis.call("ZRANGE", KEYS[2], "[" .. ns .. SEP .. cid .. SEP, upper(ns, cid), "BYLEX")
  out[#out + 1] = #ws
  for _, w in ipairs(ws) do out[#out + 1] = w end
end

local function find(ns, cid)
  return redis.call("ZRANGE", KEYS[1], "[" .. ns .. SEP .. cid .. SEP, upper(ns, cid),
    "BYLEX", "LIMIT", 0, 1)[1]
end

-- Stores the `n` pending writes given as ARGV triples (write prefix, member, "1" if special)
-- from ARGV[first]. A regular write keeps the first value stored for its (task, idx); a special
-- one (error, interrupt...) replaces it. The regular writes of one task (they come in a row)
-- cost one range read and one ZADD together, not two calls each.
local function apply_writes(first, n)
  local i, last = first, first + 3 * n - 1
  while i <= last do
    local p, m = ARGV[i], ARGV[i + 1]
    if ARGV[i + 2] == "1" then
      redis.call("ZREMRANGEBYLEX", KEYS[2], "[" .. p, "(" .. string.sub(p, 1, -2) .. "\1")
      redis.call("ZADD", KEYS[2], 0, m)
      i = i + 3
    else
      -- p = ns \0 id \0 task_id \0 idx \0; `task` is p without `idx \0`.
      local task = string.match(p, "^(.*%z)[^%z]+%z$")
      local have = {}
      for _, w in ipairs(redis.call("ZRANGE", KEYS[2], "[" .. task,
          "(" .. string.sub(task, 1, -2) .. "\1", "BYLEX")) do
        have[string.match(w, "^[^%z]*", #task + 1)] = true
      end
      local add = {}
      while i <= last and ARGV[i + 2] ~= "1" and string.sub(ARGV[i], 1, #task) == task
          and string.find(ARGV[i], SEP, #task + 1, true) == #ARGV[i] do
        local idx = string.sub(ARGV[i], #task + 1, -2)
        if not have[idx] then
          have[idx] = true
          add[#add + 1] = 0
          add[#add + 1] = ARGV[i + 1]
        end
        i = i + 3
      end
      chunked("ZADD", KEYS[2], add, 1, #add)
    end
  end
end

"""


@dataclass(frozen=True)
class Lua:
    """A Lua script: its source (the shared helpers, `library`, then `body`) and SHA1."""

    name: str
    body: str
    library: str = ""
    source: str = field(init=False)
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        source = _COMMON + self.library + self.body
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "sha", hashlib.sha1(source.encode()).hexdigest())


# ARGV: ns, checkpoint id ("" = latest), ttl ms to refresh (0 = none), the caller's element
# token, the element positions it has: "log,n;..." (positions < n; honoured only if the token
# is the thread's).
# Reply: {} or {member, token, <load output>}.
GET = Lua(
    "get",
    r"""
local ns, cid = ARGV[1], ARGV[2]
local m
if cid ~= "" then
  m = find(ns, cid)
else
  m = redis.call("ZRANGE", KEYS[1], "(" .. ns .. "\1", "[" .. ns .. SEP, "BYLEX", "REV",
    "LIMIT", 0, 1)[1]
end
if not m then return {} end
local tok = redis.call("HGET", KEYS[4], "tok")
local known = {}
if ARGV[4] ~= "" and tok == ARGV[4] then
  for log, n in string.gmatch(ARGV[5], "(%w+),(%d+);") do known[log] = tonumber(n) end
end
local out = {m, tok}
load(out, ns, split(m, 2)[2], m, known)
expire(tonumber(ARGV[3]))
return out
""",
)

# ARGV: ttl ms to refresh, then (ns, checkpoint id) pairs.
# Reply: per pair, false if gone, else the member followed by its load output.
LOAD = Lua(
    "load",
    r"""
local out = {}
for i = 2, #ARGV, 2 do
  local m = find(ARGV[i], ARGV[i + 1])
  if m then
    out[#out + 1] = m
    load(out, ARGV[i], ARGV[i + 1], m, {})
  else
    out[#out + 1] = false
  end
end
expire(tonumber(ARGV[1]))
return out
""",
)

# KEYS[5], optional (single-node servers only: it is in another slot): the run index key.
# ARGV: member prefix, member, ttl ms, expected token ("" = none), token to set if the thread has
# none, nb, ne, thread id for the run index, nw, nb (field, record) pairs for b, ne (field,
# element) pairs for e, nw pending-write triples (see apply_writes; they ride along with the put
# to save their own round trip).
# Reply: {1, token} stored, or {0, token} refused (stale token or element field taken): then
# nothing but the run index is written.
PUT = Lua(
    "put",
    r"""
if KEYS[5] then
  redis.call("SADD", KEYS[5], ARGV[8])
  if tonumber(ARGV[3]) > 0 then redis.call("PEXPIRE", KEYS[5], ARGV[3]) end
end
local tok = redis.call("HGET", KEYS[4], "tok")
if ARGV[4] ~= "" and tok ~= ARGV[4] then return {0, tok} end
local nb, ne, nw = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[9])
local e0 = 10 + 2 * nb
for i = e0, e0 + 2 * ne - 1, 2 do
  if redis.call("HEXISTS", KEYS[4], ARGV[i]) == 1 then return {0, tok} end
end
if ne > 0 then
  if not tok then
    tok = ARGV[5]
    redis.call("HSET", KEYS[4], "tok", tok)
  end
  chunked("HSET", KEYS[4], ARGV, e0, e0 + 2 * ne - 1)
end
chunked("HSET", KEYS[3], ARGV, 10, 9 + 2 * nb)
local p = ARGV[1]
redis.call("ZREMRANGEBYLEX", KEYS[1], "[" .. p, "(" .. string.sub(p, 1, -2) .. "\1")
redis.call("ZADD", KEYS[1], 0, ARGV[2])
apply_writes(e0 + 2 * ne, nw)
expire(tonumber(ARGV[3]))
return {1, tok}
""",
)

# ARGV: ttl ms, n, then n pending-write triples (see apply_writes).
PUT_WRITES = Lua(
    "put_writes",
    r"""
local n = tonumber(ARGV[2])
apply_writes(3, n)
expire(tonumber(ARGV[1]))
return n
""",
)

# KEYS: a run index key. ARGV: thread id, ttl ms.
INDEX_RUN = Lua(
    "index_run",
    r"""
redis.call("SADD", KEYS[1], ARGV[1])
if tonumber(ARGV[2]) > 0 then redis.call("PEXPIRE", KEYS[1], ARGV[2]) end
return 1
""",
)

SCRIPTS = (INDEX_RUN, GET, LOAD, PUT, PUT_WRITES)
