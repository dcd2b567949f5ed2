"""A requests-per-minute and tokens-per-minute limit shared by every worker, in Redis.

Two token buckets per judge model, updated together by one Lua script, so the check and the
take are atomic across processes and machines. The script reads the clock with Redis ``TIME``,
so workers with skewed clocks still agree. A bucket holds at most one minute's allowance and
refills continuously; a request takes one request token and its estimated token count.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import redis

from evalq.judge.retry import DeadlineReached

_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local wait = 0
local levels = {}
for i = 1, 2 do
  local cap = tonumber(ARGV[2 * i - 1])
  local need = tonumber(ARGV[2 * i])
  if cap > 0 then
    if need > cap then need = cap end
    local state = redis.call('HMGET', KEYS[i], 'level', 'ts')
    local level = tonumber(state[1]) or cap
    local ts = tonumber(state[2]) or now
    local rate = cap / 60000.0
    level = math.min(cap, level + math.max(0, now - ts) * rate)
    levels[i] = {level, need}
    if level < need then
      wait = math.max(wait, math.ceil((need - level) / rate))
    end
  end
end
for i = 1, 2 do
  if levels[i] then
    local level = levels[i][1]
    if wait == 0 then level = level - levels[i][2] end
    redis.call('HSET', KEYS[i], 'level', tostring(level), 'ts', now)
    redis.call('PEXPIRE', KEYS[i], 120000)
  end
end
return wait
"""


@dataclass(frozen=True)
class SharedRateLimit:
    """The shared RPM/TPM limit of one judge model.

    Attributes:
        client: the Redis connection (any database).
        model: the judge model id; each model has its own buckets.
        requests_per_minute: request allowance per minute; 0 = unlimited.
        tokens_per_minute: token allowance per minute; 0 = unlimited.
        key_prefix: prefix of the two bucket keys.
    """

    client: redis.Redis
    model: str
    requests_per_minute: int
    tokens_per_minute: int
    key_prefix: str = "evalq:judge"

    @property
    def keys(self) -> tuple[str, str]:
        """The Redis keys of the request bucket and the token bucket."""
        base = f"{self.key_prefix}:ratelimit:{self.model}"
        return f"{base}:requests", f"{base}:tokens"

    def try_take(self, tokens: int) -> float:
        """Take one request and ``tokens`` tokens if both buckets allow; else take nothing.

        Returns:
            0.0 when taken, otherwise the seconds until both buckets will hold enough.
        """
        if self.requests_per_minute <= 0 and self.tokens_per_minute <= 0:
            return 0.0
        args = (self.requests_per_minute, 1, self.tokens_per_minute, max(0, tokens))
        wait_ms = self.client.eval(_TAKE, 2, *self.keys, *args)
        return float(wait_ms) / 1000.0

    async def take_async(self, tokens: int, *, deadline: float) -> float:
        """Wait until taken; return the seconds waited. `DeadlineReached` past ``deadline``."""
        started = time.monotonic()
        while (wait := self.try_take(tokens)) > 0:
            if time.monotonic() + wait > deadline:
                raise DeadlineReached(f"rate limit of {self.model} needs {wait:.1f}s more")
            await asyncio.sleep(wait)
        return time.monotonic() - started
