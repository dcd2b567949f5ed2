"""A calibrated judge cascade on simulated judges: calls saved, agreement, how often the bound held.

Simulated, so the truth is known (no public labelled set of judge outputs is bundled): each item
is a pairwise preference with a person's label (the truth, flipped for ``--label-noise`` of the
items), and an easiness e ~ U(0, 1). A judge level answers ``--samples`` times; each sample is
right with probability ``0.5 + 0.5 e^a`` (a = 2.0 cheap, 0.6 middle, 0.15 top: one sample is
right ~67%, ~81%, ~93% of the time), its verdict is the samples' majority and its confidence the
majority's share (`evalq.judge.calibration.sample_agreement`). A call of the cheap, middle and
top level costs 1, 4 and 20.

Over ``--splits`` random calibration/test splits of a pool of ``--items``, the cascade is
calibrated (`calibrate`, alpha, delta) on ``--calibration`` labelled items and run on the rest:
each test item climbs the levels until one is confident enough, or is left "judge uncertain".
Printed: the judge cost and calls against asking the top level alone, the share decided per
level, the agreement of the decided items with the held-out labels against the target 1 - alpha,
and the share of splits where the bound held (measured on the test half, and on a fresh
population of ``--population`` items, which is the true risk up to ~0.1 points) against 1 - delta.

``--labelled FILE`` runs on real judgments instead: a JSONL in the format `evalq judge calibrate`
reads (one item per line, ``{"levels": [{"confidence": c, "agreed": bool}, ...]}``, cheapest level
first), e.g. ``bench/data/trust_or_escalate_calibration.jsonl`` (Mistral-7B, GPT-3.5 and GPT-4
judging 500 pairwise preferences against people's, from "Trust or Escalate"; bench/data/README.md).
For each alpha of ``--alphas``, over ``--draws`` random draws of ``--calibration`` labelled items,
the cascade is calibrated on the draw and run on the whole file (the population: its risk is
exact). Printed per alpha: the share decided (coverage), the agreement of the decided items, the
cost against the top level alone (``--costs``, default 1:10:100; a level calibration never trusts
is left off the route and costs nothing, `Calibration.untrusted`; the cost with it kept is printed
beside), how often each level was untrusted, and the share of draws where the bound held
(population agreement of the decided >= 1 - alpha; a draw deciding nothing holds). Both the
default search start and ``--baseline-start`` are run on the same draws.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _common import figure, parse_args, ratio

from evalq.judge.calibration import START_SHARE, Calibration, Judgment, calibrate, search_plan

EXPONENTS = (2.0, 0.6, 0.15)
COSTS = (1.0, 4.0, 20.0)


@dataclass(frozen=True)
class Pool:
    """Per item: the person's label, and per level its verdict's confidence and agreement."""

    confidence: np.ndarray  # items x levels
    agreed: np.ndarray  # items x levels, bool


def simulate(items: int, samples: int, noise: float, rng: np.random.Generator) -> Pool:
    """Items judged by every level (the calibration set is judged by all of them)."""
    truth = rng.integers(0, 2, size=items)
    label = np.where(rng.random(items) < noise, 1 - truth, truth)
    easiness = rng.random(items)
    confidence = np.empty((items, len(EXPONENTS)))
    agreed = np.empty((items, len(EXPONENTS)), dtype=bool)
    for level, exponent in enumerate(EXPONENTS):
        right = 0.5 + 0.5 * easiness**exponent
        correct = (rng.random((items, samples)) < right[:, None]).sum(axis=1)
        majority_right = correct * 2 > samples
        ties = correct * 2 == samples
        majority_right = np.where(ties, rng.random(items) < 0.5, majority_right)
        verdict = np.where(majority_right, truth, 1 - truth)
        confidence[:, level] = np.maximum(correct, samples - correct) / samples
        agreed[:, level] = verdict == label
    return Pool(confidence, agreed)


def run_cascade(
    pool: Pool,
    calibration: Calibration,
    costs: tuple[float, ...] = COSTS,
    *,
    skip_untrusted: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Per item: the level that decided (-1: judge uncertain), and the cost of the levels asked
    (with ``skip_untrusted``, a level calibration never trusts is not asked, as the live cascade
    does; the top level is always asked: its scores stand for the undecided)."""
    decided = np.full(len(pool.confidence), -1)
    cost = np.zeros(len(pool.confidence))
    open_items = np.ones(len(pool.confidence), dtype=bool)
    top = len(calibration.levels) - 1
    for level in calibration.levels:
        if level.threshold is None and skip_untrusted and level.level != top:
            continue
        cost[open_items] += costs[level.level]
        if level.threshold is None:
            continue
        trusted = open_items & (pool.confidence[:, level.level] >= level.threshold)
        decided[trusted] = level.level
        open_items &= ~trusted
    return decided, cost


def agreement(pool: Pool, decided: np.ndarray) -> float | None:
    """Agreement of the decided items' verdicts with the labels; None when none was decided."""
    chosen = decided >= 0
    if not chosen.any():
        return None
    rows = np.flatnonzero(chosen)
    return float(pool.agreed[rows, decided[rows]].mean())


def load_labelled(path: Path) -> Pool:
    """A file in `evalq judge calibrate`'s format as a pool (every item has every level)."""
    confidence, agreed = [], []
    for line in path.read_text().splitlines():
        if line.strip():
            levels = json.loads(line)["levels"]
            confidence.append([float(level["confidence"]) for level in levels])
            agreed.append([bool(level["agreed"]) for level in levels])
    return Pool(np.array(confidence), np.array(agreed, dtype=bool))


def real_judges(args: argparse.Namespace) -> int:
    """The ``--labelled`` mode: calibrate on draws of real labelled judgments, test on all."""
    pool = load_labelled(Path(args.labelled))
    items, levels = pool.confidence.shape
    costs = tuple(float(c) for c in args.costs.split(","))
    if len(costs) != levels:
        raise SystemExit(f"--costs: {levels} levels in {args.labelled}, {len(costs)} costs given")
    alphas = [float(a) for a in args.alphas.split(",")]
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    draws = [rng.choice(items, size=args.calibration, replace=False) for _ in range(args.draws)]
    print(
        f"{args.draws} draws of {args.calibration} labelled items from {items} real judgments "
        f"({args.labelled}), {levels} levels, costs {args.costs}, delta {args.delta}; risk on "
        f"all {items} items"
    )
    for level in range(levels):
        figure(f"level {level} agreement alone, every item", float(pool.agreed[:, level].mean()))
    held_at: dict[float, float] = {}
    for alpha in alphas:
        plan = search_plan(pool.confidence.tolist(), alpha=alpha, delta=args.delta)
        starts = ", ".join(f"{p.start:.4f} ({p.may_decide})" for p in plan if p.start is not None)
        print(f"-- alpha {alpha}: search starts (items at or above, all {items}): {starts}")
        for start_share, name in ((args.start_share, "start"), (args.baseline_start, "base")):
            rows = []
            for draw in draws:
                labelled = [
                    [
                        Judgment(float(c), bool(a))
                        for c, a in zip(pool.confidence[i], pool.agreed[i], strict=True)
                    ]
                    for i in draw
                ]
                calibration = calibrate(
                    labelled, alpha=alpha, delta=args.delta, start_share=start_share
                )
                decided, cost = run_cascade(pool, calibration, costs, skip_untrusted=True)
                _, kept_cost = run_cascade(pool, calibration, costs)
                achieved = agreement(pool, decided)
                rows.append(
                    (
                        float((decided >= 0).mean()),
                        achieved,
                        float(cost.mean() / costs[-1]),
                        float(kept_cost.mean() / costs[-1]),
                        achieved is None or achieved >= 1 - alpha,
                        [level.threshold is None for level in calibration.levels],
                    )
                )
            label = f"alpha {alpha} {name} {start_share:g}"
            agreements = [r[1] for r in rows if r[1] is not None]
            figure(f"{label}: coverage (share decided)", float(np.mean([r[0] for r in rows])))
            figure(
                f"{label}: agreement of the decided",
                float(np.mean(agreements)) if agreements else float("nan"),
            )
            figure(f"{label}: cost / top alone", float(np.mean([r[2] for r in rows])))
            figure(
                f"{label}: cost / top alone, untrusted kept", float(np.mean([r[3] for r in rows]))
            )
            untrusted = np.mean([r[5] for r in rows], axis=0)
            for level, share in enumerate(untrusted):
                figure(f"{label}: level {level} untrusted, share of draws", float(share))
            held = float(np.mean([r[4] for r in rows]))
            figure(f"{label}: bound held, share of draws", held)
            if name == "start":
                held_at[alpha] = held
    print(f"{time.perf_counter() - started:.1f} s")
    shown = 0.15 if 0.15 in held_at else alphas[0]
    ratio(
        f"draws where the bound held at alpha {shown} (needs >= {1 - args.delta:g})", held_at[shown]
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labelled", help="JSONL of real judgments (see the module docstring).")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--alphas", default="0.10,0.15,0.20")
    parser.add_argument("--costs", default="1,10,100")
    parser.add_argument("--start-share", type=float, default=START_SHARE)
    parser.add_argument("--baseline-start", type=float, default=0.1)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--calibration", type=int, default=None)
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--population", type=int, default=200_000)
    parser.add_argument("--samples", type=int, default=7)
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--label-noise", type=float, default=0.03)
    parser.add_argument("--seed", type=int, default=0)
    args = parse_args(parser, quick={"items": 3000, "splits": 10, "population": 20_000, "draws": 5})
    if args.labelled:
        args.calibration = args.calibration or 250
        return real_judges(args)
    args.calibration = args.calibration or 1_000
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    pool = simulate(args.items, args.samples, args.label_noise, rng)
    population = simulate(args.population, args.samples, args.label_noise, rng)
    target = 1 - args.alpha
    rows = []
    for _ in range(args.splits):
        order = rng.permutation(args.items)
        cal, test = order[: args.calibration], order[args.calibration :]
        labelled = [
            [
                Judgment(float(c), bool(a))
                for c, a in zip(pool.confidence[i], pool.agreed[i], strict=True)
            ]
            for i in cal
        ]
        calibration = calibrate(labelled, alpha=args.alpha, delta=args.delta)
        held_out = Pool(pool.confidence[test], pool.agreed[test])
        decided, cost = run_cascade(held_out, calibration)
        decided_pop, _ = run_cascade(population, calibration)
        rows.append(
            (
                agreement(held_out, decided),
                agreement(population, decided_pop),
                float((decided >= 0).mean()),
                float(cost.mean()),
                [float((decided == level).mean()) for level in range(len(EXPONENTS))],
            )
        )
    top_only = float(pool.agreed[:, -1].mean())
    top_cost = COSTS[-1]
    held_test = np.mean([a is None or a >= target for a, *_ in rows])
    held_true = np.mean([a is None or a >= target for _, a, *_ in rows])
    achieved = np.array([a for a, *_ in rows if a is not None])
    coverage = np.mean([row[2] for row in rows])
    cost = np.mean([row[3] for row in rows])
    shares = np.mean([row[4] for row in rows], axis=0)
    print(
        f"{args.splits} splits of {args.items} simulated items ({args.calibration} calibration "
        f"labels each), {args.samples} samples per level, alpha {args.alpha}, delta "
        f"{args.delta}, label noise {args.label_noise}; {time.perf_counter() - started:.1f} s"
    )
    figure("agreement of the top level alone, every item", round(top_only, 4))
    figure("target agreement 1 - alpha", round(target, 4))
    figure("cascade agreement on held-out labels: mean", round(float(achieved.mean()), 4))
    figure(
        "cascade agreement on held-out labels: 5th percentile",
        round(float(np.quantile(achieved, 0.05)), 4),
    )
    figure("share of splits where the bound held, on the test half", round(float(held_test), 3))
    figure(
        "share of splits where the bound held, true risk (population)",
        round(float(held_true), 3),
    )
    figure("required share 1 - delta", round(1 - args.delta, 3))
    figure("items decided (not 'judge uncertain')", round(float(coverage), 4))
    for name, share, alone in zip(
        ("cheap", "middle", "top"), shares, pool.agreed.mean(axis=0), strict=True
    ):
        figure(f"decided by the {name} level (its agreement on every item: {alone:.3f})", share)
    figure("judge cost per item, cascade (cost units; top alone: 20)", round(float(cost), 3))
    figure("judge calls saved in cost units vs the top level alone", round(1 - cost / top_cost, 3))
    ratio("cascade judge cost / top-level-only judge cost", round(float(cost / top_cost), 3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
