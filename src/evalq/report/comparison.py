"""The report's comparison section: what `evalq compare` prints, as HTML, from the same object.

For a Scylla task: the variant analysis (per-metric uplift over the baseline and step by step,
each with its interval and verdict, the best-value variant) and the tests of each variant
against the baseline. For a suite: the models compared scenario by scenario. For the other
kinds, a pointer to comparing across tasks, since one task alone pairs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalq.read.compare import CompareReport
from evalq.read.report_data import ReportData
from evalq.read.variants import VariantsAnalysis, VariantStep
from evalq.report.svg import esc
from evalq.scoring.worth import METRICS
from evalq.stats.bootstrap import UpliftInterval


def _table(table_id: str, heads: Sequence[str], rows: Sequence[str]) -> str:
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in heads)
    return (
        f'<div class="scroll"><table id="{table_id}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _interval(i: UpliftInterval | None) -> str:
    if i is None or i.uplift is None:
        return '<td class="num">-</td>'
    bounds = "" if i.low is None or i.high is None else f" [{i.low:+.1%}, {i.high:+.1%}]"
    return f'<td class="num">{i.uplift:+.1%}{esc(bounds)}</td>'


def _difference(t: VariantStep) -> str:
    d = t.difference
    if d is None:
        return '<td class="num">-</td><td class="num">-</td>'
    p = "-" if t.adjusted_p is None else f"{t.adjusted_p:.3g}"
    return (
        f'<td class="num">{d.mean_difference:+.4f} [{d.low:+.4f}, {d.high:+.4f}]</td>'
        f'<td class="num">{p}</td>'
    )


def _steps(table_id: str, steps: Sequence[VariantStep], analysis: VariantsAnalysis) -> str:
    method = analysis.bootstrap
    rows = [
        f'<tr data-step="{esc(t.source)}-{esc(t.target)}" data-verdict="{esc(t.verdict)}">'
        f"<td>{esc(t.source)} &rarr; {esc(t.target)}</td>"
        + _difference(t)
        + f'<td class="verdict {esc(t.verdict.replace(" ", "-"))}" title="{esc(t.reason)}">'
        f"{esc(t.verdict)}</td>"
        + "".join(_interval(t.uplift.get(m)) for m in METRICS)
        + '<td class="num">'
        + ("-" if t.cost_of_pass_delta is None else f"{t.cost_of_pass_delta:+.4f}")
        + "</td></tr>"
        for t in steps
    ]
    ci = f"[{method.level:.0%} CI]"
    heads = (
        "step", f"mean composite difference [{percent(method.step_level)} interval]",
        f"{method.correction} p", "verdict", f"median uplift {ci}",
        f"pass rate {ci}", f"impl rate {ci}", f"cost {ci}", "cost of pass change (USD)",
    )  # fmt: skip
    return _table(table_id, heads, rows)


def percent(level: float) -> str:
    """A level as a percentage without false precision (95%, 99.17%)."""
    return f"{100 * level:.4g}%"


def variant_analysis(analysis: VariantsAnalysis) -> str:
    """The verdict between any two variants, over the baseline, step by step, the best value."""
    report, method = analysis, analysis.bootstrap
    parts = []
    if report.best_value is not None and report.frontier_cost_of_pass is not None:
        parts.append(
            f'<p class="verdict-line" id="best-value">Best value: <strong>'
            f"{esc(report.best_value)}</strong>, at the frontier cost of pass of "
            f"{report.frontier_cost_of_pass:.4f} USD"
            + (
                ""
                if analysis.best_value_share is None
                else f"; it is the best value in {analysis.best_value_share:.1%} of "
                f"{method.resamples} bootstrap resamples of each variant's runs"
            )
            + ".</p>"
        )
    if analysis.over_baseline:
        parts.append(f"<h3>Each variant over {esc(report.baseline)}</h3>")
        parts.append(_steps("over-baseline", analysis.over_baseline, analysis))
    if analysis.transitions:
        parts.append("<h3>Step by step</h3>")
        parts.append(_steps("transitions", analysis.transitions, analysis))
    if analysis.pairs:
        parts.append("<h3>Any two variants</h3>")
        parts.append(_steps("pairs", analysis.pairs, analysis))
    parts.append(
        '<p class="note">The verdict on two variants is the two-sample permutation test (of '
        "Welch's t) of their runs' mean composites (the test the comparisons below use), "
        f"corrected with {esc(method.correction)} over every pair ({method.steps} tests) at alpha "
        f"{method.alpha:g}, so identical variants show a verdict anywhere on the ladder at most "
        f"{method.alpha:.0%} of the time. Beside it is that test inverted: the differences it "
        f"does not reject, at {percent(method.step_level)} (the level the family was judged "
        "at), so it lies above zero exactly when the step is <em>worth it</em>, below zero when "
        "<em>not worth it</em>, and holds zero when <em>inconclusive</em>. The uplifts are "
        "spec 003's relative changes (pass rate: of the mean; the others: of the median) with "
        f"percentile bootstrap intervals ({method.resamples} resamples, seed {method.seed}); "
        "they decide nothing. A median of pass/fail-shaped runs jumps between its two modes, so "
        "the median's uplift can clear zero where the means do not differ clearly, or the "
        "reverse; the cost is shown beside the verdict, never folded into it.</p>"
    )
    return "".join(parts)


def _tests(comparison: CompareReport) -> str:
    result = comparison
    rows = []
    for c in result.comparisons:
        d, e = c.difference, c.effect
        n = f"{c.pairs} pairs" if c.pairs else f"{c.n_reference} vs {c.n_other}"
        mcnemar = "-" if c.mcnemar is None else f"{c.mcnemar.p_value:.3g}"
        wilcoxon = "-" if c.signed_rank is None else f"{c.signed_rank.p_value:.3g}"
        if d is None or e is None or c.test is None or c.adjusted_p is None:
            figures = '<td class="num">-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td>'
        else:
            figures = (
                f'<td class="num">{d.mean_difference:+.3g} [{d.low:+.3g}, {d.high:+.3g}]</td>'
                f"<td>{esc(c.test.test)}</td><td class=num>{c.test.p_value:.3g}</td>"
                f"<td class=num>{c.adjusted_p:.3g}</td><td class=num>{wilcoxon}</td>"
                f'<td class="num">{e.delta:+.2f} [{e.low:+.2f}, {e.high:+.2f}]</td>'
            )
        rows.append(
            f'<tr data-other="{esc(c.other)}" data-design="{c.design}">'
            f"<td>{esc(c.other)}</td><td>{esc(c.design)}</td><td class=num>{esc(n)}</td>"
            + figures
            + f'<td class="num">{mcnemar}</td><td class="wrap">{esc(c.conclusion)}'
            + "".join(f"<br><small>{esc(note)}</small>" for note in c.notes if note != c.conclusion)
            + "</td></tr>"
        )
    level = f"{result.level:.0%}"
    interval = f"difference [{percent(result.interval_level)} interval of the test]"
    heads = (
        "compared with " + result.reference, "design", "n", interval, "test",
        "p", f"{result.correction} p", "Wilcoxon p", f"Cliff's delta [{level} CI]", "McNemar p",
        "conclusion",
    )  # fmt: skip
    named = "" if comparison.by == "variant" else " " + " ".join(result.groups)
    command = f"evalq compare {','.join(comparison.tasks)} --by {comparison.by}{named}"
    note = (
        f'<p class="note">Differences are other minus {esc(result.reference)} in '
        f"{esc(comparison.score)}; pairs are {esc(comparison.unit)}s. p-values corrected "
        f"with {esc(result.correction)} at alpha {result.alpha:g} over {result.tests} test(s)"
        + (" (every pair of variants, as the ladder above)" if result.family == "all pairs" else "")
        + ". Each difference's interval is its test (a permutation test of the mean difference) "
        f"inverted at {percent(result.interval_level)}, the level the correction judged it at: "
        "it excludes 0 exactly when the comparison is rejected. Cliff's delta (how often one "
        "side scores higher) is a bootstrap interval and decides nothing. Same numbers as "
        f"<code>{esc(command)}</code> (docs/statistics.md says which test is used when).</p>"
    )
    return _table("comparisons", heads, rows) + note


def comparison_section(data: ReportData) -> str:
    """``<section id="compare">``: the task's comparison, or how to compare across tasks."""
    comparison = data.comparison
    if comparison is None and data.comparison_note:
        body = f'<p class="note">Not comparable: {esc(data.comparison_note)}.</p>'
    elif comparison is None:
        body = (
            '<p class="note">One task pairs nothing: compare models over the tasks they share '
            "with <code>evalq compare 'TASK-*' --by model A B</code> (or "
            "<code>GET /v1/compare</code>).</p>"
        )
    else:
        body = ""
        if comparison.variants is not None:
            body += variant_analysis(comparison.variants)
        body += f"<h3>Tests by {esc(comparison.by)}</h3>" + _tests(comparison)
    return f'<section id="compare"><h2>Comparisons</h2>{body}</section>'
