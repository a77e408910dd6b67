"""A local HTTP receiver for webhook tests: records every request, answers scripted statuses."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.servers import free_port


@dataclass
class Received:
    """One request the receiver got."""

    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """`ThreadingHTTPServer` on a free port; `statuses` are answered in order, then 200."""

    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    port: int = field(default_factory=free_port)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _arrived: threading.Condition = field(init=False)
    _server: ThreadingHTTPServer | None = None

    def __post_init__(self) -> None:
        self._arrived = threading.Condition(self._lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/webhook/personal"

    def start(self) -> Receiver:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                with owner._arrived:
                    owner.received.append(Received(self.path, dict(self.headers.items()), body))
                    status = owner.statuses.pop(0) if owner.statuses else 200
                    owner._arrived.notify_all()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"ok": true}')

            def log_message(self, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
