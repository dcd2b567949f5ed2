"""The HTTP client's own messages never carry the credentials of the URL it was given."""

from __future__ import annotations

import httpx

from evalq.producer.http.wire import unreachable


def test_an_unreachable_api_is_named_without_its_credentials() -> None:
    error = unreachable(
        "https://ops:s3cret-pass@evalq.example:8443/base", httpx.ConnectError("x"), 3
    )
    assert str(error) == (
        "the evalq API at https://evalq.example:8443/base is unreachable (ConnectError) "
        "after 3 attempts"
    )
