"""`evalq compare` over the bundled examples: the numbers the leaderboard ranks by, paired over
the tasks the groups share, and the variant analysis of the Scylla example."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import select, update
from typer.testing import CliRunner

from evalq.core.errors import InvalidInput
from evalq.core.schemas import Task
from evalq.producer.cli import app
from evalq.read.compare import LeftOut, compare
from evalq.read.leaderboard import leaderboard
from evalq.read.report_data import report_data
from evalq.report import render
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.models import EvaluationRow, SubmissionRow

ARENA = ["arena-data-sales-summary", "arena-debug-flaky-date-parser", "arena-frontend-dark-mode"]


def test_by_model_pairs_the_arena_tasks_both_models_ran_with_the_leaderboard_s_scores(
    store: str,
) -> None:
    with session_scope(store) as session:
        result = compare(session, tasks="arena-*", by="model", values=["claude-sonnet-4", "o3"])
        boards = {t: leaderboard(session, task_id=t) for t in ARENA}
    assert result.tasks == list(ARENA) and result.unit == "task"
    assert result.ranking_key == "arena_overall_unadjusted"
    for unit in result.units:  # a model's value on a task: the mean of its entries
        for model, value in unit.values.items():
            scores = [
                e.ranking_value
                for e in boards[unit.unit].entries
                if e.model == model and e.ranking_value is not None
            ]
            assert value == pytest.approx(sum(scores) / len(scores))
    (o3,) = result.comparisons
    differences = [u.values["o3"] - u.values["claude-sonnet-4"] for u in result.units]
    assert all(d < 0 for d in differences)  # o3 is behind on every task ...
    # ... but 3 pairs are too few for an interval or a verdict to mean what it says
    assert (o3.design, o3.pairs) == ("too few", 3)
    assert o3.difference is None and o3.test is None and not o3.rejected
    assert o3.conclusion == "too few shared tasks to compare (n=3; at least 5)"


def test_by_variant_on_the_scylla_example_carries_uplift_intervals_and_verdicts(
    store: str,
) -> None:
    with session_scope(store) as session:
        result = compare(session, tasks="scylla-token-bucket", by="variant")
    assert result.groups == ["T0", "T1", "T2", "T3"]  # the baseline first
    assert all(c.design == "unpaired" for c in result.comparisons)  # repeat runs
    assert all(c.n_reference == 10 and c.n_other == 10 for c in result.comparisons)
    analysis = result.variants
    assert analysis is not None
    steps = {t.target: t for t in analysis.over_baseline}
    assert set(steps) == {"T1", "T2", "T3"}
    # one family: the six pairs of T0..T3, in the ladder and in the tests by variant alike
    assert analysis.bootstrap.steps == result.tests == 6 and result.family == "all pairs"
    for c in result.comparisons:
        step = steps[c.other]
        d = step.difference
        assert d is not None and c.difference is not None
        assert (d.low > 0 or d.high < 0) == (step.verdict != "inconclusive") == c.rejected
        assert (d.mean_difference, d.low, d.high) == pytest.approx(
            (c.difference.mean_difference, c.difference.low, c.difference.high)
        )
        assert step.adjusted_p == pytest.approx(c.adjusted_p)
        interval = step.uplift["composite"]  # spec 003's uplift of the median: a figure
        assert interval.low is not None and interval.high is not None
    # T3 over T0: p = 0.011 alone, but one of six questions asked at once (Holm): inconclusive,
    # though the median's uplift interval clears zero (a median of bimodal runs jumps)
    assert steps["T3"].p_value is not None and steps["T3"].p_value < 0.05
    assert steps["T3"].verdict == "inconclusive"
    assert [(t.source, t.target) for t in analysis.transitions] == [
        ("T0", "T1"),
        ("T1", "T2"),
        ("T2", "T3"),
    ]
    # T3 passes most often but costs more per pass than T2 (examples/README.md)
    assert analysis.best_value == "T2"
    # ... but only in about half of the resamples of the runs: it is said with that share
    assert analysis.best_value_share is not None and 0.3 < analysis.best_value_share < 0.7


def test_a_suite_pairs_scenarios(store: str) -> None:
    with session_scope(store) as session:
        result = compare(
            session, tasks="suite-refund-agent", by="model", values=["claude-sonnet-4", "gpt-4o"]
        )
    assert result.unit == "scenario"
    assert all(u.unit.startswith("suite-refund-agent/") for u in result.units)
    (c,) = result.comparisons
    assert c.design == "paired" and c.pairs == len(result.units) >= 2


@pytest.mark.parametrize(
    ("kwargs", "field", "rule"),
    [
        ({"tasks": "nope-*", "by": "model"}, "tasks", "no task matches 'nope-*'"),
        ({"tasks": "arena-*,peerread-*", "by": "model", "values": ["gpt-4o", "o3"]}, "tasks",
         "rank by different scores"),
        ({"tasks": "arena-*", "by": "colour"}, "by", "model, tool, variant"),
        ({"tasks": "arena-*", "by": "metadata.-x"}, "by", "metadata key"),
        ({"tasks": "arena-*", "by": "model", "values": ["o3"]}, "values", "two or more"),
        ({"tasks": "arena-*", "by": "model", "values": ["o3", "gpt-9"]}, "values", "gpt-9"),
    ],
)  # fmt: skip
def test_bad_requests_name_the_field_and_the_rule(
    store: str, kwargs: dict[str, object], field: str, rule: str
) -> None:
    with session_scope(store) as session, pytest.raises(InvalidInput) as caught:
        compare(session, **kwargs)  # type: ignore[arg-type]
    ((named, said),) = caught.value.problems
    assert named == field and rule in said


def test_the_cli_json_and_the_report_show_the_same_numbers(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALQ_DATABASE_URL", store)
    runner = CliRunner()
    done = runner.invoke(app, ["compare", "scylla-token-bucket", "--by", "variant", "--json"])
    assert done.exit_code == 0, done.output
    printed = json.loads(done.output)
    with session_scope(store) as session:
        data = report_data(session, task_id="scylla-token-bucket")
        direct = compare(session, tasks="scylla-token-bucket", by="variant")
    assert printed == json.loads(json.dumps(direct.model_dump(mode="json")))
    assert data.comparison is not None
    assert data.comparison.model_dump(mode="json") == direct.model_dump(mode="json")
    page = render(data, "html")
    for step in printed["variants"]["over_baseline"]:
        d = step["difference"]
        shown = f"{d['mean_difference']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}]"
        assert shown in page  # in the verdict's board and in the comparison section
        assert f'data-step="T0-{step["target"]}" data-verdict="{step["verdict"]}"' in page
        composite = step["uplift"]["composite"]
        assert f"{composite['uplift']:+.1%} [{composite['low']:+.1%}" in page
    text = runner.invoke(app, ["compare", "scylla-token-bucket", "--by", "variant"]).output
    assert "inconclusive" in text and "best value: T2" in text


def test_the_cli_refuses_a_bad_request_in_one_line(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALQ_DATABASE_URL", store)
    done = CliRunner().invoke(app, ["compare", "arena-*", "--by", "model", "o3"])
    assert done.exit_code != 0
    assert "values" in done.output and "two or more" in done.output


def test_the_cli_says_too_few_shared_tasks_once_per_group(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # it printed each conclusion, then the same words again as a note
    monkeypatch.setenv("EVALQ_DATABASE_URL", store)
    done = CliRunner().invoke(
        app, ["compare", "arena-*", "--by", "model", "claude-sonnet-4", "gpt-4o"]
    )
    assert done.exit_code == 0, done.output
    said = [line for line in done.output.splitlines() if "too few shared tasks" in line]
    assert said == ["gpt-4o: too few shared tasks to compare (n=3; at least 5)"]


def copy_of(store: str, tmp_path: Path) -> str:
    """A copy of the examples' SQLite store that a test may change (SQLite's backup API: the
    store runs in WAL mode, so its file alone may lack the latest pages)."""
    copy = tmp_path / "copy.db"
    with (
        closing(sqlite3.connect(store.removeprefix("sqlite:///"))) as source,
        closing(sqlite3.connect(copy)) as target,
    ):
        source.backup(target)
    return f"sqlite:///{copy}"


def test_variants_with_only_partial_runs_drop_out_of_a_default_comparison_and_the_report(
    store: str, tmp_path: Path
) -> None:
    url = copy_of(store, tmp_path)
    with session_scope(url) as session:
        t1 = [row.id for row in session.scalars(select(SubmissionRow)) if row.variant == "T1"]
        session.execute(
            update(EvaluationRow)
            .where(EvaluationRow.submission_id.in_(t1))
            .values(status="degraded")
        )
    with session_scope(url) as session:
        result = compare(session, tasks="scylla-token-bucket", by="variant")
        data = report_data(session, task_id="scylla-token-bucket")
        with pytest.raises(InvalidInput) as named:  # named by the user: still refused
            compare(session, tasks="scylla-token-bucket", by="variant", values=["T0", "T1"])
    assert result.groups == ["T0", "T2", "T3"]
    assert LeftOut(group="T1", reason="partial evaluation", count=10) in result.left_out
    assert data.comparison is not None and data.comparison.groups == ["T0", "T2", "T3"]
    assert 'id="compare"' in render(data, "html")
    assert named.value.problems[0][0] == "values"


def test_a_task_without_evaluations_is_left_out_of_a_glob_and_said(
    store: str, tmp_path: Path
) -> None:
    url = copy_of(store, tmp_path)
    with session_scope(url) as session:
        queries.put_task(session, task=Task(id="scylla-zz-empty"))
    with session_scope(url) as session:
        result = compare(session, tasks="scylla-*", by="variant")
        with pytest.raises(InvalidInput) as caught:
            compare(session, tasks="scylla-zz-*", by="variant")
    assert result.tasks == ["scylla-token-bucket"]
    assert result.not_evaluated == ["scylla-zz-empty"]
    assert caught.value.problems == [("tasks", "no evaluated submission in ['scylla-zz-empty']")]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"correction": "bonferroni"}, "correction"),
        ({"alpha": 1.5}, "alpha"),
        ({"level": 0.0}, "level"),
        ({"resamples": 0}, "resamples"),
        ({"seed": -1}, "seed"),
    ],
)
def test_method_arguments_are_checked_by_name(
    store: str, kwargs: dict[str, object], field: str
) -> None:
    with session_scope(store) as session, pytest.raises(InvalidInput) as caught:
        compare(session, tasks="scylla-token-bucket", by="variant", **kwargs)  # type: ignore[arg-type]
    assert caught.value.problems[0][0] == field


def test_the_cli_refuses_a_negative_seed_as_a_usage_error(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALQ_DATABASE_URL", store)
    done = CliRunner().invoke(
        app, ["compare", "scylla-token-bucket", "--by", "variant", "--seed", "-1"]
    )
    assert done.exit_code == 2 and "--seed" in done.output
