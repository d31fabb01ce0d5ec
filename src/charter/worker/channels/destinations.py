"""Where a webhook may go: the destination policy, on by default.

A webhook never reaches loopback, link-local (the cloud metadata address 169.254.169.254
among them), private (RFC 1918, shared, unique-local IPv6), multicast, unspecified or
reserved addresses — whatever the URL's spelling (``2130706433``, ``0177.0.0.1``,
``[::ffff:127.0.0.1]``) or a name that resolves there. The check runs on the *resolved*
address when the connection is made, and the connection goes to the address checked (the
URL's name still goes in ``Host`` and TLS's SNI), so a name that resolves elsewhere the next
time (DNS rebinding) does not get past it.

``CHARTER_WEBHOOK_ALLOW`` opts networks in, e.g. ``127.0.0.1/32,10.0.0.0/8`` for receivers
on the worker's own machine or network.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import typing
import urllib.parse
from collections.abc import Iterable

import httpcore
import httpx

from charter import settings
from charter.errors import ConfigurationError

DENIED_CODE = "WEBHOOK_DESTINATION_DENIED"
ALLOW_VARIABLE = "CHARTER_WEBHOOK_ALLOW"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class DestinationDenied(Exception):
    """A webhook's destination the policy refuses (never retried)."""

    def __init__(self, host: str, address: Address, why: str) -> None:
        super().__init__(
            f"{DENIED_CODE}: {host} is {address}, a {why} address, which webhooks may not "
            f"reach; to send there on purpose, add it to {ALLOW_VARIABLE} (e.g. "
            f"{ALLOW_VARIABLE}={address}/{address.max_prefixlen}) in the worker's environment"
        )


def allowed_networks(raw: str | None = None) -> tuple[Network, ...]:
    """The networks ``CHARTER_WEBHOOK_ALLOW`` opts in (comma-separated CIDRs or addresses)."""
    text = settings.webhook_allow() if raw is None else raw
    networks: list[Network] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ConfigurationError(
                f"{ALLOW_VARIABLE}: {item!r} is not an address or network; give CIDRs "
                "separated by commas, e.g. 127.0.0.1/32,10.0.0.0/8"
            ) from None
    return tuple(networks)


def _unmapped(address: Address) -> Address:
    """An IPv6 spelling of an IPv4 address (``::ffff:127.0.0.1``) is that IPv4 address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _why_denied(address: Address) -> str | None:
    """What makes ``address`` no public unicast destination (None when it is one)."""
    for why, test in (
        ("loopback", address.is_loopback),
        ("link-local (cloud metadata lives there)", address.is_link_local),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
        ("non-public", not address.is_global),
    ):
        if test:
            return why
    return None


class DestinationPolicy:
    def __init__(self, allow: Iterable[Network] | None = None) -> None:
        self.allow = tuple(allowed_networks() if allow is None else allow)

    def check(self, host: str, address: Address) -> None:
        """Raises DestinationDenied unless ``address`` (resolved from ``host``) may be sent to."""
        plain = _unmapped(address)
        if any(a in network for network in self.allow for a in {address, plain}):
            return
        why = _why_denied(plain) or _why_denied(address)
        if why is not None:
            raise DestinationDenied(host, plain, why)

    def check_spelling(self, url: str) -> None:
        """The URL's host when it is an address in any spelling, even one httpx refuses
        (``0177.0.0.1``); a name is checked when resolved, at connect time."""
        try:
            host = urllib.parse.urlsplit(url).hostname or ""
        except ValueError:
            return
        address = numeric_address(host)
        if address is not None:
            self.check(host, address)


def numeric_address(host: str) -> Address | None:
    """``host`` as an address when it spells one: dotted, decimal, octal, hex or IPv6."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return None


class _CheckedBackend(httpcore.AsyncNetworkBackend):
    """Resolves the host itself, checks every address, connects to a checked one."""

    def __init__(self, policy: DestinationPolicy) -> None:
        self._policy = policy
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            found = await asyncio.wait_for(
                loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), timeout
            )
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"resolving {host} timed out") from None
        except OSError as exc:
            raise httpcore.ConnectError(f"{host} could not be resolved: {exc}") from exc
        addresses: list[Address] = []
        for *_, sockaddr in found:
            address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
            if address not in addresses:
                addresses.append(address)
        for address in addresses:  # a name with one refused address is refused
            self._policy.check(host, address)
        failure: Exception = httpcore.ConnectError(f"{host} resolved to no address")
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:  # pragma: no cover - webhooks are TCP
        raise httpcore.ConnectError("webhooks are sent over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class CheckedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport, connecting only where the policy allows. No proxy from the
    environment: the policy judges the receiver's own address."""

    def __init__(self, policy: DestinationPolicy) -> None:
        super().__init__(trust_env=False)
        limits = httpx.Limits()
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_CheckedBackend(policy),
        )
