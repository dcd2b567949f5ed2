"""The receiver address rule: public addresses only by default, every resolved address checked."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.receivers import (
    PRIVATE_RULE,
    UNRESOLVED_RULE,
    check_receiver,
    is_public,
    receiver_addresses,
)

REFUSED = [
    "http://127.0.0.1:9/x",
    "http://localhost:8080/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://[::1]/x",
    "http://2130706433/",  # 127.0.0.1 in decimal
    "http://0x7f000001/",  # ... in hex
    "http://127.1/",
    "http://[::ffff:127.0.0.1]/",  # IPv4-mapped
    "http://[::127.0.0.1]/",  # IPv4-compatible
    "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 of 169.254.169.254
    "http://[64:ff9b:1::1]/",  # local-use NAT64
    "http://0.0.0.0/",
    "http://[::]/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",  # shared address space (CGNAT)
    "http://192.0.2.1/",  # documentation
    "http://198.18.0.1/",  # benchmarking
    "http://224.0.0.1/",  # multicast
    "http://240.0.0.1/",  # reserved
    "http://255.255.255.255/",
    "http://[fc00::1]/",  # unique local
    "http://[fe80::1]/",  # link-local
    "http://[fec0::1]/",  # site-local
    "http://[ff02::1]/",  # multicast
    "http://[2001:db8::1]/",  # documentation
    "https://u:p@127.0.0.1:8443/x?token=abc",
]


@pytest.mark.parametrize("url", REFUSED)
def test_non_public_receivers_are_refused_by_default_naming_url(url: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_receiver(url, allow_private=False)
    assert caught.value.problems == [("url", PRIVATE_RULE)]
    check_receiver(url, allow_private=True)  # the local-development setting allows them


@pytest.mark.parametrize(
    "url", ["https://8.8.8.8/hook", "http://1.1.1.1:8080/x?token=t", "https://[2606:4700::1111]/"]
)
def test_public_addresses_are_accepted(url: str) -> None:
    check_receiver(url, allow_private=False)
    assert all(map(is_public, receiver_addresses(url, allow_private=False)))


def test_a_name_that_does_not_resolve_is_refused_unless_private_receivers_are_allowed() -> None:
    url = "https://no-such-host.invalid/hook"  # .invalid never resolves (RFC 6761)
    with pytest.raises(InvalidInput) as caught:
        check_receiver(url, allow_private=False)
    assert caught.value.problems == [("url", UNRESOLVED_RULE)]
    check_receiver(url, allow_private=True)  # nothing is resolved then
    with pytest.raises(InvalidInput) as again:
        receiver_addresses(url, allow_private=True)  # ... but a delivery needs an address
    assert again.value.problems == [("url", UNRESOLVED_RULE)]


def resolver_answering(*answers: str) -> Callable[..., list[Any]]:
    """A stand-in for the system resolver: every name resolves to ``answers``."""

    def getaddrinfo(host: str, port: object, *args: object, **kwargs: object) -> list[Any]:
        families = {4: socket.AF_INET, 6: socket.AF_INET6}
        return [
            (families[ipaddress.ip_address(a).version], socket.SOCK_STREAM, 6, "", (a, 0))
            for a in answers
        ]

    return getaddrinfo


def test_every_address_a_name_resolves_to_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", resolver_answering("8.8.8.8", "10.0.0.5"))
    with pytest.raises(InvalidInput) as caught:
        receiver_addresses("https://split.example/hook", allow_private=False)
    assert caught.value.problems == [("url", PRIVATE_RULE)]
    monkeypatch.setattr(socket, "getaddrinfo", resolver_answering("8.8.8.8", "2606:4700::1111"))
    assert receiver_addresses("https://split.example/hook", allow_private=False) == [
        ipaddress.ip_address("8.8.8.8"),
        ipaddress.ip_address("2606:4700::1111"),
    ]
