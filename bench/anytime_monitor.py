"""False alerts and detection delay of a monitor checked after every run: fixed threshold
against the anytime-valid rule.

    python bench/anytime_monitor.py [--streams 100] [--runs 100] [--seed 0] [--quick]

Simulated score streams in [0, 1] (Beta-distributed runs, as composites are), a monitor with
a window of the last 20 runs, ``min_n`` 5 and ``alert`` 0.65, checked after every run:

- stationary: every run's mean is 0.70 (above the threshold), and, the hardest case, exactly
  0.65 (at it): any alert is false. Printed per rule: the share of checks that alert (what the
  level bounds for the anytime rule) and the share of streams that ever alert;
  ``--streams x --runs`` checks in all (10,000 by default);
- drifting: the mean drops to 0.45 after half the runs: the share of streams alerting after
  the drop, and the mean runs from the drop to the first alert.

The last line is the anytime rule's share of false alerts among the stationary checks over its
level (target <= 1).
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import figure, parse_args, ratio

from evalq.core.monitors import MonitorRequest
from evalq.scoring.anytime import anytime_state
from evalq.scoring.monitor import state_of

WINDOW = 20
MEAN, DRIFTED, ALERT, CONCENTRATION = 0.70, 0.45, 0.65, 8.0


def stream(
    rng: np.random.Generator, runs: int, drift_at: int | None, mean: float = MEAN
) -> list[float]:
    """A stream of run scores: Beta(mean * c, (1 - mean) * c), the mean dropping at drift_at."""
    means = [DRIFTED if drift_at is not None and i >= drift_at else mean for i in range(runs)]
    return [float(rng.beta(m * CONCENTRATION, (1 - m) * CONCENTRATION)) for m in means]


def alerts(values: list[float], monitor: MonitorRequest) -> list[bool]:
    """Whether each check (after every run) alerts under the monitor's rule."""
    found = []
    for k in range(1, len(values) + 1):
        window = values[max(0, k - WINDOW) : k]
        if monitor.rule == "anytime":
            state = anytime_state(window, monitor=monitor, scale=(0.0, 1.0))
        else:
            state = state_of(sum(window) / len(window), len(window), monitor)
        found.append(state == "alert")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--level", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    args = parse_args(parser, quick={"streams": 20, "runs": 50})
    rules = {
        "threshold": MonitorRequest(tasks="t", alert=ALERT, last_runs=WINDOW),
        "anytime": MonitorRequest(
            tasks="t", alert=ALERT, last_runs=WINDOW, rule="anytime", level=args.level
        ),
    }
    checks = args.streams * args.runs
    print(f"{args.streams} streams x {args.runs} checks = {checks} checks; level {args.level}")
    rng = np.random.default_rng(args.seed)
    stationary = [stream(rng, args.runs, None) for _ in range(args.streams)]
    at_threshold = [stream(rng, args.runs, None, ALERT) for _ in range(args.streams)]
    drift_at = args.runs // 2
    drifting = [stream(rng, args.runs, drift_at) for _ in range(args.streams)]
    ever: dict[str, float] = {}
    rate: dict[str, float] = {}
    for name, monitor in rules.items():
        seen = [alerts(s, monitor) for s in stationary]
        per_check = rate[name] = sum(map(sum, seen)) / checks
        ever[name] = sum(any(a) for a in seen) / args.streams
        figure(f"stationary {name}: share of checks alerting", per_check)
        figure(f"stationary {name}: share of streams ever alerting", ever[name])
        seen = [alerts(s, monitor) for s in at_threshold]
        rate[f"{name} at"] = sum(map(sum, seen)) / checks
        figure(f"at the threshold {name}: share of checks alerting", rate[f"{name} at"])
        figure(
            f"at the threshold {name}: share of streams ever alerting",
            sum(any(a) for a in seen) / args.streams,
        )
        delays = []
        for s in drifting:
            after = alerts(s, monitor)[drift_at:]
            if any(after):
                delays.append(after.index(True) + 1)
        figure(
            f"drifting {name}: share of streams alerting after the drop", len(delays) / args.streams
        )
        if delays:
            figure(f"drifting {name}: mean runs from the drop to the alert", float(np.mean(delays)))
    worst = max(rate["anytime"], rate["anytime at"])
    ratio("anytime false-alert rate (checks, worst stream) / level", worst / args.level)


if __name__ == "__main__":
    main()
