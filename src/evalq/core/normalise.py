"""Execution-time normalisation shared by tier 1 and the PeerRead composite (spec 001)."""

from __future__ import annotations

import math


def normalise_time(seconds: float) -> float:
    """``1 / (1 + ln(1 + t))``: 1 at t = 0, decreasing, in (0, 1] (docs/scoring.md, spec 001 fix).

    Raises:
        ValueError: ``seconds`` is negative, NaN or infinite.
    """
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"execution time must be a finite number >= 0 seconds, got {seconds}")
    return 1.0 / (1.0 + math.log1p(seconds))
