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
-- one (error, interrupt...) replaces it.
local function apply_writes(first, n)
  for i = first, first + 3 * n - 1, 3 do
    local p, m = ARGV[i], ARGV[i + 1]
    local hi = "(" .. string.sub(p, 1, -2) .. "\1"
    if ARGV[i + 2] == "1" then
      redis.call("ZREMRANGEBYLEX", KEYS[2], "[" .. p, hi)
      redis.call("ZADD", KEYS[2], 0, m)
    elseif #redis.call("ZRANGE", KEYS[2], "[" .. p, hi, "BYLEX", "LIMIT", 0, 1) == 0 then
      redis.call("ZADD", KEYS[2], 0, m)
    end
  end
end

-- Deletes checkpoint member `m` and its writes.
local function drop_checkpoint(m)
  local h = split(m, 2)
  redis.call("ZREM", KEYS[1], m)
  redis.call("ZREMRANGEBYLEX", KEYS[2], "[" .. h[1] .. SEP .. h[2] .. SEP, upper(h[1], h[2]))
end

-- Deletes channel records no kept checkpoint references and elements no kept list record
-- uses, then replaces the element token so writers forget the positions they knew.
local function collect_garbage(kept, token)
  local refd = {}
  for _, m in ipairs(kept) do
    local h, refs = header(m)
    for i = 1, #refs, 2 do refd[h[1] .. SEP .. refs[i] .. SEP .. refs[i + 1]] = true end
  end
  local drop, live = {}, {}
  for _, f in ipairs(redis.call("HKEYS", KEYS[3])) do
    if refd[f] then live[#live + 1] = f else drop[#drop + 1] = f end
  end
  chunked("HDEL", KEYS[3], drop, 1, #drop)
  local used = {}
  for _, rec in ipairs(chunked("HMGET", KEYS[3], live, 1, #live)) do
    if rec and string.byte(rec, 1) == 76 then
      for _, f in ipairs(element_fields(rec, {})) do used[f] = true end
    end
  end
  drop = {}
  local remaining = 0
  for _, f in ipairs(redis.call("HKEYS", KEYS[4])) do
    if f ~= "tok" then
      if used[f] then remaining = remaining + 1 else drop[#drop + 1] = f end
    end
  end
  chunked("HDEL", KEYS[4], drop, 1, #drop)
  if remaining == 0 then
    redis.call("DEL", KEYS[4])
  else
    redis.call("HSET", KEYS[4], "tok", token)
  end
end
"""


@dataclass(frozen=True)
class Lua:
    """A Lua script: its source and SHA1 (for EVALSHA)."""

    name: str
    body: str
    source: str = field(init=False)
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        source = _COMMON + self.body
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

# Reply: the distinct run ids of the thread's checkpoints (for the run index).
DELETE_THREAD = Lua(
    "delete_thread",
    r"""
local runs, seen = {}, {}
for _, m in ipairs(redis.call("ZRANGE", KEYS[1], 0, -1)) do
  local r = split(m, 4)[4]
  if r ~= "" and not seen[r] then
    seen[r] = true
    runs[#runs + 1] = r
  end
end
redis.call("UNLINK", KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return runs
""",
)

# ARGV: new token, run ids... Reply: number of checkpoints deleted.
DELETE_RUNS = Lua(
    "delete_runs",
    r"""
local runs = {}
for i = 2, #ARGV do runs[ARGV[i]] = true end
local kept, n = {}, 0
for _, m in ipairs(redis.call("ZRANGE", KEYS[1], 0, -1)) do
  if runs[split(m, 4)[4]] then
    drop_checkpoint(m)
    n = n + 1
  else
    kept[#kept + 1] = m
  end
end
if n > 0 then collect_garbage(kept, ARGV[1]) end
return n
""",
)

# ARGV: new token, "1" to only check. Reply: checkpoints deleted (0 when checking), or -1 when
# the thread uses a DeltaChannel (its latest values are rebuilt from older checkpoints).
PRUNE_KEEP_LATEST = Lua(
    "prune_keep_latest",
    r"""
local all = redis.call("ZRANGE", KEYS[1], 0, -1)
local latest, roots = {}, {}
for _, m in ipairs(all) do
  local h = split(m, 6)
  if string.find(h[6], "d", 1, true) then return -1 end
  latest[h[1]] = m
  if h[1] == "" then roots[h[2]] = true end
end
if ARGV[2] == "1" then return 0 end
local kept_root = latest[""] and split(latest[""], 2)[2] or nil
-- A subgraph call's namespace ("node:task_id") goes with the root checkpoint it started from,
-- once that one is saved and is not the one kept.
local calls = {}
for ns, m in pairs(latest) do
  local root = split(m, 5)[5]
  if string.find(ns, ":", 1, true) and roots[root] and root ~= kept_root then
    calls[ns] = true
  end
end
local kept, n = {}, 0
for _, m in ipairs(all) do
  local h = split(m, 3)
  if calls[h[1]] or latest[h[1]] ~= m then
    drop_checkpoint(m)
    n = n + 1
  elseif h[3] ~= "" then
    -- Its parent is gone: keep it as a checkpoint without parent.
    local rest = string.sub(m, #h[1] + #h[2] + #h[3] + 4)
    local orphan = h[1] .. SEP .. h[2] .. SEP .. SEP .. rest
    -- Add before removing: an emptied key would vanish, and come back without its TTL.
    redis.call("ZADD", KEYS[1], 0, orphan)
    redis.call("ZREM", KEYS[1], m)
    kept[#kept + 1] = orphan
  else
    kept[#kept + 1] = m
  end
end
for ns in pairs(calls) do
  redis.call("ZREMRANGEBYLEX", KEYS[2], "[" .. ns .. SEP, "(" .. ns .. "\1")
end
if n > 0 then collect_garbage(kept, ARGV[1]) end
return n
""",
)

# ARGV: ttl ms, token to set if the thread has none, nc, nw, nb, ne, then nc checkpoint members,
# nw write members, nb (field, record) pairs, ne (field, element) pairs. Merges into the thread.
IMPORT = Lua(
    "import",
    r"""
local nc, nw, nb, ne = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]),
  tonumber(ARGV[6])
local i = 7
for _ = 1, nc do
  local h = split(ARGV[i], 2)
  redis.call("ZREMRANGEBYLEX", KEYS[1], "[" .. h[1] .. SEP .. h[2] .. SEP, upper(h[1], h[2]))
  redis.call("ZADD", KEYS[1], 0, ARGV[i])
  i = i + 1
end
for _ = 1, nw do
  local h = split(ARGV[i], 4)
  local p = h[1] .. SEP .. h[2] .. SEP .. h[3] .. SEP .. h[4]
  redis.call("ZREMRANGEBYLEX", KEYS[2], "[" .. p .. SEP, "(" .. p .. "\1")
  redis.call("ZADD", KEYS[2], 0, ARGV[i])
  i = i + 1
end
chunked("HSET", KEYS[3], ARGV, i, i + 2 * nb - 1)
i = i + 2 * nb
if ne > 0 then
  chunked("HSET", KEYS[4], ARGV, i, i + 2 * ne - 1)
  if redis.call("HEXISTS", KEYS[4], "tok") == 0 then
    redis.call("HSET", KEYS[4], "tok", ARGV[2])
  end
end
expire(tonumber(ARGV[1]))
return nc
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

SCRIPTS = (
    INDEX_RUN,
    GET,
    LOAD,
    PUT,
    PUT_WRITES,
    DELETE_THREAD,
    DELETE_RUNS,
    PRUNE_KEEP_LATEST,
    IMPORT,
)
