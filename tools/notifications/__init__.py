"""Each owner's notification stream (see :mod:`tools.notifications.stream`)."""

from __future__ import annotations

from tools.notifications.settings import NotificationSettings
from tools.notifications.stream import Notification, Notifications

__all__ = ["Notification", "NotificationSettings", "Notifications"]
