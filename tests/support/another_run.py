"""Another run of an example run's agent, for a test that needs one more run: its own usage,
not the example's.

A run built as the example with a tag appended to its output and the example's usage unchanged
is the example sent again, padded: evalq counts it once (a near-copy by similarity,
`evalq.scoring.near_copy`, docs/scoring.md "Near-copies by similarity"), as it must for a
submitter who pads a copy. A test that means a second run of the agent builds one here: the
output tagged and the measured time `STEP` further per ``n`` (an honest repeat's usage is its
own; two honest bundled runs of one output differ by at least 3.8% on some figure). Two runs
made from one example with one ``n`` have one usage: give each of a test's runs its own ``n``.
"""

from __future__ import annotations

from typing import Any

STEP = 0.1
"""How much longer (relative) each further run took than the example: past the near-copy
tolerance (3.5%) on the time alone."""


def another_run(base: dict[str, Any], sid: str, tag: str, *, n: int = 1) -> dict[str, Any]:
    """``base`` as the ``n``-th further run of its agent, id ``sid``: its output with ``tag``
    appended (a ``tag`` ending in a space is put before it) and its measured time
    ``1 + n * STEP`` times the example's (10 s if it reported none)."""
    usage = dict(base["usage"])
    usage["execution_time"] = round((usage.get("execution_time") or 10.0) * (1 + n * STEP), 3)
    output = f"{tag}{base['output']}" if tag.endswith(" ") else f"{base['output']} {tag}"
    return base | {"id": sid, "output": output, "usage": usage}
