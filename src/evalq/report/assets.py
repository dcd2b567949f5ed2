"""The page's stylesheet and script, inlined into every report (no network, no CDN).

The script sorts the leaderboard by a clicked column and links a row to its marks in the plots on
hover. It leaves two attributes on ``<html>`` for the browser test, never shown on the page:
``data-marks`` (the marks drawn) and ``data-overflowing`` (tables wider than their box).
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """\
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto;
  max-width: 1340px; padding: 0 16px; color: #1f2933; background: #fff; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 32px; }
.meta { color: #52606d; margin: 0 0 16px; }
.note { color: #52606d; font-size: 13px; }
table { border-collapse: collapse; font-size: 13px; width: 100%; }
th, td { border-bottom: 1px solid #e4e7eb; padding: 4px 6px; text-align: left; }
td { white-space: nowrap; } th { white-space: normal; vertical-align: bottom; }
.sub { color: #52606d; }
td.wrap { white-space: normal; overflow-wrap: anywhere; min-width: 110px; }
td:last-child { white-space: normal; min-width: 120px; }
#verdict { border: 1px solid #cbd2d9; border-radius: 6px; padding: 4px 16px 12px; }
#verdict h2 { margin-top: 12px; } .verdict-line, .answer { font-size: 15px; }
.verdict-table { width: auto; min-width: 50%; }
td.gate { font-weight: 700; text-transform: uppercase; } td.gate.pass { color: #2f7d32; }
td.gate.blocked { color: #b3261e; } ul.reasons { margin: 0; padding-left: 18px; }
td.verdict { font-weight: 700; } td.verdict.worth-it { color: #2f7d32; }
td.verdict.not-worth-it { color: #b3261e; } td.verdict.inconclusive { color: #52606d; }
.scroll { overflow-x: auto; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
th { cursor: pointer; user-select: none; background: #f5f7fa; position: sticky; top: 0; }
th[aria-sort="ascending"]::after { content: " \25B2"; }
th[aria-sort="descending"]::after { content: " \25BC"; }
tr.hl td { background: #fff3c4; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 16px; }
figure { margin: 0; } figcaption { font-weight: 600; margin-bottom: 4px; }
svg.plot { max-width: 100%; height: auto; font-size: 11px; }
svg .axis, svg .tick, svg .cap, svg .whisker, svg .zero { stroke: #323f4b; stroke-width: 1; }
svg .whisker { stroke-width: 2; } svg .gridline { stroke: #e4e7eb; }
svg .axis-label { font-size: 12px; fill: #323f4b; } svg .tick-label { fill: #52606d; }
svg.histogram .bar, svg .legend-bar, svg .bar.count { fill: #4e79a7; }
svg .ci-band { fill: #f28e2b; opacity: 0.18; } svg .legend-band { opacity: 0.4; }
svg .mean { stroke: #e15759; stroke-width: 2; } svg .mean-dot { fill: #e15759; }
svg .bar.up { fill: #59a14f; } svg .bar.down { fill: #e15759; }
svg .undefined { fill: #7b8794; font-style: italic; }
svg .point { stroke: #fff; stroke-width: 1; opacity: 0.9; }
.rank-interval { color: #52606d; }
.not-separable { color: #8a5a00; font-weight: 700; text-decoration: none; cursor: help; }
svg .hl, svg .point.hl { stroke: #111; stroke-width: 2; opacity: 1; }
"""

SCRIPT = """\
(function () {
  "use strict";
  var table = document.getElementById("leaderboard");

  function cellValue(row, index) {
    var cell = row.cells[index];
    var raw = cell.getAttribute("data-value");
    if (raw === null) {
      return cell.textContent;
    }
    return raw === "" ? Number.NEGATIVE_INFINITY : Number(raw);
  }

  function sortBy(header, index) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var descending = header.getAttribute("aria-sort") !== "descending";
    rows.sort(function (a, b) {
      var x = cellValue(a, index);
      var y = cellValue(b, index);
      var order = x < y ? -1 : x > y ? 1 : 0;
      return descending ? -order : order;
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.removeAttribute("aria-sort");
    });
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
    rows.forEach(function (row) {
      body.appendChild(row);
    });
  }

  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
    th.addEventListener("click", function () {
      sortBy(th, index);
    });
  });

  // Hovering a leaderboard row highlights that submission's marks in every plot, and back.
  function highlight(sid, on) {
    document.querySelectorAll("[data-sid]").forEach(function (el) {
      if (el.getAttribute("data-sid") === sid) {
        el.classList.toggle("hl", on);
      }
    });
  }

  document.querySelectorAll("[data-sid]").forEach(function (el) {
    var sid = el.getAttribute("data-sid");
    el.addEventListener("mouseenter", function () {
      highlight(sid, true);
    });
    el.addEventListener("mouseleave", function () {
      highlight(sid, false);
    });
  });

  var root = document.documentElement;
  var marks = document.querySelectorAll("svg .bar, svg .point, svg .interval").length;
  root.setAttribute("data-marks", String(marks));
  var overflowing = [];
  document.querySelectorAll(".scroll").forEach(function (box) {
    if (box.scrollWidth > box.clientWidth + 1) {
      overflowing.push(box.firstElementChild.id);
    }
  });
  root.setAttribute("data-overflowing", overflowing.join(" "));
  root.setAttribute("data-ready", "true");
})();
"""


def script_hash() -> str:
    """The CSP source (``'sha256-...'``) that allows exactly `SCRIPT` to run."""
    digest = hashlib.sha256(SCRIPT.encode()).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"
