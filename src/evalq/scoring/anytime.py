"""Anytime-valid monitor states: a sequential test of the window's runs, read in order.

A fixed threshold alerts whenever a window's mean dips below it, so on a stream whose true mean
sits just above the threshold a share of the checks alerts that grows as the mean nears it,
with nothing to bound it. The ``anytime`` rule tests, over the window's runs in the order they
came, the hypothesis that their mean is at least the threshold, with a betting wealth (an
e-process; Waudby-Smith & Ramdas 2024, "Estimating means of bounded random variables by
betting"): for values in ``[low, high]`` and a bet ``lam`` in ``[0, 1 / (high - t)]``,

    W_j = prod over the first j runs of (1 + lam * (t - x_i))

is a nonnegative supermartingale while the mean is at least ``t``, so by Ville's inequality the
chance that it *ever* reaches ``1 / level`` is at most ``level``. The wealth used is the mean of
the wealths of `BETS` fixed bets (a mean of e-processes is one), and the window alerts when its
running maximum over the window reaches ``1 / level``: each check's chance of a false alert is
at most ``level``, however many checks look at the same or overlapping windows, so the share of
false alerts among any number of checks stays at most ``level`` (in expectation). ``warning``
is the same test against the warning threshold.

What it does not bound: the chance that a long stream of windows *ever* alerts falsely (no rule
that keeps detecting drift at every point of an endless stream can). bench/anytime_monitor.py
measures both shares and the delay to detect a drop.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalq.core.monitors import MonitorRequest, MonitorState

DEFAULT_LEVEL = 0.05
"""The false-alert level of an ``anytime`` monitor that names none."""
BETS = (0.1, 0.25, 0.5, 0.75, 0.9)
"""The bets mixed, as fractions of the largest bet the range allows (``1 / (high - t)``)."""


def below(
    values: Sequence[float], threshold: float, *, level: float, scale: tuple[float, float]
) -> bool:
    """Whether the runs ``values`` (oldest first) show a mean below ``threshold`` at ``level``
    (the mixture wealth reached ``1 / level`` at some run of the window)."""
    _, high = scale
    if threshold >= high:  # no value can lie above: the test has no bet to place
        return False
    largest = 1 / (high - threshold)
    wealths = [1.0] * len(BETS)
    for x in values:
        step = threshold - min(x, high)
        wealths = [w * (1 + f * largest * step) for w, f in zip(wealths, BETS, strict=True)]
        if sum(wealths) / len(wealths) >= 1 / level:
            return True
    return False


def anytime_state(
    values: Sequence[float], *, monitor: MonitorRequest, scale: tuple[float, float]
) -> MonitorState:
    """The state the window ``values`` (oldest run first) puts the task in under the anytime
    rule: ``alert`` when the test finds its mean below ``alert``, ``warning`` below ``warning``,
    else ``ok``; ``no data`` under ``min_n`` runs."""
    if len(values) < monitor.min_n or not values:
        return "no data"
    level = monitor.level if monitor.level is not None else DEFAULT_LEVEL
    if below(values, monitor.alert, level=level, scale=scale):
        return "alert"
    if monitor.warning is not None and below(values, monitor.warning, level=level, scale=scale):
        return "warning"
    return "ok"
