"""`evalq compare`: is B better than A on these tasks, by how much, how sure."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail

if TYPE_CHECKING:
    from evalq.read.compare import CompareReport
    from evalq.read.variants import VariantsAnalysis, VariantStep
    from evalq.stats.bootstrap import UpliftInterval
    from evalq.stats.contrast import GroupComparison

UNITS_SHOWN = 30
"""Per-unit rows printed before the rest are summarised (all of them are in --json)."""


def _g(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def _signed(value: float, low: float, high: float) -> str:
    return f"{value:+.3g} [{low:+.3g}, {high:+.3g}]"


def _units_table(comparison: CompareReport) -> Table | None:
    result = comparison
    shown = result.units[:UNITS_SHOWN]
    if not shown:
        return None
    table = Table(title=f"{comparison.unit} by {comparison.unit}: mean {comparison.score}")
    table.add_column(comparison.unit, overflow="fold")
    for group in result.groups:
        table.add_column(escape(group), justify="right", overflow="fold")
    two = len(result.groups) == 2
    if two:
        other, reference = escape(result.groups[1]), escape(result.reference)
        table.add_column(f"{other} - {reference}", justify="right")
    for unit in shown:
        cells = [_g(unit.values.get(g), 4) for g in result.groups]
        if two:
            a, b = (unit.values.get(g) for g in result.groups)
            cells.append("-" if a is None or b is None else f"{b - a:+.3g}")
        table.add_row(escape(unit.unit), *cells)
    return table


def _row(c: GroupComparison) -> list[str]:
    d, e = c.difference, c.effect
    n = f"{c.pairs} pairs" if c.pairs else f"{c.n_reference} vs {c.n_other}"
    if d is None or e is None or c.test is None or c.adjusted_p is None:
        return [escape(c.other), c.design, n, "-", "-", "-", "-", "-", "-"]
    return [
        escape(c.other),
        c.design,
        n,
        _signed(d.mean_difference, d.low, d.high),
        f"{c.test.test.split(' ')[0].removesuffix('-u')} p={c.test.p_value:.3g}",
        f"{c.adjusted_p:.3g}",
        "-" if c.signed_rank is None else f"{c.signed_rank.p_value:.3g}",
        _signed(e.delta, e.low, e.high),
        "-" if c.mcnemar is None else f"{c.mcnemar.p_value:.3g}",
    ]


def level_words(level: float) -> str:
    """A level as a percentage without false precision (95%, 99.17%)."""
    return f"{100 * level:.4g}%"


def _comparisons_table(comparison: CompareReport) -> Table:
    result = comparison
    level = f"{result.level:.0%}"
    table = Table(title=f"compared with {escape(result.reference)} (differences: other - it)")
    interval = f"difference [{level_words(result.interval_level)} interval of the test]"
    heads = ("other", "design", "n", interval, "test", "adj. p")
    for head in (*heads, "Wilcoxon p", f"Cliff's delta [{level} CI]", "McNemar p"):
        table.add_column(head, overflow="fold")
    for c in result.comparisons:
        table.add_row(*_row(c))
    return table


def _interval(i: UpliftInterval | None) -> str:
    if i is None or i.uplift is None:
        return "-"
    if i.low is None or i.high is None:
        return f"{i.uplift:+.0%}"
    return f"{i.uplift:+.0%} [{i.low:+.0%}, {i.high:+.0%}]"


def _steps_table(title: str, steps: list[VariantStep], analysis: VariantsAnalysis) -> Table:
    table = Table(title=title)
    method = analysis.bootstrap
    table.add_column("step", overflow="fold")
    table.add_column(f"mean composite [{level_words(method.step_level)}]", overflow="fold")
    table.add_column("adj. p", overflow="fold")
    table.add_column("verdict", no_wrap=True)
    heads = ("median uplift", "pass rate", "impl rate", "cost", "cost/pass")
    for head in heads:
        table.add_column(head, overflow="fold")
    for t in steps:
        d = t.difference
        table.add_row(
            f"{escape(t.source)} -> {escape(t.target)}",
            "-" if d is None else _signed(d.mean_difference, d.low, d.high),
            _g(t.adjusted_p),
            t.verdict,
            *(_interval(t.uplift.get(m)) for m in ("composite", "pass_rate", "impl_rate")),
            _interval(t.uplift.get("cost_usd")),
            "-" if t.cost_of_pass_delta is None else f"{t.cost_of_pass_delta:+.4f}",
        )
    table.caption = (
        "verdict: the permutation test of the mean composites (as the comparisons above), "
        f"{method.correction} over the {method.steps} pairs at alpha {method.alpha:g}; its "
        "interval beside it; the uplifts (spec 003: relative change, the median's for the "
        f"composite) decide nothing, {method.level:.0%} bootstrap intervals; cost/pass: "
        "change in USD"
    )
    return table


def _variants(analysis: VariantsAnalysis) -> None:
    report = analysis
    table = Table(title="variants (spec 003)")
    for head in ("variant", "runs", "pass rate", "median", "consistency", "cost", "cost/pass"):
        table.add_column(head, justify="right" if head != "variant" else "left")
    for v in report.variants:
        cop = v.cost_of_pass
        table.add_row(
            escape(v.variant),
            str(v.runs),
            _g(v.pass_rate.mean if v.pass_rate else None),
            _g(v.composite.median if v.composite else None),
            _g(v.consistency),
            _g(v.cost_usd.median if v.cost_usd else None, 4),
            "-" if cop is None else "never passes" if math.isinf(cop) else f"{cop:.4f}",
        )
    console.print(table)
    if report.best_value is not None and report.frontier_cost_of_pass is not None:
        held, resamples = analysis.best_value_share, analysis.bootstrap.resamples
        console.print(
            f"best value: {escape(report.best_value)} (frontier cost of pass "
            f"{report.frontier_cost_of_pass:.4f} USD"
            + ("" if held is None else f"; best in {held:.1%} of {resamples} resamples")
            + ")",
            highlight=False,
        )
    if analysis.over_baseline:
        console.print(_steps_table(f"over {report.baseline}", analysis.over_baseline, analysis))
    if analysis.transitions:
        console.print(_steps_table("step by step", analysis.transitions, analysis))
    shown = {(t.source, t.target) for t in analysis.over_baseline + analysis.transitions}
    others = [t for t in analysis.pairs if (t.source, t.target) not in shown]
    if others:
        console.print(_steps_table("every other pair", others, analysis))
    # the run plans (short of a plan, tickets pending, not pre-registered): what the verdicts
    # above stand on, said as the report and the board say it
    for note in analysis.run_plans:
        console.print(f"run plans: {escape(note)}", highlight=False)


def print_comparison(comparison: CompareReport) -> None:
    """The comparison as tables: the per-unit values, the tests, the variant analysis."""
    result = comparison
    paired = any(c.pairs for c in result.comparisons)
    pairs = f"pairs are {comparison.unit}s" if paired else "nothing pairs"
    console.print(
        f"comparing by {escape(comparison.by)} over {len(comparison.tasks)} task(s) "
        f"({comparison.kind}, score {comparison.score}); {pairs}; "
        f"reference {escape(result.reference)}",
        highlight=False,
    )
    if comparison.not_evaluated:
        names = ", ".join(comparison.not_evaluated)
        console.print(f"no evaluations yet, left out: {escape(names)}", highlight=False)
    units = _units_table(comparison)
    if units is not None:
        console.print(units)
        more = len(result.units) - UNITS_SHOWN
        if more > 0:
            console.print(f"... {more} more {comparison.unit}s in --json", highlight=False)
    console.print(_comparisons_table(comparison))
    for c in result.comparisons:
        console.print(f"{escape(c.other)}: {escape(c.conclusion)}", highlight=False)
    said = {c.conclusion for c in result.comparisons}
    for note in dict.fromkeys(n for c in result.comparisons for n in c.notes if n not in said):
        console.print(f"note: {escape(note)}", highlight=False)
    for note in result.notes:  # a range note is in every withheld conclusion already
        if not any(note in conclusion for conclusion in said):
            console.print(f"note: {escape(note)}", highlight=False)
    for left in comparison.left_out:
        console.print(
            f"left out: {left.count} of {escape(left.group)} ({left.reason})",
            highlight=False,
        )
    console.print(
        f"{result.correction} correction at alpha {result.alpha:g} over {result.tests} test(s)"
        + (
            " (every pair of variants, as the variant ladder)"
            if result.family == "all pairs"
            else ""
        )
        + "; each difference's interval is its test inverted at "
        f"{level_words(result.interval_level)} (it excludes 0 exactly when the test is "
        "rejected); Cliff's delta: bootstrap, "
        f"{result.resamples} resamples, seed {result.seed}; --json for every figure",
        highlight=False,
    )
    if comparison.variants is not None:
        _variants(comparison.variants)


def compare_command(
    tasks: Annotated[
        str, typer.Argument(help="A task id, ids separated by commas, or a glob ('arena-*').")
    ],
    by: Annotated[str, typer.Option("--by", help="model, tool, variant or metadata.KEY.")],
    values: Annotated[
        list[str] | None,
        typer.Argument(help="The groups, the reference first (by variant: all when omitted)."),
    ] = None,
    correction: Annotated[
        str, typer.Option(help="holm, benjamini-hochberg or none (several comparisons).")
    ] = "holm",
    seed: Annotated[
        int,
        typer.Option(min=0, max=2**32 - 1, help="Seed of every bootstrap and Monte Carlo draw."),
    ] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    include_held: Annotated[
        bool,
        typer.Option(
            "--include-held",
            help="Compare the runs held for review too (by default left out and counted).",
        ),
    ] = False,
) -> None:
    """Compare groups of submissions over the tasks (or suite scenarios) they share."""
    from evalq.read import served
    from evalq.store.db import read_scope

    if correction not in ("holm", "benjamini-hochberg", "none"):
        raise typer.BadParameter("one of holm, benjamini-hochberg, none", param_hint="--correction")
    try:
        with read_scope() as session:
            comparison = served.comparison(
                session,
                tasks=tasks,
                by=by,
                values=values or [],
                correction=correction,  # type: ignore[arg-type]
                seed=seed,
                include_held=include_held,
            )
    except EvalqError as error:
        fail(error)
    if as_json:
        console.print_json(json.dumps(comparison.model_dump(mode="json")))
    else:
        print_comparison(comparison)
        if comparison.judge_break is not None:
            console.print(comparison.judge_break, markup=False, highlight=False)
        if comparison.judge_validation is not None:
            for line in comparison.judge_validation.lines():
                console.print(line, markup=False, highlight=False)
