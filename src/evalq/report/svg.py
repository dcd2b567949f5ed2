"""Inline SVG plots: histogram, grouped bars, intervals, scatter, signed bars.

Every function returns one ``<svg>`` element as a string. Every piece of text that reaches the
markup goes through `esc` (labels come from submissions: tool and model names are user input).
Marks carry ``data-sid`` so the page's script can link them to leaderboard rows.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

WIDTH = 720
PALETTE = (  # Tableau 10
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1",
    "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac",
)  # fmt: skip


def esc(value: object) -> str:
    """``value`` as text safe in element content and quoted attributes."""
    return html.escape(str(value), quote=True)


def num(value: float) -> str:
    """A coordinate with two decimals (short markup, no exponent)."""
    return f"{value:.2f}"


@dataclass(frozen=True)
class Scale:
    """Linear map of [lo, hi] onto [start, end] (pixels); a zero-width domain maps to the middle."""

    lo: float
    hi: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        if self.hi == self.lo:
            return (self.start + self.end) / 2
        return self.start + (value - self.lo) / (self.hi - self.lo) * (self.end - self.start)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi] (1, 2 or 5 times a power of ten apart)."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def tick_label(value: float) -> str:
    """A tick value without trailing zeros."""
    return f"{value:.4g}"


def _svg(height: float, title: str, body: list[str], css_class: str) -> str:
    return (
        f'<svg class="plot {esc(css_class)}" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {WIDTH} {num(height)}" width="{WIDTH}" height="{num(height)}" '
        f'role="img" aria-label="{esc(title)}"><title>{esc(title)}</title>{"".join(body)}</svg>'
    )


def _x_axis(scale: Scale, y: float, label: str, ticks: Sequence[float]) -> list[str]:
    parts = [
        f'<line class="axis" x1="{num(scale.start)}" x2="{num(scale.end)}" '
        f'y1="{num(y)}" y2="{num(y)}"/>'
    ]
    for t in ticks:
        x = scale(t)
        parts.append(
            f'<line class="tick" x1="{num(x)}" x2="{num(x)}" y1="{num(y)}" y2="{num(y + 4)}"/>'
            f'<text class="tick-label" x="{num(x)}" y="{num(y + 16)}" text-anchor="middle">'
            f"{esc(tick_label(t))}</text>"
        )
    parts.append(
        f'<text class="axis-label" x="{num((scale.start + scale.end) / 2)}" y="{num(y + 32)}" '
        f'text-anchor="middle">{esc(label)}</text>'
    )
    return parts


def _y_axis(
    scale: Scale, x: float, label: str, ticks: Sequence[float], right: float = WIDTH - 20
) -> list[str]:
    parts = [
        f'<line class="axis" x1="{num(x)}" x2="{num(x)}" '
        f'y1="{num(scale.start)}" y2="{num(scale.end)}"/>'
    ]
    for t in ticks:
        y = scale(t)
        parts.append(
            f'<line class="gridline" x1="{num(x)}" x2="{num(right)}" y1="{num(y)}" y2="{num(y)}"/>'
            f'<text class="tick-label" x="{num(x - 6)}" y="{num(y + 4)}" text-anchor="end">'
            f"{esc(tick_label(t))}</text>"
        )
    middle = (scale.start + scale.end) / 2
    parts.append(
        f'<text class="axis-label" x="14" y="{num(middle)}" text-anchor="middle" '
        f'transform="rotate(-90 14 {num(middle)})">{esc(label)}</text>'
    )
    return parts


def histogram(
    values: Sequence[float],
    *,
    title: str,
    x_label: str,
    lo: float = 0.0,
    hi: float = 100.0,
    bins: int = 10,
    band: tuple[float, float, float] | None = None,
    band_label: str = "confidence interval of the mean",
) -> str:
    """Counts of ``values`` in ``bins`` equal bins over [lo, hi] (one ``rect.bar`` per bin).

    ``band`` = (mean, low, high) draws the mean as a line over a shaded confidence band; a
    legend above the plot names the bars, the line and the band (``band_label``).
    """
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int((v - lo) / (hi - lo) * bins)))] += 1
    return binned_histogram(
        counts, title=title, x_label=x_label, lo=lo, hi=hi, band=band, band_label=band_label
    )


def binned_histogram(
    counts: Sequence[int],
    *,
    title: str,
    x_label: str,
    lo: float = 0.0,
    hi: float = 100.0,
    band: tuple[float, float, float] | None = None,
    band_label: str = "confidence interval of the mean",
) -> str:
    """`histogram` of counts already binned (``len(counts)`` equal bins over [lo, hi]), as a
    database counts them without returning the values."""
    bins = len(counts)
    height, top, bottom, left = 262.0, 38.0, 218.0, 56.0
    x = Scale(lo, hi, left, WIDTH - 20)
    y = Scale(0, max(1, max(counts)), bottom, top)
    counts_ticks = [t for t in nice_ticks(0, max(1, max(counts)), 4) if t == int(t)]
    body = _y_axis(y, left, "submissions (count)", counts_ticks)
    body += histogram_legend(left, f"submissions per {(hi - lo) / bins:.4g}-point bin", band_label)
    if band is not None:
        _, low, high = band
        body.append(
            f'<rect class="ci-band" x="{num(x(low))}" y="{num(top)}" '
            f'width="{num(max(1.0, x(high) - x(low)))}" height="{num(bottom - top)}">'
            f"<title>{esc(f'confidence interval {low:.2f} to {high:.2f}')}</title></rect>"
        )
    step = (hi - lo) / bins
    for i, count in enumerate(counts):
        x0, x1 = x(lo + i * step), x(lo + (i + 1) * step)
        label = f"{lo + i * step:.4g} to {lo + (i + 1) * step:.4g}: {count}"
        body.append(
            f'<rect class="bar" data-count="{count}" x="{num(x0 + 1)}" y="{num(y(count))}" '
            f'width="{num(x1 - x0 - 2)}" height="{num(bottom - y(count))}">'
            f"<title>{esc(label)}</title></rect>"
        )
    if band is not None:
        body.append(
            f'<line class="mean" x1="{num(x(band[0]))}" x2="{num(x(band[0]))}" '
            f'y1="{num(top)}" y2="{num(bottom)}"><title>{esc(f"mean {band[0]:.2f}")}</title></line>'
        )
    body += _x_axis(x, bottom, x_label, nice_ticks(lo, hi))
    return _svg(height, title, body, "histogram")


def histogram_legend(left: float, bars: str, band: str) -> list[str]:
    """The swatches above a histogram: its bars, the mean line and the confidence band."""
    y = 10.0
    bar_w = 7 * len(bars) + 30
    return [
        f'<g class="legend"><rect class="legend-bar" x="{num(left)}" y="{num(y)}" width="12" '
        f'height="10"/><text x="{num(left + 16)}" y="{num(y + 9)}">{esc(bars)}</text>'
        f'<line class="mean" x1="{num(left + bar_w)}" x2="{num(left + bar_w + 14)}" '
        f'y1="{num(y + 5)}" y2="{num(y + 5)}"/>'
        f'<text x="{num(left + bar_w + 18)}" y="{num(y + 9)}">mean</text>'
        f'<rect class="ci-band legend-band" x="{num(left + bar_w + 60)}" y="{num(y)}" width="14"'
        f' height="10"/><text x="{num(left + bar_w + 78)}" y="{num(y + 9)}">{esc(band)}</text>'
        "</g>"
    ]


def count_bars(items: Sequence[tuple[str, int]], *, title: str, x_label: str) -> str:
    """Horizontal bars of counts (``rect.bar``, one per item), the count written beside each."""
    row_h, top, left = 28.0, 12.0, 120.0
    height = top + row_h * len(items) + 44
    reach = max([c for _, c in items] + [1])
    x = Scale(0, reach * 1.1, left, WIDTH - 20)
    body: list[str] = []
    for i, (label, count) in enumerate(items):
        y = top + i * row_h
        body.append(
            f'<text class="row-label" x="{num(left - 8)}" y="{num(y + row_h / 2 + 4)}" '
            f'text-anchor="end">{esc(label)}</text>'
            f'<rect class="bar count" data-count="{count}" x="{num(left)}" y="{num(y + 5)}" '
            f'width="{num(max(1.0, x(count) - left))}" height="{num(row_h - 10)}">'
            f"<title>{esc(f'{label}: {count}')}</title></rect>"
            f'<text class="value" x="{num(max(left + 1, x(count)) + 4)}" '
            f'y="{num(y + row_h / 2 + 4)}">{count}</text>'
        )
    ticks = [t for t in nice_ticks(0, reach * 1.1, 4) if t == int(t)]
    body += _x_axis(x, top + row_h * len(items), x_label, ticks)
    return _svg(height, title, body, "count-bars")


@dataclass(frozen=True)
class BarRow:
    """One group of bars: a label (e.g. a submission) and a value per series."""

    label: str
    sid: str
    values: dict[str, float]


def grouped_bars(
    rows: Sequence[BarRow], series: Sequence[str], *, title: str, lo: float = 0, hi: float = 100
) -> str:
    """Horizontal bars, one group per row and one bar per series (``rect.bar``)."""
    bar_h, gap, top, left = 7.0, 8.0, 30.0, 220.0
    group_h = bar_h * len(series) + gap
    height = top + group_h * len(rows) + 44
    x = Scale(lo, hi, left, WIDTH - 20)
    body: list[str] = []
    for j, name in enumerate(series):  # legend
        body.append(
            f'<rect class="legend" x="{num(left + j * 110)}" y="6" width="10" height="10" '
            f'fill="{PALETTE[j % len(PALETTE)]}"/><text x="{num(left + j * 110 + 14)}" y="15">'
            f"{esc(name)}</text>"
        )
    for i, row in enumerate(rows):
        y0 = top + i * group_h
        body.append(
            f'<g class="group" data-sid="{esc(row.sid)}">'
            f'<text class="row-label" x="{num(left - 6)}" '
            f'y="{num(y0 + bar_h * len(series) / 2 + 4)}" text-anchor="end">{esc(row.label)}</text>'
        )
        for j, name in enumerate(series):
            value = row.values[name]
            body.append(
                f'<rect class="bar" data-sid="{esc(row.sid)}" data-series="{esc(name)}" '
                f'x="{num(left)}" y="{num(y0 + j * bar_h)}" '
                f'width="{num(max(0.0, x(value) - left))}" '
                f'height="{num(bar_h - 1)}" fill="{PALETTE[j % len(PALETTE)]}">'
                f"<title>{esc(f'{row.label} {name}: {value:.2f}')}</title></rect>"
            )
        body.append("</g>")
    body += _x_axis(x, top + group_h * len(rows), "score (0 to 100)", nice_ticks(lo, hi))
    return _svg(height, title, body, "grouped-bars")


@dataclass(frozen=True)
class IntervalRow:
    """A mean with its confidence interval; ``enough_data`` False draws a dashed full range."""

    label: str
    mean: float | None
    low: float
    high: float
    enough_data: bool


def intervals(rows: Sequence[IntervalRow], *, title: str, lo: float = 0, hi: float = 100) -> str:
    """One whisker per row (``g.interval``) with a dot at the mean."""
    row_h, top, left = 30.0, 12.0, 120.0
    height = top + row_h * len(rows) + 44
    x = Scale(lo, hi, left, WIDTH - 20)
    body: list[str] = []
    for i, row in enumerate(rows):
        y = top + i * row_h + row_h / 2
        dashed = "" if row.enough_data else ' stroke-dasharray="4 3"'
        note = (
            f"mean {row.mean:.2f}, interval {row.low:.2f} to {row.high:.2f}"
            if row.enough_data and row.mean is not None
            else "not enough data (fewer than 3 scores)"
        )
        body.append(
            f'<g class="interval" data-enough="{str(row.enough_data).lower()}">'
            f"<title>{esc(f'{row.label}: {note}')}</title>"
            f'<text class="row-label" x="{num(left - 8)}" y="{num(y + 4)}" text-anchor="end">'
            f"{esc(row.label)}</text>"
            f'<line class="whisker" x1="{num(x(row.low))}" x2="{num(x(row.high))}" y1="{num(y)}"'
            f' y2="{num(y)}"{dashed}/>'
            f'<line class="cap" x1="{num(x(row.low))}" x2="{num(x(row.low))}" y1="{num(y - 6)}" '
            f'y2="{num(y + 6)}"/><line class="cap" x1="{num(x(row.high))}" '
            f'x2="{num(x(row.high))}" y1="{num(y - 6)}" y2="{num(y + 6)}"/>'
        )
        if row.mean is not None:
            body.append(f'<circle class="mean-dot" cx="{num(x(row.mean))}" cy="{num(y)}" r="4"/>')
        body.append("</g>")
    body += _x_axis(x, top + row_h * len(rows), "score (0 to 100)", nice_ticks(lo, hi))
    return _svg(height, title, body, "intervals")


@dataclass(frozen=True)
class Point:
    """One scatter point."""

    x: float
    y: float
    sid: str
    label: str
    group: str = ""


def scatter(
    points: Sequence[Point], *, title: str, x_label: str, y_label: str, y_range: tuple[float, float]
) -> str:
    """A ``circle.point`` per point, coloured by group; x spans the data, y is fixed."""
    height, top, bottom, left = 300.0, 16.0, 252.0, 56.0
    groups = sorted({p.group for p in points})
    colour = {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(groups)}
    xs = [p.x for p in points] or [0.0]
    pad = (max(xs) - min(xs)) * 0.05 or max(abs(max(xs)) * 0.1, 1e-3)
    legend = [g for g in groups if g]
    right = WIDTH - (170 if legend else 28)  # the legend sits right of the plot area
    x = Scale(max(0.0, min(xs) - pad), max(xs) + pad, left + 8, right)
    y = Scale(y_range[0], y_range[1], bottom, top)
    body = _y_axis(y, left, y_label, nice_ticks(*y_range), right)
    body += _x_axis(x, bottom, x_label, nice_ticks(x.lo, x.hi))
    for p in points:
        body.append(
            f'<circle class="point" data-sid="{esc(p.sid)}" cx="{num(x(p.x))}" cy="{num(y(p.y))}" '
            f'r="5" fill="{colour[p.group]}"><title>{esc(p.label)}</title></circle>'
        )
    for i, group in enumerate(legend):
        body.append(
            f'<circle class="legend" cx="{right + 24}" cy="{num(top + 6 + i * 14)}" r="4" '
            f'fill="{colour[group]}"/><text x="{right + 34}" y="{num(top + 10 + i * 14)}">'
            f"{esc(group)}</text>"
        )
    return _svg(height, title, body, "scatter")


LABEL_PX = 6.6
"""Width of one character of a row label, for the margin the labels need (12 px sans-serif)."""


def signed_bars(
    items: Sequence[tuple[str, float | None]],
    *,
    title: str,
    x_label: str,
    unit: Literal["fraction", "points"] = "fraction",
) -> str:
    """Bars left or right of zero (``rect.bar``); a None value is written "undefined".

    Args:
        items: (row label, value) pairs, drawn top to bottom.
        title: The plot's accessible title.
        x_label: The axis label.
        unit: ``fraction``: a value is a relative change, printed as a percentage (0.1 is
            "+10.0%"); ``points``: a difference on the score's own scale, printed as a signed
            number (7.17 is "+7.17").
    """
    row_h, top = 28.0, 12.0
    longest = max((len(label) for label, _ in items), default=0)
    fits = min(longest, int((WIDTH / 2 - 16) / LABEL_PX))  # label characters: up to half the plot
    left = max(120.0, 16 + LABEL_PX * fits)
    height = top + row_h * len(items) + 44
    values = [v for _, v in items if v is not None]
    reach = max([abs(v) for v in values] + [0.05]) * 1.15
    shown = "{:+.1%}" if unit == "fraction" else "{:+.2f}"
    # each side keeps room for a value printed beyond its bar: the longest bar's value would
    # otherwise run into the row labels (left) or past the plot's edge (right)
    room = 4 + LABEL_PX * max((len(shown.format(v)) for v in values), default=0)
    x = Scale(-reach, reach, left + room, WIDTH - 20 - room)
    body: list[str] = []
    for i, (label, value) in enumerate(items):
        y = top + i * row_h
        short = label if len(label) <= fits else "\u2026" + label[-(fits - 1) :]
        body.append(
            f'<text class="row-label" x="{num(left - 8)}" y="{num(y + row_h / 2 + 4)}" '
            f'text-anchor="end"><title>{esc(label)}</title>{esc(short)}</text>'
        )
        if value is None:
            body.append(
                f'<text class="undefined" x="{num(x(0) + 6)}" y="{num(y + row_h / 2 + 4)}">'
                "undefined (baseline score is 0 or missing)</text>"
            )
            continue
        x0, x1 = sorted((x(0), x(value)))
        sign = "up" if value >= 0 else "down"
        printed = shown.format(value)
        body.append(
            f'<rect class="bar {sign}" x="{num(x0)}" y="{num(y + 5)}" '
            f'width="{num(max(1.0, x1 - x0))}" height="{num(row_h - 10)}">'
            f"<title>{esc(f'{label}: {printed}')}</title></rect>"
            f'<text class="value" x="{num(x1 + 4 if value >= 0 else x0 - 4)}" '
            f'y="{num(y + row_h / 2 + 4)}" text-anchor="{"start" if value >= 0 else "end"}">'
            f"{esc(printed)}</text>"
        )
    zero = x(0)
    body.append(
        f'<line class="zero" x1="{num(zero)}" x2="{num(zero)}" y1="{num(top)}" '
        f'y2="{num(top + row_h * len(items))}"/>'
    )
    ticks = nice_ticks(-reach, reach, 4)
    body += _x_axis(x, top + row_h * len(items), x_label, ticks)
    return _svg(height, title, body, "signed-bars")
