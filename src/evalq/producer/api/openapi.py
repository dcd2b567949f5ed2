"""The API's OpenAPI document.

Regenerate the committed copy with ``python -m evalq.producer.api.openapi > docs/openapi.json``.
"""

from __future__ import annotations

import json
from typing import Any

from evalq.core.settings import Settings


def document() -> dict[str, Any]:
    """The OpenAPI document (independent of the environment: default Settings)."""
    from evalq.producer.api.app import create_app

    return create_app(Settings(broker_url="memory://")).openapi()


def render() -> str:
    """The document as committed in docs/openapi.json."""
    return json.dumps(document(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(render(), end="")
