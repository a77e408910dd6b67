"""How Switchyard's Postgres pools retry a lost server: so a request after an outage succeeds.

psycopg_pool replaces a broken connection with a reconnect attempt that backs off exponentially
(1 s, 2 s, 4 s, ...) for `reconnect_timeout` (5 minutes by default), and no other attempt starts
while one is pending. After an outage of a few seconds the next attempt may then be many seconds
away, so requests made after the server is back still time out waiting for a connection. Bounding
each chain of attempts to half the wait for a connection makes sure that a request starts an
attempt (or finds one due) within half its wait, leaving the other half to connect.
"""

from __future__ import annotations

#: The shortest retry chain (seconds), so a tiny wait does not turn into a busy loop.
MIN_RECONNECT_SECONDS = 0.5


def reconnect_timeout(wait_seconds: float) -> float:
    """The `reconnect_timeout` for a pool whose callers wait `wait_seconds` for a connection."""
    return max(MIN_RECONNECT_SECONDS, wait_seconds / 2)
