"""Reports of the bundled examples, rendered by a real headless Chromium.

The examples go through the real pipeline (Redis db 10, an embedded worker, a SQLite store);
`evalq report` writes the page; Chromium loads it from disk with networking off, runs its script
and dumps the resulting DOM, and its console log must stay empty.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from tests.support.another_run import another_run
from tests.support.databases import migrate_store, private_redis
from tests.support.monitor import MONITOR_REDIS_DB
from tests.support.processes import PATIENCE
from tests.support.settings import configure, pipeline_settings
from tests.support.tools import required_program
from typer.testing import CliRunner

from evalq.core.schemas import Submission
from evalq.producer.cli import EXAMPLES
from evalq.producer.cli import app as cli
from evalq.producer.files import read_jsonl, read_tasks
from evalq.service.client import Client
from evalq.tasks.merge import refresh_baseline
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker

ARENA, SCYLLA = "arena-frontend-dark-mode", "scylla-token-bucket"
PEERREAD, SUITE = "peerread-salience-gating", "suite-refund-agent"
KINDS = {ARENA: "arena", SCYLLA: "scylla", PEERREAD: "peerread", SUITE: "suite"}
WINDOW = "--window-size=1400,1000"  # the width no table may overflow
SCRIPT_TOOL = '<script>document.title="pwned"</script>'
IMG_MODEL = "\"'><img src=x onerror=\"document.title='pwned'\">"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--enable-logging=stderr",
    "--v=0",
    "--hide-scrollbars",
)


def chromium() -> str:
    """The Chromium binary; fails in CI (.ci/run installs it), skips locally when missing."""
    return required_program("chromium", "apt-get install chromium")


@dataclass
class Rendered:
    dom: str
    console: list[str]


def render_in_chromium(page: Path, tmp: Path) -> Rendered:
    """Load ``page`` in a fresh headless Chromium 1400 px wide; its DOM after scripts ran, its
    console lines."""
    profile = tmp / f"profile-{page.stem}"
    done = subprocess.run(
        [
            chromium(),
            *CHROMIUM_FLAGS,
            WINDOW,
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120 * PATIENCE,
        check=True,
    )
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return Rendered(done.stdout, console)


def screenshot(page: Path, tmp: Path) -> Path:
    """A PNG of the whole top of ``page`` (1400 x 4000 px) in the test's tmp dir, to look at."""
    png = tmp / f"{page.stem}.png"
    subprocess.run(
        [
            chromium(),
            *CHROMIUM_FLAGS,
            "--window-size=1400,4000",
            f"--screenshot={png}",
            f"--user-data-dir={tmp / f'shot-{page.stem}'}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120 * PATIENCE,
        check=True,
    )
    return png


def png_size(png: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    header = png.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")


class Elements(HTMLParser):
    """Every start tag of a document with its attributes, in order."""

    def __init__(self, document: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: dict[str, str] = {}
        self._open_id: str | None = None
        self.feed(document)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k: v or "" for k, v in attrs}
        self.tags.append((tag, attributes))
        self._open_id = attributes.get("id")

    def handle_data(self, data: str) -> None:
        if self._open_id:
            self.text[self._open_id] = self.text.get(self._open_id, "") + data

    def with_class(self, tag: str, css_class: str) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag and css_class in a.get("class", "").split()]

    def svgs(self) -> list[list[tuple[str, dict[str, str]]]]:
        """The elements of each ``svg.plot``, one list per plot."""
        plots: list[list[tuple[str, dict[str, str]]]] = []
        for tag, attrs in self.tags:
            if tag == "svg":
                plots.append([(tag, attrs)])
            elif plots:
                plots[-1].append((tag, attrs))
        return plots


@pytest.fixture(scope="module")
def examples_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Every bundled example evaluated by the pipeline, plus one run with hostile names."""
    tmp = tmp_path_factory.mktemp("report")
    db_url = f"sqlite:///{tmp / 'evalq.db'}"
    migrate_store(db_url)
    tasks = read_tasks(EXAMPLES / "tasks.json")
    submissions: list[Submission] = []
    for path in sorted(EXAMPLES.glob("*.jsonl")):
        good, bad = read_jsonl(path)
        assert not bad
        submissions += [submission for _, submission in good]
    arena_run = next(s for s in submissions if s.task_id == ARENA).model_dump(mode="json")
    # a run of its own under hostile labels: the example relabelled and padded at its usage
    # would be a near-copy, counted once (docs/scoring.md)
    hostile = another_run(arena_run, "hostile-1", "(again, under hostile labels)") | {
        "tool": SCRIPT_TOOL,
        "model": IMG_MODEL,
    }
    submissions.append(Submission.model_validate(hostile))
    with (
        private_redis(MONITOR_REDIS_DB) as redis_url,
        pytest.MonkeyPatch.context() as monkeypatch,
    ):
        configure(monkeypatch, **pipeline_settings(db_url, redis_url))
        app = worker_app()
        client = Client(app=app)
        with embedded_worker(app, concurrency=4):
            for task in tasks:
                client.put_task(task)
            ids = [r.id for r in client.submit_many(submissions)]
            statuses = client.wait(ids, timeout=600 * PATIENCE)
            for task in tasks:
                refresh_baseline(task.id)
        app.close()
        assert set(statuses.values()) == {"done"}, Counter(statuses.values())
        yield db_url
    configure(pytest.MonkeyPatch())


def report(db_url: str, task_id: str, out: Path, fmt: str = "html") -> str:
    """Run `evalq report` against the store; returns the file's text."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        configure(monkeypatch, database_url=db_url)
        result = CliRunner().invoke(cli, ["report", task_id, "-o", str(out), "--format", fmt])
    configure(pytest.MonkeyPatch())
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def expected_marks(data: dict[str, Any]) -> dict[str, int]:
    """How many marks each plot must draw for the report ``data`` (its JSON form)."""
    entries = data["leaderboard"]["entries"]
    costed = [e for e in entries if data["runs"][e["submission_id"]]["cost_usd"] is not None]
    marks = {
        # five dimensions, ten bins each, and the ranking score's ten for a non-Arena kind
        "histogram bars": (5 if data["leaderboard"]["kind"] == "arena" else 6) * 10,
        "breakdown bars": 4 * len(entries),
        "intervals": 5,
        "points": len(costed),
        "uplift bars": 0,
        "recommendation bars": len(data["recommendations"] or {}),
    }
    if data["variants"]:
        marks["uplift bars"] = sum(v is not None for v in data["variants"]["uplift"].values())
    return marks


BAR_KINDS = {
    "histogram": "histogram bars",
    "grouped-bars": "breakdown bars",
    "signed-bars": "uplift bars",
    "count-bars": "recommendation bars",
}


def drawn_marks(page: Elements) -> dict[str, int]:
    counts = Counter[str]()
    for plot in page.svgs():
        kind = plot[0][1]["class"].split()[1]
        for tag, attrs in plot[1:]:
            classes = attrs.get("class", "").split()
            if tag == "rect" and "bar" in classes:
                counts[BAR_KINDS[kind]] += 1
            elif tag == "circle" and "point" in classes:
                counts["points"] += 1
            elif tag == "g" and "interval" in classes:
                counts["intervals"] += 1
    names = ("histogram bars", "breakdown bars", "intervals", "points", *BAR_KINDS.values())
    return {k: counts[k] for k in dict.fromkeys(names)}


def visible_text(dom: str) -> str:
    """The page's text outside its script and stylesheet (and outside every tag)."""
    without_code = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return re.sub(r"<[^>]*>", " ", without_code)


def after_title(page: Elements) -> tuple[str, dict[str, str]]:
    """The first element after the page's ``<h1>`` (which holds only text)."""
    tags = [(t, a) for t, a in page.tags]
    h1 = next(i for i, (t, _) in enumerate(tags) if t == "h1")
    return tags[h1 + 1]


def test_the_harness_sees_console_errors_and_script_effects(tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    page.write_text(
        "<!DOCTYPE html><html><body><p id=out>before</p><script>"
        "document.getElementById('out').textContent = 'after'; missingFunction();"
        "</script></body></html>"
    )
    rendered = render_in_chromium(page, tmp_path)
    assert Elements(rendered.dom).text["out"] == "after"
    assert any("missingFunction is not defined" in line for line in rendered.console)


@pytest.mark.parametrize("task_id", list(KINDS))
def test_the_report_leads_with_the_verdict_and_draws_its_plots_without_console_messages(
    examples_store: str, task_id: str, tmp_path: Path
) -> None:
    page = tmp_path / f"{task_id}.html"
    source = report(examples_store, task_id, page)
    data = json.loads(report(examples_store, task_id, tmp_path / "r.json", "json"))
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", source)  # nothing to fetch
    assert data["leaderboard"]["kind"] == KINDS[task_id]

    rendered = render_in_chromium(page, tmp_path)
    assert rendered.console == []  # no error, no CSP violation, no log at all
    dom = Elements(rendered.dom)
    html_attrs = next(a for t, a in dom.tags if t == "html")
    assert html_attrs.get("data-ready") == "true"  # the page's script ran to its end
    assert after_title(dom) == ("section", {"id": "verdict", "data-kind": KINDS[task_id]})
    assert html_attrs["data-overflowing"] == ""  # no table wider than the page at 1400 px
    expected = expected_marks(data)
    assert drawn_marks(dom) == expected
    assert int(html_attrs["data-marks"]) == sum(expected.values())  # counted by the script
    assert "marks" not in visible_text(rendered.dom)  # the test's counter is not on the page
    rows = [a["data-sid"] for t, a in dom.tags if t == "tr" and "data-sid" in a]
    ranked = [e["submission_id"] for e in data["leaderboard"]["entries"]]
    assert rows[-len(ranked) :] == ranked  # the leaderboard's rows, in rank order
    assert png_size(screenshot(page, tmp_path)) == (1400, 4000)
    check_verdict(task_id, data, rendered.dom)


def verdict_of(dom: str) -> str:
    found = re.search(r'<section id="verdict".*?</section>', dom, re.S)
    assert found is not None
    return found.group(0)


def check_verdict(task_id: str, data: dict[str, Any], dom: str) -> None:
    """What each kind's verdict must say, checked against the JSON report."""
    verdict = verdict_of(dom)
    if task_id == SCYLLA:
        assert set(data["variants"]["uplift"]) == {"T1", "T2", "T3"}
        board = [v["variant"] for v in data["leaderboard"]["variants"]]
        assert re.findall(r'<tr data-variant="(T\d)">', verdict) == board
        steps = {s["target"]: s for s in data["variants"]["over_baseline"]}
        for variant in ("T1", "T2", "T3"):
            interval = data["uplift_intervals"][variant]
            assert interval["low"] <= interval["uplift"] <= interval["high"]
            assert f"{interval['uplift']:+.1%}" in verdict  # spec 003's uplift, a figure
            # beside the verdict, the interval of the test that decides it
            d, decided = steps[variant]["difference"], steps[variant]["verdict"]
            assert f"{d['mean_difference']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}]" in verdict
            assert (d["low"] > 0 or d["high"] < 0) == (decided != "inconclusive")
        assert re.findall(r"<tr><td>(T\d)</td>", dom) == ["T0", "T1", "T2", "T3"]
    elif task_id == SUITE:
        gates = data["suite_gates"]
        states = re.findall(r'<tr data-gate="(pass|blocked)">', verdict)
        assert len(states) == len(gates) > 0
        assert states.count("pass") == sum(g["passed"] for g in gates.values())
        for gate in gates.values():
            for reason in gate["blocking_failures"]:
                assert html.escape(reason) in verdict
    elif task_id == PEERREAD:
        counts = re.findall(
            r'<tr data-recommendation="(\w+)"><td>\w+</td><td class="num">(\d+)', verdict
        )
        assert dict((k, int(v)) for k, v in counts) == data["recommendations"]
        assert sum(data["recommendations"].values()) == len(data["leaderboard"]["entries"])
        entries = len(data["leaderboard"]["entries"])  # the demo runs no judge
        assert f"{entries} of {entries} composites had no judge" in verdict
        assert "cannot tell a review from a summary of the paper" in verdict
    else:
        rows = re.findall(r'<tr data-sid="([^"]+)">', verdict)
        assert rows == [e["submission_id"] for e in data["leaderboard"]["entries"]][:10]


def test_user_strings_are_escaped_in_the_page_and_kept_in_csv(
    examples_store: str, tmp_path: Path
) -> None:
    page = tmp_path / "arena.html"
    report(examples_store, ARENA, page)
    rendered = render_in_chromium(page, tmp_path)
    assert rendered.console == []
    dom = Elements(rendered.dom)
    assert [t for t, _ in dom.tags].count("script") == 1  # only the page's own
    assert not [a for t, a in dom.tags if t == "img"]
    assert "<title>evalq report: arena-frontend-dark-mode</title>" in rendered.dom
    hostile_row = re.search(r'<tr data-sid="hostile-1">(.*?)</tr>', rendered.dom)
    assert hostile_row is not None
    assert '&lt;script&gt;document.title="pwned"&lt;/script&gt;' in hostile_row.group(1)
    assert "&lt;img src=x onerror=" in hostile_row.group(1)

    rows = list(
        csv.DictReader(io.StringIO(report(examples_store, ARENA, tmp_path / "r.csv", "csv")))
    )
    hostile = next(r for r in rows if r["submission_id"] == "hostile-1")
    assert (hostile["tool"], hostile["model"]) == (SCRIPT_TOOL, IMG_MODEL)
    ranked = [int(r["rank"]) for r in rows if r["rank"]]
    assert ranked == sorted(ranked)
    assert all(not r["rank"] for r in rows[len(ranked) :])  # held runs: unranked, last


def test_rank_intervals_are_on_the_page_with_their_note_and_in_the_csv(
    examples_store: str, tmp_path: Path
) -> None:
    """No browser needed: the page's source and the CSV say what the leaderboard's JSON says."""
    scylla = report(examples_store, SCYLLA, tmp_path / "scylla.html")
    data = json.loads(report(examples_store, SCYLLA, tmp_path / "scylla.json", "json"))
    verdict = verdict_of(scylla)
    for variant in data["leaderboard"]["variants"]:
        interval = variant["rank_interval"]
        row = re.search(rf'<tr data-variant="{variant["variant"]}">(.*?)</tr>', verdict)
        assert row is not None
        others = ", ".join(variant["not_separable_from"])
        mark = f' <span class="not-separable">≈</span> {others}' if others else ""
        cell = f'<td class="rank-interval">[{interval["low"]}–{interval["high"]}]{mark}</td>'
        assert row.group(1).endswith(cell)  # the last column of the variant board
    assert 'class="note rank-note"' in verdict and "10000 resamples of each variant" in verdict
    assert "rank-note" not in scylla.replace(verdict, "")  # the runs beneath have no intervals

    suite = report(examples_store, SUITE, tmp_path / "suite.html")
    entries = json.loads(report(examples_store, SUITE, tmp_path / "suite.json", "json"))[
        "leaderboard"
    ]["entries"]
    board = re.search(
        r'<table id="leaderboard">.*?</table></div>(<p class="note rank-note">)', suite
    )
    assert board is not None  # the note follows the table
    for entry in entries:
        interval = entry["rank_interval"]
        row = re.search(rf'<tr data-sid="{entry["submission_id"]}">(<td.*?</td>)', board.group(0))
        assert row is not None
        assert f'<span class="rank-interval">[{interval["low"]}–{interval["high"]}]</span>' in (
            row.group(1)
        )
        assert ('class="not-separable"' in row.group(1)) == bool(entry["not_separable_from"])
    rows = list(
        csv.DictReader(io.StringIO(report(examples_store, SUITE, tmp_path / "s.csv", "csv")))
    )
    assert [(r["rank_low"], r["rank_high"]) for r in rows] == [
        (str(e["rank_interval"]["low"]), str(e["rank_interval"]["high"])) for e in entries
    ]
    assert rows[0]["not_separable_from"] == ""
    assert rows[1]["not_separable_from"] == ";".join(entries[1]["not_separable_from"])


KIND_OWN = {
    ARENA: (),
    SCYLLA: ("scylla_composite", "scylla_grade"),
    SUITE: ("suite_passed", "suite_final_score"),
    PEERREAD: ("peerread", "recommendation"),
}


def csv_text(value: object) -> str:
    """How `csv` writes a JSON value (None as empty)."""
    return "" if value is None else str(value)


@pytest.mark.parametrize("task_id", list(KINDS))
def test_the_csv_leads_with_the_kinds_ranking_score_and_own_columns(
    examples_store: str, task_id: str, tmp_path: Path
) -> None:
    data = json.loads(report(examples_store, task_id, tmp_path / "r.json", "json"))
    text = report(examples_store, task_id, tmp_path / "r.csv", "csv")
    header = text.splitlines()[0].split(",")
    lead = ["rank", "submission_id", "ranking_key", "ranking_value", *KIND_OWN[task_id]]
    assert header[: len(lead)] == lead
    assert len(header) == len(set(header))  # a kind's own column is not repeated after
    assert {"overall", "correctness", "tool", "tier_notes"} <= set(header[len(lead) :])
    rows = list(csv.DictReader(io.StringIO(text)))
    entries = data["leaderboard"]["entries"]
    assert [r["submission_id"] for r in rows] == [e["submission_id"] for e in entries]
    assert {r["ranking_key"] for r in rows} == {data["leaderboard"]["ranking_key"]}
    for row, entry in zip(rows, entries, strict=True):
        assert row["ranking_value"] == csv_text(entry["ranking_value"])
        for column in KIND_OWN[task_id]:
            assert row[column] == csv_text(entry[column])
    if task_id != ARENA:  # the kind's own score is filled, not an empty Arena-shaped column
        assert all(r[KIND_OWN[task_id][0]] for r in rows)
    # the JSON export leads with the same: the kind, what ranks, the tiers that did not run
    assert list(data)[:3] == ["kind", "ranking_key", "tier_notes"]


@pytest.mark.parametrize("task_id", list(KINDS))
def test_a_non_arena_report_plots_the_score_that_ranks(
    examples_store: str, task_id: str, tmp_path: Path
) -> None:
    """No browser needed: the plot's bars (counted in Chromium above) hold every ranked value."""
    page = report(examples_store, task_id, tmp_path / "r.html")
    data = json.loads(report(examples_store, task_id, tmp_path / "r.json", "json"))
    figure = re.search(r'<figure id="ranking-distribution">(.*?)</figure>', page, re.S)
    if task_id == ARENA:  # Arena ranks by overall, already the first distribution
        assert figure is None and "<h2>Score distributions</h2>" in page
        return
    assert "<h2>Arena score distributions (shown for reference; they do not rank" in page
    assert figure is not None
    key = data["leaderboard"]["ranking_key"]
    assert f"<h2>Ranking score: {key}</h2>" in page
    counts = [int(c) for c in re.findall(r'class="bar" data-count="(\d+)"', figure.group(1))]
    values = [
        e["ranking_value"]
        for e in data["leaderboard"]["entries"]
        if e["rank"] is not None and e["ranking_value"] is not None
    ]
    assert len(counts) == 10 and sum(counts) == len(values) > 0
    hi = 1.0 if all(0 <= v <= 1 for v in values) else 100.0
    best = max(values)
    assert counts[min(9, int(best / hi * 10))] >= 1  # the best run's bin is not empty


def test_the_report_and_exports_say_which_tier_did_not_run(
    examples_store: str, tmp_path: Path
) -> None:
    """The demo runs no judge: PeerRead's composite had none, and every export says so."""
    page = report(examples_store, PEERREAD, tmp_path / "p.html")
    data = json.loads(report(examples_store, PEERREAD, tmp_path / "p.json", "json"))
    rows = list(
        csv.DictReader(io.StringIO(report(examples_store, PEERREAD, tmp_path / "p.csv", "csv")))
    )
    entries = data["leaderboard"]["entries"]
    assert all(e["peerread_note"] for e in entries)
    judge_note = next(n for n in data["tier_notes"] if "ranked on the other tiers alone" in n)
    assert judge_note.startswith(f"{len(entries)} of {len(entries)} run(s): no judge ran")
    section = re.search(r'<div id="tier-notes" class="note">(.*?)</div>', page, re.S)
    assert section is not None
    assert html.escape(judge_note) in section.group(1)
    assert page.index('id="tier-notes"') < page.index('id="leaderboard"')  # before the board
    assert all("no judge ran" in r["tier_notes"] for r in rows)

    arena = json.loads(report(examples_store, ARENA, tmp_path / "a.json", "json"))
    assert not any("tiers alone" in n for n in arena["tier_notes"])  # PeerRead's note only


@pytest.mark.parametrize("task_id", list(KINDS))
def test_every_kind_says_the_judge_tier_was_skipped_and_why(
    examples_store: str, task_id: str, tmp_path: Path
) -> None:
    """The demo configures no judge: each stored evaluation names the judge tier as skipped,
    and the report of every kind says so (once, counted over its runs), page and JSON alike."""
    data = json.loads(report(examples_store, task_id, tmp_path / "r.json", "json"))
    page = report(examples_store, task_id, tmp_path / "r.html")
    runs = len(data["leaderboard"]["entries"])
    judge = [g for g in data["tier_gaps"] if g["tier"] == "judge"]
    assert judge == [
        {
            "tier": "judge",
            "status": "skipped",
            "reason": "no judge configured (EVALQ_JUDGE_MODEL unset)",
            "runs": runs,
        }
    ]
    note = (
        f"no judge ran for {runs} of {runs} run(s): no judge configured (EVALQ_JUDGE_MODEL "
        "unset); the score of those runs is computed without its figures."
    )
    assert [n for n in data["tier_notes"] if "judge ran for" in n] == [note]
    section = re.search(r'<div id="tier-notes" class="note">(.*?)</div>', page, re.S)
    assert section is not None and html.escape(note) in section.group(1)
