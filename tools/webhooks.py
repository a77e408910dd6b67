"""Outgoing webhooks' network guard, shared by the runs' webhooks and the personal agents'.

A webhook URL is untrusted input (a caller's) or an operator's setting that DNS can betray, so
the address is checked where the connection is made, not before:

- the host is resolved ONCE per connection, through a resolver that is a constructor parameter
  (the system's by default; tests pass one that simulates DNS offline);
- every resolved address is vetted: public addresses only (``is_global``, not multicast), and
  no IPv6 form that embeds an IPv4 address (IPv4-mapped/-translated/-compatible, NAT64
  ``64:ff9b::/96`` and ``64:ff9b:1::/48``, 6to4 ``2002::/16``, Teredo ``2001::/32``): those
  reach an IPv4 host the check never saw;
- the connection goes to the vetted address itself (a pinned httpcore network backend), so a
  second resolution that answers ``127.0.0.1`` (DNS rebinding) never happens; the URL's host
  still gives the ``Host`` header and the TLS SNI / certificate check;
- the peer address is checked again once connected;
- no keep-alive: every attempt (every retry) opens, resolves and vets a new connection; no
  redirects are followed and no proxy or ``.netrc`` from the environment is used
  (``trust_env=False``);
- one attempt has a TOTAL deadline (request, headers and body together; a receiver dripping a
  byte per second cannot hold it longer) and reads at most a capped number of answer bytes.

Hosts listed in ``WEBHOOK_ALLOWED_HOSTS`` (an operator's opt-in, e.g. ``127.0.0.1`` for a
receiver on the same machine, or the tests' loopback receivers) skip the address vetting but are
still resolved once and pinned.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx

__all__ = [
    "MAX_URL_CHARS",
    "Resolver",
    "WebhookGuard",
    "WebhookRejected",
    "WebhookTarget",
    "address_problem",
    "parse_target",
    "post_capped",
    "system_resolver",
]

MAX_URL_CHARS = 2048

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
#: ``(host, port) -> addresses`` (as text); raises ``OSError`` when the name does not resolve.
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

#: IPv6 ranges whose addresses carry (or are translated to) an IPv4 address. ``is_global``
#: judges the IPv6 form, not the IPv4 host it reaches, so these are refused outright: a real
#: webhook receiver has a native address.
_EMBEDDED_IPV4: tuple[tuple[str, ipaddress.IPv6Network], ...] = (
    ("IPv4-mapped", ipaddress.IPv6Network("::ffff:0:0/96")),
    ("IPv4-translated", ipaddress.IPv6Network("::ffff:0:0:0/96")),
    ("IPv4-compatible", ipaddress.IPv6Network("::/96")),
    ("NAT64", ipaddress.IPv6Network("64:ff9b::/96")),
    ("local-use NAT64", ipaddress.IPv6Network("64:ff9b:1::/48")),
    ("6to4", ipaddress.IPv6Network("2002::/16")),
    ("Teredo", ipaddress.IPv6Network("2001::/32")),
)


class WebhookRejected(ValueError):
    """The webhook URL may not be called (the message says why and what to do)."""


@dataclass(frozen=True, slots=True)
class WebhookTarget:
    """A webhook URL's parts that decide where the connection goes."""

    url: str
    scheme: str
    host: str
    port: int


def parse_target(url: str) -> WebhookTarget:
    """The URL's target, or :class:`WebhookRejected` when its form is refused (no DNS here)."""
    if len(url) > MAX_URL_CHARS:
        raise WebhookRejected(f"webhook URL is longer than {MAX_URL_CHARS} characters")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise WebhookRejected("webhook URL must start with http:// or https://")
    if parts.username or parts.password:
        raise WebhookRejected("webhook URL must not carry credentials (user:password@)")
    host = parts.hostname or ""
    if not host:
        raise WebhookRejected("webhook URL has no host")
    try:
        port = parts.port
    except ValueError:
        raise WebhookRejected("webhook URL has an invalid port") from None
    default = 443 if parts.scheme == "https" else 80
    return WebhookTarget(url=url, scheme=parts.scheme, host=host, port=port or default)


def address_problem(address: IPAddress) -> str | None:
    """Why a webhook may not connect to ``address`` (None: it may)."""
    if not address.is_global or address.is_multicast:
        return "a non-public address"
    if isinstance(address, ipaddress.IPv6Address):
        for name, network in _EMBEDDED_IPV4:
            if address in network:
                return f"an IPv6 address embedding an IPv4 address ({name})"
    return None


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the system resolver gives ``host`` (TCP), in its order, deduplicated."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


class WebhookGuard:
    """Which addresses webhooks may reach, and HTTP clients that connect only to those."""

    def __init__(
        self,
        allowed_hosts: Iterable[str] = (),
        resolver: Resolver | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.allowed_hosts = frozenset(host.lower() for host in allowed_hosts)
        self.resolver: Resolver = resolver or system_resolver
        #: The certificates trusted for https webhooks (default: httpx's, the certifi bundle).
        self.ssl_context = ssl_context or httpx.create_ssl_context(trust_env=False)

    def allowed(self, host: str) -> bool:
        """Whether the operator allowed ``host`` although it may not be public."""
        return host.lower().strip("[]") in self.allowed_hosts

    def _refuse(self, host: str, address: IPAddress, problem: str) -> WebhookRejected:
        return WebhookRejected(
            f"webhook host {host!r} resolves to {problem} ({address}); add the host to "
            "WEBHOOK_ALLOWED_HOSTS to allow it"
        )

    async def vetted_addresses(self, host: str, port: int) -> list[IPAddress]:
        """Resolve ``host`` once; every address must pass (or the host be allowed)."""
        literal = _literal(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                answer = await self.resolver(host, port)
                addresses = [ipaddress.ip_address(str(a).split("%", 1)[0]) for a in answer]
            except (OSError, ValueError):
                raise WebhookRejected(f"webhook host {host!r} does not resolve") from None
        if not addresses:
            raise WebhookRejected(f"webhook host {host!r} does not resolve")
        if not self.allowed(host):
            for address in addresses:
                problem = address_problem(address)
                if problem is not None:
                    raise self._refuse(host, address, problem)
        return addresses

    async def check_url(self, url: str) -> WebhookTarget:
        """Refuse ``url`` now (e.g. when a run is submitted); sending checks again."""
        target = parse_target(url)
        await self.vetted_addresses(target.host, target.port)
        return target

    def check_peer(self, host: str, vetted: IPAddress, peer: Any) -> None:
        """The connected socket's peer must be the vetted address (and still pass)."""
        text = peer[0] if isinstance(peer, tuple) and peer else peer
        try:
            address = ipaddress.ip_address(str(text).split("%", 1)[0])
        except ValueError:
            raise WebhookRejected(f"webhook host {host!r}: unknown peer address") from None
        if address != vetted:
            raise WebhookRejected(f"webhook host {host!r}: connected to {address}, not {vetted}")
        if not self.allowed(host):
            problem = address_problem(address)
            if problem is not None:
                raise self._refuse(host, address, problem)

    def client(self, *, timeout_seconds: float, max_connections: int = 10) -> httpx.AsyncClient:
        """An HTTP client whose every connection goes to a vetted, pinned address."""
        return httpx.AsyncClient(
            transport=_PinnedTransport(self, max_connections=max_connections),
            timeout=timeout_seconds,
            follow_redirects=False,
            trust_env=False,
        )


class _VettedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend with the address check at ``connect_tcp``: resolve once, vet,
    connect to the vetted address, check the peer. TLS (SNI and the certificate check) runs
    afterwards on the stream with the URL's host, as httpcore always does."""

    def __init__(self, guard: WebhookGuard) -> None:
        self._guard = guard
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self._guard.vetted_addresses(host, port)
        failure: Exception | None = None
        for address in addresses:
            try:
                stream = await self._inner.connect_tcp(
                    str(address),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout, OSError) as exc:
                failure = exc
                continue
            try:
                self._guard.check_peer(host, address, stream.get_extra_info("server_addr"))
            except WebhookRejected:
                await stream.aclose()
                raise
            return stream
        assert failure is not None  # vetted_addresses never returns an empty list
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("webhooks never connect to Unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _PinnedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport over a connection pool with the vetted backend and no keep-alive
    (so every attempt resolves and vets again). httpx does not take a network backend as an
    argument, so the pool it built is replaced by one that has ours; the request/response and
    exception mapping stay httpx's."""

    def __init__(self, guard: WebhookGuard, *, max_connections: int) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=guard.ssl_context,
            max_connections=max_connections,
            max_keepalive_connections=0,
            http1=True,
            http2=False,
            network_backend=_VettedBackend(guard),
        )


async def post_capped(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    deadline_seconds: float,
    max_response_bytes: int,
) -> int:
    """POST ``body``; the answer's status. The whole attempt (connect, send, headers, body)
    ends after ``deadline_seconds`` (``TimeoutError``); at most ``max_response_bytes`` of the
    answer's body are read (the rest is never received: the connection is closed)."""
    async with asyncio.timeout(deadline_seconds):
        async with client.stream("POST", url, content=body, headers=dict(headers)) as response:
            received = 0
            async for chunk in response.aiter_raw():
                received += len(chunk)
                if received >= max_response_bytes:
                    break
            return response.status_code
