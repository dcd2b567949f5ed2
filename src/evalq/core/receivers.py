"""Where a webhook may POST: public addresses only, checked on the address connected to.

Whoever holds a write key chooses a receiver's URL, and the POST leaves from a worker that may
sit next to services nobody outside should reach (a cloud metadata endpoint, Redis, an admin
page); a read key then sees each attempt's status or error, which makes a port scanner of it.
So by default a receiver must resolve to global unicast addresses only: private, loopback,
link-local, unspecified, multicast, reserved, shared (CGNAT), unique-local and site-local
addresses are refused, and so are IPv6 forms that carry an IPv4 address which is (IPv4-mapped,
IPv4-compatible, 6to4, NAT64). ``EVALQ_WEBHOOK_ALLOW_PRIVATE=true`` allows them, for local
development.

The rule holds where it matters, when connecting: `receiver_addresses` resolves the name once,
checks every address it resolves to, and the delivery connects to one of those very addresses
(the URL's host replaced by it; the Host header and the TLS server name stay the name), so a
name that resolves elsewhere a moment later (DNS rebinding) changes nothing. Registration runs
the same check, so a receiver refused later is refused up front, with a name that does not
resolve.
"""

from __future__ import annotations

import ipaddress
import socket
from ipaddress import IPv4Address, IPv6Address

import httpx

from evalq.core.errors import InvalidInput
from evalq.core.webhooks import URL_RULE

IPAddress = IPv4Address | IPv6Address

UNRESOLVED_RULE = "must name a host that resolves to an address (DNS found none)"
PRIVATE_RULE = (
    "must resolve only to public addresses: private, loopback, link-local and other non-global "
    "addresses are refused (EVALQ_WEBHOOK_ALLOW_PRIVATE=true allows them, for local development)"
)

_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated ::a.b.c.d
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # the well-known prefix: a.b.c.d behind a gateway
_LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")  # local use only (RFC 8215)


def is_public(address: IPAddress) -> bool:
    """True for a global unicast address, the only kind a receiver may have by default.

    ``is_global`` alone is not enough on Python 3.11: it lets multicast, site-local
    (``fec0::/10``) and IPv6 addresses that embed a loopback IPv4 one through.
    """
    if isinstance(address, IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if address in _NAT64:
            embedded = IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return is_public(embedded)
        if address in _IPV4_COMPATIBLE or address in _LOCAL_NAT64 or address.is_site_local:
            return False
    return address.is_global and not address.is_multicast


def resolve(host: str) -> list[IPAddress]:
    """Every address ``host`` resolves to (an IP literal: itself), each once, in order.

    Raises:
        InvalidInput: on ``url`` when the name resolves to no address.
    """
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise InvalidInput([("url", UNRESOLVED_RULE)]) from None
    found = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    if not found:
        raise InvalidInput([("url", UNRESOLVED_RULE)])
    return list(dict.fromkeys(found))


def receiver_addresses(url: str, *, allow_private: bool) -> list[IPAddress]:
    """The addresses a delivery to ``url`` may connect to, from one resolution of its host.

    Raises:
        InvalidInput: on ``url`` when its host does not resolve, or when any address it
            resolves to is not public and ``allow_private`` is false.
    """
    try:
        host = httpx.URL(url).raw_host.decode("ascii")
    except httpx.InvalidURL:  # stored before the URL rule knew httpx's
        raise InvalidInput([("url", URL_RULE)]) from None
    addresses = resolve(host)
    if not allow_private and not all(map(is_public, addresses)):
        raise InvalidInput([("url", PRIVATE_RULE)])
    return addresses


def check_receiver(url: str, *, allow_private: bool) -> None:
    """At registration: `InvalidInput` on ``url`` when a delivery to it would be refused.

    With ``allow_private`` nothing is refused and nothing is resolved (a development receiver
    may not exist yet); otherwise the host must resolve, to public addresses only.
    """
    if not allow_private:
        receiver_addresses(url, allow_private=False)
