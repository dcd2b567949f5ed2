"""Signed bars print each value in its own unit, and the labels fit beside them."""

from __future__ import annotations

import re

from evalq.read.compare import CompareReport
from evalq.report.svg import signed_bars
from evalq.stats.contrast import UnitValues
from evalq.ui.compare import difference_plot


def printed(svg: str) -> list[str]:
    return re.findall(r'<text class="value"[^>]*>([^<]*)</text>', svg)


def test_a_relative_change_prints_as_a_percentage() -> None:
    svg = signed_bars([("T1", 0.125), ("T2", -0.05)], title="uplift", x_label="uplift")
    assert printed(svg) == ["+12.5%", "-5.0%"]


def test_a_difference_in_points_prints_as_points_not_a_percentage() -> None:
    # the compare page showed differences of -7.17 / +11.29 points as "-716.8%" / "+1129.1%"
    svg = signed_bars(
        [("a", -7.17), ("b", 11.29), ("c", 4.78)], title="d", x_label="d", unit="points"
    )
    assert printed(svg) == ["-7.17", "+11.29", "+4.78"]
    assert "%" not in "".join(printed(svg))


def test_a_long_label_widens_the_margin_and_is_never_cut_on_the_left() -> None:
    name = "arena-debug-flaky-date-parser"  # 29 characters: past the old 120 px margin
    svg = signed_bars([(name, 1.0)], title="d", x_label="d", unit="points")
    label = re.search(
        r'<text class="row-label" x="([\d.]+)"[^>]*><title>([^<]*)</title>([^<]*)', svg
    )
    assert label is not None
    right_edge, full, shown = float(label.group(1)), label.group(2), label.group(3)
    assert full == shown == name
    assert right_edge >= 6.6 * len(name)  # the whole label fits left of its anchor


def test_the_longest_bar_s_value_keeps_clear_of_the_row_labels_and_the_plot_s_edge() -> None:
    # the compare page drew "-11.29" over "arena-debug-flaky-date-parser": the value of the
    # longest negative bar ended left of where the row labels end
    name = "arena-debug-flaky-date-parser"
    svg = signed_bars(
        [("arena-data-sales-summary", 7.17), (name, -11.29), ("arena-frontend-dark-mode", -4.78)],
        title="d",
        x_label="d",
        unit="points",
    )
    labels_end = max(float(x) for x in re.findall(r'<text class="row-label" x="([\d.]+)"', svg))
    values = re.findall(
        r'<text class="value" x="([\d.]+)"[^>]*text-anchor="(start|end)">([^<]*)</text>', svg
    )
    assert len(values) == 3
    for x, anchor, text in values:
        width = 6.6 * len(text)
        if anchor == "end":  # a negative bar's value, left of it
            assert float(x) - width > labels_end, (text, x, labels_end)
        else:
            assert float(x) + width <= 720, (text, x)


def test_a_label_longer_than_half_the_plot_keeps_its_end_and_its_whole_name_in_a_title() -> None:
    name = "suite-" + "x" * 120 + "-refund-agent"
    svg = signed_bars([(name, 1.0)], title="d", x_label="d", unit="points")
    label = re.search(r'<text class="row-label"[^>]*><title>([^<]*)</title>([^<]*)', svg)
    assert label is not None and label.group(1) == name
    assert label.group(2).startswith("\u2026") and label.group(2).endswith("-refund-agent")


def report(groups: list[str]) -> CompareReport:
    units = [
        UnitValues(unit="task-a", values={"ref": 70.0, "m1": 62.83, "m2": 75.5}),
        UnitValues(unit="task-b", values={"ref": 50.0, "m1": 61.29}),
    ]
    return CompareReport.model_construct(
        groups=groups, reference="ref", units=units, unit="task", score="arena_overall"
    )


def test_the_compare_plot_draws_every_group_against_the_reference_in_points() -> None:
    svg = difference_plot(report(["ref", "m1", "m2"]))
    assert svg.count("<svg") == 2  # one plot per group compared, not the first only
    assert "m1 - ref per task" in svg and "m2 - ref per task" in svg
    assert printed(svg) == ["-7.17", "+11.29", "+5.50"]
    assert difference_plot(report(["ref"])) == ""
