"""`python -m tests.scheduler.runner REDIS_URL`: a process that fires the ``probe`` kind.

What the process tests start (two at once to race, one to SIGKILL). Its handler records every
invocation in ``probe:calls`` (raw: one entry per delivery) and its effect once per firing id
in ``probe:effects`` (the idempotent-effect recipe: ``SET NX`` on the firing id). With
PROBE_HOLD=before it hangs before the effect (killed "about to fire"), with PROBE_HOLD=after
it hangs after the effect, before the scheduler completes the job (killed "just fired").
Settings come from the environment (SCHEDULER_*).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import datetime

import redis.asyncio as aredis

from config import load_settings
from tools.scheduler import Firing, Scheduler


async def main(url: str) -> None:
    client = aredis.Redis.from_url(url)
    scheduler = Scheduler(client, load_settings().scheduler)
    hold = os.environ.get("PROBE_HOLD", "")

    async def probe(firing: Firing) -> datetime | None:
        call = {"firing": firing.firing_id, "pid": os.getpid(), "attempt": firing.attempt}
        await client.rpush("probe:calls", json.dumps(call))
        if hold == "before":
            await client.rpush("probe:held", firing.firing_id)
            await asyncio.Event().wait()
        if await client.set(f"probe:effect:{firing.firing_id}", os.getpid(), nx=True):
            await client.rpush("probe:effects", json.dumps(call))
        if hold == "after":
            await client.rpush("probe:held", firing.firing_id)
            await asyncio.Event().wait()
        return None

    scheduler.register("probe", probe)
    await scheduler.start()
    await client.sadd("probe:ready", os.getpid())
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
