"""The Lua scripts that delete and copy: delete_thread, delete_for_runs, prune, copy_thread.

Like those of `lua.py`, each works on one thread's four keys (one Cluster slot).
"""

from __future__ import annotations

from checkpointer.lua import Lua

_LIBRARY = r"""
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
    _LIBRARY,
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
    _LIBRARY,
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
    _LIBRARY,
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
    _LIBRARY,
)

SCRIPTS = (DELETE_THREAD, DELETE_RUNS, PRUNE_KEEP_LATEST, IMPORT)
