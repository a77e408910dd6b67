"""Hostile webhook receivers for the security tests: real asyncio TCP servers on loopback, each
on a free port and its own event loop thread (usable by in-process tests and by an API process).

- ``drip``: answers ``HTTP/1.1 200 OK`` and then one header byte per second, forever (each
  read gets data, so a per-read timeout never fires);
- ``endless``: answers 200 with a chunked body that never ends, as fast as the socket takes it;
- ``status``: reads the request and answers ``status`` (an ordinary receiver).

Every connection and every complete request is counted; ``closed`` counts connections the
client closed while the server was still writing.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tests.support.servers import free_port

Mode = Literal["drip", "endless", "status"]


@dataclass
class HostileReceiver:
    """A loopback HTTP receiver misbehaving as ``mode`` says."""

    mode: Mode = "status"
    status: int = 200
    drip_interval: float = 1.0
    port: int = field(default_factory=free_port)
    connections: int = 0
    requests: int = 0
    closed: int = 0
    #: The Host header of each request, and the TLS SNI of each https connection.
    hosts: list[str] = field(default_factory=list)
    sni: list[str | None] = field(default_factory=list)
    tls: ssl.SSLContext | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Condition = field(default_factory=threading.Condition)

    def url(self, host: str = "127.0.0.1", path: str = "/hook") -> str:
        return f"http://{host}:{self.port}{path}"

    def _count(self, what: str) -> None:
        with self._lock:
            setattr(self, what, getattr(self, what) + 1)
            self._lock.notify_all()

    def wait_for(self, what: str, at_least: int, timeout: float = 60.0) -> None:
        """Block until ``what`` (connections, requests, closed) reaches ``at_least``."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while getattr(self, what) < at_least:
                left = deadline - time.monotonic()
                assert left > 0, f"receiver saw {getattr(self, what)} {what}, not {at_least}"
                self._lock.wait(left)

    async def _read_request(self, reader: asyncio.StreamReader) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
            if name.strip().lower() == b"host":
                self.hosts.append(value.strip().decode())
        await reader.readexactly(length)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._count("connections")
        try:
            await self._read_request(reader)
            self._count("requests")
            if self.mode == "status":
                writer.write(
                    f"HTTP/1.1 {self.status} X\r\nContent-Length: 2\r\n"
                    "Connection: close\r\n\r\nok".encode()
                )
                await writer.drain()
            elif self.mode == "drip":
                writer.write(b"HTTP/1.1 200 OK\r\nX-Drip: ")
                while True:
                    await writer.drain()
                    await asyncio.sleep(self.drip_interval)
                    writer.write(b"a")
            else:  # endless
                writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                chunk = b"%x\r\n%s\r\n" % (65536, b"x" * 65536)
                while True:
                    writer.write(chunk)
                    await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            self._count("closed")
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    def start(self) -> HostileReceiver:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop

            async def serve() -> None:
                if self.tls is not None:
                    self.tls.sni_callback = lambda _sock, name, _ctx: self.sni.append(name)
                server = await asyncio.start_server(
                    self._handle, "127.0.0.1", self.port, ssl=self.tls
                )
                ready.set()
                async with server:
                    await server.serve_forever()

            with contextlib.suppress(asyncio.CancelledError):
                loop.run_until_complete(serve())
            loop.close()

        self._thread = threading.Thread(target=run, daemon=True, name=f"receiver-{self.mode}")
        self._thread.start()
        assert ready.wait(30), "the receiver did not start"
        return self

    def stop(self) -> None:
        loop = self._loop
        if loop is None or self._thread is None:
            return

        def cancel_all() -> None:
            for task in asyncio.all_tasks(loop):
                task.cancel()

        loop.call_soon_threadsafe(cancel_all)
        self._thread.join(30)


def tls_pair(host: str, folder: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a self-signed certificate for ``host``, and a client context that
    trusts only that certificate (an https receiver without a real CA)."""
    from datetime import UTC, datetime, timedelta

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    (folder / "cert.pem").write_bytes(cert_pem)
    (folder / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    client = ssl.create_default_context(cadata=cert_pem.decode())
    return server, client
