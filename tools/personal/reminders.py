"""Reminders that fire: a task's or event's ``remind_at`` as a scheduler job.

- **In step with the data.** Every write of a task or event goes through
  :meth:`Reminders.sync` (the service's ``on_change``): the item's next reminder time is
  scheduled as the job ``reminder:<kind>:<owner>:<id>`` (replacing the previous time), and a
  deleted item, a task no longer open, a cleared ``remind_at`` or a time already past cancel it.
  So changing ``remind_at`` fires at the new time only, and deleting cancels.
- **Once.** The scheduler claims a due job in one process among all replicas and re-delivers it
  (same ``firing_id``) only if that process died before completing. :meth:`Reminders.fire`
  publishes the ``reminder`` event on the owner's notification stream with ``once=firing_id``
  (one atomic Redis script: a re-delivery does not publish again), then POSTs the signed
  ``reminder.due`` webhook (PERSONAL_WEBHOOK_URLS) with the firing id as its delivery id,
  marking it sent afterwards: a crash between the POST and the mark re-sends the same delivery
  id, which receivers deduplicate (X-Switchyard-Delivery).
- **Current.** A firing re-reads the item: a job whose time is no longer the item's reminder
  (the item changed meanwhile) publishes nothing and moves to the item's real next time.
- **Recurring events** remind before each occurrence: the handler returns the next
  occurrence's reminder time (after both the fired one and now: occurrences missed while every
  process was down collapse into the one fired on recovery).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tools.notifications import Notifications
from tools.personal.format import describe
from tools.personal.models import Event, Kind, Task
from tools.personal.recurrence import is_reminder_time, next_reminder
from tools.personal.service import NotFound, PersonalService
from tools.personal.webhooks import WebhookEvent, WebhookSender
from tools.scheduler import Firing, Scheduler

log = logging.getLogger(__name__)

#: The scheduler kind of reminders.
KIND = "reminder"
#: The event name on the notification stream.
EVENT = "reminder"


def job_id(kind: str, owner: str, item_id: int) -> str:
    return f"{KIND}:{kind}:{owner}:{item_id}"


def _reminder_after(item: Task | Event, after: datetime) -> datetime | None:
    if isinstance(item, Task):
        if item.status != "open":
            return None
        return next_reminder(remind_at=item.remind_at, starts_at=None, rule_text=None, after=after)
    return next_reminder(
        remind_at=item.remind_at, starts_at=item.starts_at, rule_text=item.rrule, after=after
    )


def _is_current(item: Task | Event, due: datetime) -> bool:
    if isinstance(item, Task):
        if item.status != "open":
            return False
        return is_reminder_time(remind_at=item.remind_at, starts_at=None, rule_text=None, due=due)
    return is_reminder_time(
        remind_at=item.remind_at, starts_at=item.starts_at, rule_text=item.rrule, due=due
    )


@dataclass
class Reminders:
    """Schedules the items' reminders and fires them (see the module docstring)."""

    service: PersonalService
    scheduler: Scheduler
    notifications: Notifications
    webhooks: WebhookSender | None = None

    def attach(self) -> None:
        """Keep reminders in step with the service's writes and fire them in this process."""
        self.service.on_change = self.sync
        self.scheduler.register(KIND, self.fire)

    def _now(self) -> datetime:
        return self.scheduler.clock().astimezone(UTC)

    async def sync(self, kind: Kind, owner: str, item_id: int, item: Any) -> None:
        """Schedule the item's next reminder, or cancel it (``item`` None: deleted)."""
        job = job_id(kind, owner, item_id)
        due = None if item is None else _reminder_after(item, self._now())
        if due is None:
            await self.scheduler.cancel(job)
            return
        await self.scheduler.schedule(
            job, kind=KIND, owner=owner, payload={"kind": kind, "id": item_id}, due=due
        )

    async def fire(self, firing: Firing) -> datetime | None:
        """The scheduler's handler: publish, POST the webhook, return the next time."""
        job = firing.job
        kind, item_id = str(job.payload["kind"]), int(job.payload["id"])
        try:
            item: Task | Event = await self.service.get(job.owner, kind, item_id)  # type: ignore[arg-type,assignment]
        except NotFound:
            return None  # deleted meanwhile (its cancel raced this firing)
        if not _is_current(item, job.due):
            return _reminder_after(item, firing.now)
        data = self._data(kind, item, job.due, firing.firing_id)
        await self.notifications.publish(job.owner, EVENT, data, once=firing.firing_id)
        await self._webhook(job.owner, data, firing.firing_id)
        return _reminder_after(item, max(job.due, firing.now))

    def _data(self, kind: str, item: Task | Event, due: datetime, firing_id: str) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": firing_id,
            "kind": kind,
            "item_id": item.id,
            "title": item.title,
            "remind_at": due.astimezone(UTC).isoformat(),
            "text": describe(item, self._now()),
        }
        if isinstance(item, Event):
            lead = item.starts_at - item.remind_at if item.remind_at else None
            start = (due + lead).astimezone(item.starts_at.tzinfo) if lead is not None else None
            data["starts_at"] = start.isoformat() if start is not None else None
            data["rrule"] = item.rrule
        else:
            data["due_at"] = item.due_at.isoformat() if item.due_at else None
        return data

    async def _webhook(self, owner: str, data: dict[str, Any], firing_id: str) -> None:
        if self.webhooks is None or not self.webhooks.enabled:
            return
        mark = f"webhook:{firing_id}"
        if await self.notifications.marked(owner, mark):
            return
        event = WebhookEvent(id=firing_id, type="reminder.due", user_id=owner, data=data)
        deliveries = await self.webhooks.send(event)
        failed = [d.url for d in deliveries if not d.delivered]
        if failed:  # dead-lettered by the sender, for an operator to replay
            log.warning("reminder %s: webhook not delivered to %s", firing_id, failed)
        await self.notifications.mark(owner, mark)
