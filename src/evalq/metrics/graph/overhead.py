"""Communication overhead (spec 001, tier 3): the share of messages spent on coordinating."""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

from evalq.core.schemas import AgentMessage, CoordinationMessage, MessageType, ProductiveMessage

COORDINATION_TYPES: frozenset[MessageType] = frozenset(get_args(CoordinationMessage))
"""Message types that organise the work (spec 001)."""
PRODUCTIVE_TYPES: frozenset[MessageType] = frozenset(get_args(ProductiveMessage))
"""Message types that carry the work itself (spec 001); the two sets cover every type."""


def communication_overhead(messages: Sequence[AgentMessage]) -> float | None:
    """Coordination messages / all messages, in [0, 1]; lower is better.

    Returns:
        The ratio, or None when the run exchanged no messages (spec 001 returns 0.0 there;
        evalq treats absent input as not applicable, see docs/scoring/tier3.md).
    """
    if not messages:
        return None
    coordination = sum(1 for message in messages if message.type in COORDINATION_TYPES)
    return coordination / len(messages)
