"""The scheduler's Lua scripts: every state change of a job is one atomic script on Redis.

Keys (one Redis Cluster hash slot: every key starts with the ``{...}`` tag of the prefix):

- ``<p>:due:<kind>``      ZSET job id → due time (epoch ms): waiting to be claimed;
- ``<p>:leased:<kind>``   ZSET job id → lease expiry (epoch ms): claimed, being fired;
- ``<p>:job:<id>``        HASH: id, kind, owner, payload (JSON), due (ms), cron, tz, end (ms),
  attempts (claims of this due time), token (the current claim's), last (ms of the last firing);
- ``<p>:owner:<kind>:<owner>``  SET of the owner's job ids of that kind (quota, listing).

A job is in exactly one of the two ZSETs (or, between a firing and its completion, in
``leased`` only). Claiming moves it from ``due`` to ``leased`` in the same script that reads
it, so two processes never both claim it; completing checks the claim's token, so a process
whose lease expired (and whose job another process claimed) changes nothing.
"""

from __future__ import annotations

#: KEYS: due, leased.  ARGV: now_ms, lease_ms, batch, token, job key prefix.
#: Expired leases go back to ``due`` (their holder died or hung), then up to ``batch`` due jobs
#: are leased. Returns each claimed job's hash as a flat list.
CLAIM = """
local now = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
local batch = tonumber(ARGV[3])
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, batch)
for _, id in ipairs(expired) do
  redis.call('ZREM', KEYS[2], id)
  local due = redis.call('HGET', ARGV[5] .. id, 'due')
  if due then
    redis.call('HDEL', ARGV[5] .. id, 'token')
    redis.call('ZADD', KEYS[1], due, id)
  end
end
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, batch)
local out = {}
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  local key = ARGV[5] .. id
  if redis.call('EXISTS', key) == 1 then
    redis.call('ZADD', KEYS[2], now + lease, id)
    redis.call('HSET', key, 'token', ARGV[4])
    redis.call('HINCRBY', key, 'attempts', 1)
    table.insert(out, redis.call('HGETALL', key))
  end
end
return out
"""

#: KEYS: due, leased, job, owner set.  ARGV: id, token, next due ms ('' = done: delete the
#: job), last fired ms, keep attempts ('1' on a retry of the same due time).
#: Returns 1, or 0 when the claim is no longer this token's (lease lost, job changed or gone).
FINISH = """
if redis.call('HGET', KEYS[3], 'token') ~= ARGV[2] then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
if ARGV[3] == '' then
  redis.call('DEL', KEYS[3])
  redis.call('SREM', KEYS[4], ARGV[1])
  return 1
end
redis.call('HDEL', KEYS[3], 'token')
redis.call('HSET', KEYS[3], 'due', ARGV[3])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[3], 'last', ARGV[4]) end
if ARGV[5] ~= '1' then redis.call('HSET', KEYS[3], 'attempts', 0) end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""

#: KEYS: leased, job.  ARGV: id, token, new lease expiry ms.  1 when still held.
RENEW = """
if redis.call('HGET', KEYS[2], 'token') ~= ARGV[2] then return 0 end
redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
return 1
"""

#: KEYS: due, leased, job, owner set.  ARGV: id, kind, owner, quota (0 = none), then field,
#: value pairs (due among them). Creates or replaces the job: a new due time, attempts 0, any
#: claim dropped (a firing in progress completes as a no-op). Returns 1 (created), 2
#: (replaced), -1 (the owner is at the quota), -2 (the id is another kind's or owner's job).
SCHEDULE = """
local existing = redis.call('HMGET', KEYS[3], 'kind', 'owner')
local created = 1
if existing[1] then
  if existing[1] ~= ARGV[2] or existing[2] ~= ARGV[3] then return -2 end
  created = 2
else
  local quota = tonumber(ARGV[4])
  if quota > 0 and redis.call('SCARD', KEYS[4]) >= quota then return -1 end
end
local due = nil
local fields = {}
for i = 5, #ARGV, 2 do
  if ARGV[i] == 'due' then due = ARGV[i + 1] end
  table.insert(fields, ARGV[i])
  table.insert(fields, ARGV[i + 1])
end
local last = redis.call('HGET', KEYS[3], 'last')
redis.call('DEL', KEYS[3])
redis.call('HSET', KEYS[3], 'id', ARGV[1], 'kind', ARGV[2], 'owner', ARGV[3], 'attempts', 0,
  unpack(fields))
if last then redis.call('HSET', KEYS[3], 'last', last) end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[1], due, ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
return created
"""

#: KEYS: due, leased, job, owner set.  ARGV: id, kind.  1 when the job was cancelled.
CANCEL = """
if redis.call('HGET', KEYS[3], 'kind') ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[3])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[4], ARGV[1])
return 1
"""
