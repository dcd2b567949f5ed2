"""A submitter who wants a better number, replayed on the bundled examples: each attack is a
copy of the demo store with one change, compared with the unmodified boards. Either no rank or
verdict moves, or the board, the comparison and the report say what happened.

Near-copies: runs of one agent that repeat an earlier run's output, trace and evidence with
every usage figure nudged by under 2% count once, like exact copies (docs/scoring.md).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import markupsafe
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import bindparam, text
from tests.integration.read.test_copies import SCYLLA, add_runs, examples
from tests.integration.read.test_held_runs import copy_of
from tests.support.settings import configure
from tests.support.ui import sign_in
from typer.testing import CliRunner

from evalq.core.schemas import Submission, Usage
from evalq.core.settings import Settings
from evalq.producer.api.app import create_app
from evalq.producer.cli import app
from evalq.read.compare import NEAR, compare
from evalq.read.leaderboard import NEAR_COPY, leaderboard
from evalq.read.report_data import report_data
from evalq.read.reports import variant_report
from evalq.read.served import refresh_task
from evalq.read.usage import SELF_REPORTED, usage_note
from evalq.report.page import render_html
from evalq.scoring.plausible import IMPLAUSIBLY_FAST
from evalq.scoring.review import COPIED_OUTPUT, USAGE_BELOW_TRACE
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.keys import create_key
from evalq.tasks.merge import refresh_baseline


def nudged(run: Submission, i: int, **changes: Any) -> Submission:
    """``run`` under a new id with ``i`` more input tokens (and ``changes``)."""
    usage = Usage.model_validate(
        run.usage.model_dump(exclude_none=True, exclude={"total_tokens"})
        | {"input_tokens": (run.usage.input_tokens or 0) + i}
    )
    return run.model_copy(update={"id": f"{run.id}-near-{i}", "usage": usage, **changes})


def passing_t1() -> list[Submission]:
    return [s for s in examples("scylla.jsonl") if s.variant == "T1" and s.passed]


def near_copies_of_t1(**changes: Any) -> list[Submission]:
    """The attack: 10 near-copies of T1's passing runs, input tokens +1..+10."""
    passing = passing_t1()
    return [nudged(passing[i % len(passing)], i, **changes) for i in range(1, 11)]


def scylla_figures(url: str) -> dict[str, Any]:
    """Everything a reader of the Scylla task sees, but the copies' names."""
    with session_scope(url) as session:
        board = leaderboard(session, task_id=SCYLLA).model_dump(mode="json")
        variants = variant_report(session, task_id=SCYLLA).model_dump(mode="json")
        by_variant = compare(session, tasks=SCYLLA, by="variant", values=["T0", "T1"]).model_dump(
            mode="json"
        )
    for name in ("baseline_version", "duplicate_of", "near_copies"):
        board.pop(name)
    by_variant.pop("left_out")
    return {"board": board, "variants": variants, "compare": by_variant}


def test_near_copies_of_passing_runs_move_no_rank_or_verdict(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before near-copies counted once: T1 rank 3 -> 2, T0 -> T1 "worth it", p 0.096 -> 0.0057
    url = copy_of(store, tmp_path)
    attack = near_copies_of_t1()
    add_runs(url, attack, monkeypatch)
    assert scylla_figures(url) == scylla_figures(store)
    with session_scope(url) as session:
        board = leaderboard(session, task_id=SCYLLA)
        left_out = compare(session, tasks=SCYLLA, by="variant", values=["T0", "T1"]).left_out
        row = queries.get_submission_row(session, submission_id=attack[0].id)
        assert row.copy_of == passing_t1()[1].id  # marked in the store: out of the baseline
        page = render_html(report_data(session, task_id=SCYLLA))
    assert set(board.near_copies) == set(board.duplicate_of) == {r.id for r in attack}
    assert [(x.group, x.reason, x.count) for x in left_out if x.reason == NEAR] == [
        ("T1", NEAR, 10)
    ]
    assert "10 copies of earlier runs" in page and "near-copies" in page
    terminal = CliRunner().invoke(app, ["leaderboard", SCYLLA], env={"EVALQ_DATABASE_URL": url})
    assert terminal.exit_code == 0, terminal.output
    assert NEAR_COPY in " ".join(terminal.output.split())


def test_near_copies_with_the_case_or_spacing_of_the_output_changed_count_once(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = copy_of(store, tmp_path)
    attack = [
        run.model_copy(update={"output": f"  {(run.output or '').upper()}\n"})
        for run in near_copies_of_t1()
    ]
    add_runs(url, attack, monkeypatch)
    assert scylla_figures(url) == scylla_figures(store)
    with session_scope(url) as session:
        assert len(leaderboard(session, task_id=SCYLLA).near_copies) == 10


def test_near_copies_relabelled_as_another_agent_are_held(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # another agent's output with other usage: held for review, out of every verdict
    url = copy_of(store, tmp_path)
    attack = near_copies_of_t1(model="claude-opus-4")
    add_runs(url, attack, monkeypatch)
    before, after = scylla_figures(store), scylla_figures(url)
    assert (after["variants"], after["compare"]) == (before["variants"], before["compare"])
    ranked = [e for e in after["board"]["entries"] if not e["held"]]
    assert ranked == before["board"]["entries"]
    assert after["board"]["variants"] == before["board"]["variants"]
    with session_scope(url) as session:
        board = leaderboard(session, task_id=SCYLLA)
        flagged = {
            run.id
            for run in attack
            if COPIED_OUTPUT
            in (queries.get_evaluation(session, submission_id=run.id) or pytest.fail()).scores[
                "review"
            ]["flags"]
        }
    # the first relabelled copy of each run is held; the later ones near-copy it, counted once
    assert flagged | set(board.near_copies) == {run.id for run in attack}
    assert flagged == {e.submission_id for e in board.entries if e.held}


def three_percent_off(run: Submission, i: int) -> Submission:
    """``run`` under a new id with every usage figure 3% higher (tool calls as reported)."""
    usage = run.usage
    scaled = Usage.model_validate(
        usage.model_dump(exclude_none=True, exclude={"total_tokens"})
        | {
            "input_tokens": round((usage.input_tokens or usage.tokens) * 1.03),
            "output_tokens": round((usage.output_tokens or 0) * 1.03),
            "execution_time": None if usage.execution_time is None else usage.execution_time * 1.03,
        }
    )
    return run.model_copy(update={"id": f"{run.id}-3pc-{i}", "usage": scaled})


@pytest.mark.parametrize("attack", ["sentence appended", "usage 3% off", "another model name"])
def test_near_copies_past_the_old_rule_move_no_rank_or_verdict(
    attack: str, store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each was counted as a new run under equality of the normalised output and usage within 2%
    url = copy_of(store, tmp_path)
    passing = passing_t1()
    if attack == "sentence appended":
        sent = [
            nudged(run, i, output=f"{run.output} All edge cases were re-checked before merging.")
            for i, run in enumerate(passing * 2, start=1)
        ]
    elif attack == "usage 3% off":
        sent = [three_percent_off(run, i) for i, run in enumerate(passing * 2, start=1)]
    else:
        sent = [nudged(run, i, model="claude-opus-4") for i, run in enumerate(passing * 2, 1)]
    add_runs(url, sent, monkeypatch)
    before, after = scylla_figures(store), scylla_figures(url)
    assert (after["variants"], after["compare"]) == (before["variants"], before["compare"])
    assert after["board"]["variants"] == before["board"]["variants"]
    with session_scope(url) as session:
        board = leaderboard(session, task_id=SCYLLA)
    assert set(board.duplicate_of) == {run.id for run in sent}, (
        board.duplicate_of,
        board.near_copies,
    )


def test_repeated_runs_with_the_same_output_and_usage_far_apart_still_count(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one agent's own repeated runs end with the same text (the bundled T1 runs 3 and 7 do,
    # 25% apart in usage): not near-copies
    url = copy_of(store, tmp_path)
    run = passing_t1()[0]
    again = nudged(run, round((run.usage.input_tokens or 0) * 0.05), run_index=10)
    add_runs(url, [again], monkeypatch)
    with session_scope(url) as session:
        board = leaderboard(session, task_id=SCYLLA)
    assert board.duplicate_of == {} and any(e.submission_id == again.id for e in board.entries)


def best_five_of_t1() -> list[Submission]:
    t1 = [s for s in examples("scylla.jsonl") if s.variant == "T1"]
    return sorted(t1, key=lambda s: (not s.passed, -(s.impl_rate or 0), s.id))[:5]


def cherry_picked(
    url: str, monkeypatch: pytest.MonkeyPatch, extra: list[Submission], plan: int | None = None
) -> None:
    """The store's Scylla task with T1's runs sent again as the cherry-picker would: only its 5
    best (new ids, declaring ``plan``), then ``extra``."""
    t1 = [s.id for s in examples("scylla.jsonl") if s.variant == "T1"]
    with session_scope(url) as session:
        for table in ("standings", "tier_results", "evaluations"):
            session.execute(
                text(f"DELETE FROM {table} WHERE submission_id IN :ids").bindparams(
                    bindparam("ids", expanding=True)
                ),
                {"ids": t1},
            )
        session.execute(
            text("DELETE FROM submissions WHERE id IN :ids").bindparams(
                bindparam("ids", expanding=True)
            ),
            {"ids": t1},
        )
    best = [
        s.model_copy(update={"id": f"{s.id}-picked", "planned_runs": plan})
        for s in best_five_of_t1()
    ]
    add_runs(url, best + extra, monkeypatch)


def steps_of(url: str) -> dict[str, Any]:
    with session_scope(url) as session:
        variants = variant_report(session, task_id=SCYLLA)
        board = leaderboard(session, task_id=SCYLLA)
        compared = compare(session, tasks=SCYLLA, by="variant", values=["T0", "T1"])
        page = render_html(report_data(session, task_id=SCYLLA))
    step = next(s for s in variants.over_baseline if s.target == "T1")
    t1 = next(v for v in board.variants or [] if v.variant == "T1")
    return {
        "step": step,
        "run_plans": variants.run_plans,
        "t1": t1,
        "compared": compared.comparisons[0],
        "page": page,
        "best_value": variants.best_value,
    }


def test_sending_the_five_best_runs_of_ten_withholds_the_verdicts(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before run plans: T1 rank 3 -> 2, T0 -> T1 "worth it", best value T1 in 99.7% of resamples
    before = steps_of(store)
    assert before["step"].verdict == "inconclusive" and not before["step"].withheld
    url = copy_of(store, tmp_path)
    cherry_picked(url, monkeypatch, [])
    after = steps_of(url)
    said = "T1: 5 runs, its peers 10"
    assert after["step"].withheld and after["step"].verdict == "inconclusive"
    assert said in after["step"].reason and any(said in n for n in after["run_plans"])
    assert after["t1"].run_plan is not None and said in after["t1"].run_plan
    assert (
        after["compared"].conclusion.startswith("withheld") and said in after["compared"].notes[-1]
    )
    assert "withheld" in after["page"] and said in after["page"]
    terminal = CliRunner().invoke(app, ["leaderboard", SCYLLA], env={"EVALQ_DATABASE_URL": url})
    assert terminal.exit_code == 0, terminal.output
    assert said in " ".join(terminal.output.split())


def test_the_five_best_sent_twice_with_a_token_more_are_near_copies_and_withheld(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = copy_of(store, tmp_path)
    cherry_picked(url, monkeypatch, [nudged(s, 1) for s in best_five_of_t1()])
    after = steps_of(url)
    assert after["step"].withheld and "T1: 5 runs, its peers 10" in after["step"].reason
    with session_scope(url) as session:
        assert len(leaderboard(session, task_id=SCYLLA).near_copies) == 5


def test_a_declared_plan_counts_the_runs_not_sent_as_failures(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = copy_of(store, tmp_path)
    cherry_picked(url, monkeypatch, [], plan=10)
    after = steps_of(url)
    said = "T1: 5 of 10 planned runs"
    assert not after["step"].withheld and after["step"].verdict != "worth it"
    assert said in after["step"].reason and said in (after["t1"].run_plan or "")
    assert after["t1"].runs == 10 and after["t1"].pass_rate is not None
    assert after["t1"].pass_rate <= 0.5 and after["best_value"] != "T1"
    assert said in after["compared"].notes[-1]
    assert said in after["page"]


def test_a_plan_lower_than_the_peers_runs_does_not_lift_the_hold(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = copy_of(store, tmp_path)
    cherry_picked(url, monkeypatch, [], plan=5)
    assert steps_of(url)["step"].withheld


FLOODED = "arena-debug-flaky-date-parser"


def flood() -> list[Submission]:
    """12 slow, costly runs from 6 throwaway agent names (2 each, their own outputs, usage 5%
    apart between names: the same content with the same usage under six names would be one
    run's near-copies, `test_near_copies_past_the_old_rule_move_no_rank_or_verdict`)."""
    model = next(s for s in examples("arena.jsonl") if s.task_id == FLOODED)
    return [
        model.model_copy(
            update={
                "id": f"flood-{name}-{i}",
                "tool": f"throwaway-{name}",
                "model": f"model-{name}",
                "output": f"{model.output} (attempt {i} by agent {name})",
                "usage": Usage(
                    input_tokens=round((300_000 + 40_000 * i) * 1.05**name),
                    output_tokens=50_000,
                    tool_calls=120 + 30 * i,
                    iterations=3,
                    execution_time=5_000.0 + 1_500 * i,
                    cost_usd=25.0 + 10 * i,
                ),
            }
        )
        for name in range(6)
        for i in range(2)
    ]


def places(url: str) -> dict[str, int | None]:
    with session_scope(url) as session:
        entries = leaderboard(session, task_id=FLOODED).entries
    return {e.submission_id: e.rank for e in entries if not e.submission_id.startswith("flood")}


def test_the_unmodified_demo_boards_say_nothing_of_a_flood(store: str) -> None:
    with session_scope(store) as session:
        for task_id in ("arena-frontend-dark-mode", FLOODED, "arena-data-sales-summary"):
            board = leaderboard(session, task_id=task_id)
            assert (board.range_note, board.crowd_note) == (None, None), task_id
        compared = compare(session, tasks="arena-*", by="model", values=["claude-sonnet-4", "o3"])
    assert compared.notes == []


def test_a_flood_of_new_agent_names_is_said_at_every_door_and_withholds_nothing(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = copy_of(store, tmp_path)
    add_runs(url, flood(), monkeypatch)
    # under the robust default the crowd's runs are left out of the ranges, so they move no
    # real run's place among the real runs (test_robust_baseline_demo.py): the board says they
    # reach beyond the ranges, and no verdict waits for it
    assert set(places(url)) == set(places(store))
    with session_scope(url) as session:
        board = leaderboard(session, task_id=FLOODED)
        compared = compare(session, tasks="arena-*", by="model", values=["claude-sonnet-4", "o3"])
        page = render_html(report_data(session, task_id=FLOODED))
        other = leaderboard(session, task_id="arena-data-sales-summary")
    note = board.crowd_note
    assert board.range_note is None
    assert note is not None and note.startswith(
        "6 agent name(s) with fewer tasks than this task's typical agent (12 runs) reach beyond "
        "its baseline's range of"
    )
    assert "execution time (s) (74-520; theirs 5,000-6,500)" in note and "cost (USD)" in note
    assert "move no other run's scores" in note
    assert (other.range_note, other.crowd_note) == (None, None)  # the others' ranges are theirs
    assert compared.notes == [f"{FLOODED}: {note}"]
    assert not any(c.conclusion.startswith("withheld") for c in compared.comparisons)
    assert "Verdict withheld" not in page and html.escape(note) in page
    terminal = CliRunner().invoke(app, ["leaderboard", FLOODED], env={"EVALQ_DATABASE_URL": url})
    assert terminal.exit_code == 0, terminal.output
    assert f"Note: {note}." in " ".join(terminal.output.split())
    compared_cli = CliRunner().invoke(
        app,
        ["compare", "arena-*", "--by", "model", "claude-sonnet-4", "o3"],
        env={"EVALQ_DATABASE_URL": url},
    )
    assert compared_cli.exit_code == 0, compared_cli.output
    assert f"note: {FLOODED}: {note}" in " ".join(compared_cli.output.split())
    with session_scope(url) as session:
        key = create_key(session, name="crowd", scopes=["read"])
    with TestClient(
        create_app(Settings(database_url=url, auth_required=True)), base_url="https://testserver"
    ) as browser:
        assert sign_in(browser, key).status_code == 303
        ui = browser.get(f"/ui/tasks/{FLOODED}").text
        asked = {"tasks": "arena-*", "by": "model", "values": ["claude-sonnet-4", "o3"]}
        compared_ui = browser.get("/ui/compare", params=asked).text
    assert f"<li>{markupsafe.escape(f'{FLOODED}: {note}')}</li>" in compared_ui  # (Jinja's)
    assert "withheld" not in compared_ui
    verdict = ui[ui.index('<section id="verdict"') :].split("</section>", 1)[0]
    assert "Verdict withheld" not in verdict and "<table" in verdict  # the board's top rows
    assert f'<p class="note caveats" id="crowd-note">{html.escape(note)}.</p>' in verdict


def test_new_agent_names_inside_the_range_are_not_a_flood(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = copy_of(store, tmp_path)
    typical = next(s for s in examples("arena.jsonl") if s.task_id == FLOODED)
    newcomers = [
        typical.model_copy(
            update={
                "id": f"newcomer-{name}",
                "tool": f"new-tool-{name}",
                "output": f"{typical.output} (newcomer {name})",
                "usage": typical.usage.model_copy(update={"execution_time": 100.0 + 10 * name}),
            }
        )
        for name in range(6)
    ]
    add_runs(url, newcomers, monkeypatch)
    with session_scope(url) as session:
        board = leaderboard(session, task_id=FLOODED)
    assert (board.range_note, board.crowd_note) == (None, None)


UNDER = "o3"


def under_reported(model: str = UNDER) -> list[Submission]:
    """``model``'s Arena runs sent again (new ids) reporting half their tokens and time."""
    found = []
    for run in examples("arena.jsonl"):
        if run.model != model:
            continue
        usage = run.usage
        time = usage.execution_time
        halved = Usage.model_validate(
            usage.model_dump(exclude_none=True, exclude={"total_tokens"})
            | {
                "input_tokens": (usage.input_tokens or usage.tokens) // 2,
                "output_tokens": (usage.output_tokens or 0) // 2,
                "execution_time": None if time is None else time / 2,
            }
        )
        found.append(run.model_copy(update={"id": f"{run.id}-halved", "usage": halved}))
    return found


def test_usage_below_its_own_trace_is_held_with_the_reason(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # o3's run on the dark-mode task carries a timed trace (1,087.5 s over 20 steps): half its
    # time disagrees with it; its other runs carry no trace and are not checked
    url = copy_of(store, tmp_path)
    attack = under_reported()
    add_runs(url, attack, monkeypatch)
    with session_scope(url) as session:
        flags = {
            run.id: (queries.get_evaluation(session, submission_id=run.id) or pytest.fail()).scores[
                "review"
            ]["flags"]
            for run in attack
        }
        board = leaderboard(session, task_id="arena-frontend-dark-mode")
    assert flags["arena-fe-10-halved"] == [USAGE_BELOW_TRACE]
    assert all(f == [] for sid, f in flags.items() if sid != "arena-fe-10-halved"), flags
    held = next(e for e in board.entries if e.submission_id == "arena-fe-10-halved")
    assert held.held and held.rank is None and held.flags == [USAGE_BELOW_TRACE]


def test_fewer_tool_calls_than_the_trace_steps_are_held(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = copy_of(store, tmp_path)
    run = next(s for s in examples("arena.jsonl") if s.id == "arena-dbg-01")
    fewer = run.model_copy(
        update={"id": "arena-dbg-01-fewer", "usage": run.usage.model_copy(update={"tool_calls": 5})}
    )
    add_runs(url, [fewer], monkeypatch)
    with session_scope(url) as session:
        row = queries.get_submission_row(session, submission_id=fewer.id)
    assert row.review == "flagged" and (row.trace_steps, row.tool_calls) == (14, 5)


def test_a_run_claiming_one_millisecond_is_held_with_the_reason(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: full speed points and rank 1 on its board, not held (one indicator of two)
    url = copy_of(store, tmp_path)
    run = next(s for s in examples("arena.jsonl") if s.id == "arena-dbg-02")
    fast = run.model_copy(
        update={
            "id": "arena-dbg-02-1ms",
            "trace": None,
            "usage": run.usage.model_copy(update={"execution_time": 0.001}),
        }
    )
    add_runs(url, [fast], monkeypatch)
    with session_scope(url) as session:
        board = leaderboard(session, task_id="arena-debug-flaky-date-parser")
        held = {e.submission_id for e in board.entries if e.held}
    assert held == {"arena-dbg-02-1ms"}
    entry = next(e for e in board.entries if e.submission_id == "arena-dbg-02-1ms")
    assert entry.rank is None and entry.flags == [IMPLAUSIBLY_FAST]
    configure(monkeypatch, database_url=url)
    shown = CliRunner().invoke(app, ["leaderboard", "arena-debug-flaky-date-parser"])
    assert shown.exit_code == 0, shown.output
    assert "held: implausibly_fast" in " ".join(shown.output.split())


def test_no_bundled_run_is_newly_held_as_implausibly_fast(store: str) -> None:
    # arena-fe-09 (3.4 s, one tool call, 1,650 tokens) was held by spec 000's indicators already
    with session_scope(store) as session:
        for task in (
            "arena-debug-flaky-date-parser",
            "arena-frontend-dark-mode",
            "arena-data-sales-summary",
        ):
            board = leaderboard(session, task_id=task)
            fast = {e.submission_id: e.flags for e in board.entries if IMPLAUSIBLY_FAST in e.flags}
            assert set(fast) <= {"arena-fe-09"}
            assert all(len(flags) >= 3 for flags in fast.values()), fast


def traced_profile(tmp_path: Path, baseline: str = "robust") -> Settings:
    """Settings whose default profile ranks only runs whose usage comes from a trace."""
    path = tmp_path / "traced.toml"
    path.write_text(f'[arena]\nusage = "traced"\nbaseline = "{baseline}"\n')
    return Settings(profile_path=path)


def test_under_reported_usage_without_a_trace_is_said_and_can_be_left_unranked(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: halving o3's tokens and time moved ranks on the two tasks whose o3 run carries no
    # trace, and nothing said so; the one with a timed trace is held (above)
    url = copy_of(store, tmp_path)
    attack = under_reported()
    add_runs(url, attack, monkeypatch)
    untraced = {run.task_id: run.id for run in attack if run.id != "arena-fe-10-halved"}
    assert len(untraced) == 2
    for task_id, halved in untraced.items():
        with session_scope(store) as session:
            before = leaderboard(session, task_id=task_id)
        with session_scope(url) as session:
            after = leaderboard(session, task_id=task_id)
            page = leaderboard(session, task_id=task_id, limit=5)
            html = render_html(report_data(session, task_id=task_id))
        entry = next(e for e in after.entries if e.submission_id == halved)
        original = next(e for e in after.entries if e.submission_id == halved[: -len("-halved")])
        # the attack moves the run (and others) with nothing held: the board says its usage is
        # only what it reported, and how many of the board's runs are so
        assert entry.rank is not None and not entry.held and entry.rank < (original.rank or 0)
        assert entry.usage_source == "self-reported"
        collected = sum(e.usage_source == "collected-trace" for e in after.entries)
        own = sum(e.usage_source == "own-trace" for e in after.entries)
        assert after.self_reported == len(after.entries) - collected == page.self_reported
        assert after.own_trace == own == page.own_trace
        assert after.usage_note == page.usage_note
        assert after.usage_note == usage_note(after.self_reported, own, len(after.entries))
        assert after.usage_note is not None and after.usage_note.startswith(
            f"usage of {after.self_reported} of {len(after.entries)} runs is self-reported (not "
            "from a collected trace"
        )
        assert [e.usage_source for e in page.entries] == [e.usage_source for e in after.entries[:5]]
        assert before.usage_note is not None and after.usage_note in html
        terminal = CliRunner().invoke(
            app, ["leaderboard", task_id], env={"EVALQ_DATABASE_URL": url}
        )
        assert terminal.exit_code == 0, terminal.output
        assert after.usage_note in " ".join(terminal.output.split())
    with session_scope(url) as session:
        dark = leaderboard(session, task_id="arena-frontend-dark-mode")
        key = create_key(session, name="usage", scopes=["read"])
    with TestClient(
        create_app(Settings(database_url=url, auth_required=True)), base_url="https://testserver"
    ) as browser:
        assert sign_in(browser, key).status_code == 303
        ui = browser.get("/ui/tasks/arena-data-sales-summary").text
    row = ui[ui.index('<tr data-run="arena-da-10-halved"') :].split("</tr>", 1)[0]
    assert '<td class="usage self-reported">self-reported</td>' in row
    assert "usage of 12 of 12 runs is self-reported" in ui
    sources = {e.submission_id: e.usage_source for e in dark.entries}
    # a timed trace in the body is the submitter's own: consistent, never "collected"
    assert sources["arena-fe-10-halved"] == sources["arena-fe-10"] == "own-trace"
    assert sources["arena-fe-03"] == "self-reported"


def collected_copy(store: str, directory: Path) -> str:
    """A copy of the store whose every run reads as collected by the OTLP intake under a key
    its task trusts, as a task whose agents' runtime exports every run would have them."""
    directory.mkdir()
    url = copy_of(store, directory)
    with session_scope(url) as session:
        session.execute(text("UPDATE submissions SET trace_provenance = 'collected'"))
    return url


def test_a_profile_that_ranks_only_traced_usage_lists_self_reported_runs_unranked(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the bundled runs as if their runtime had exported them all; the attack's are submitted
    url = collected_copy(store, tmp_path / "attacked")
    unattacked_url = collected_copy(store, tmp_path / "unattacked")
    attack = under_reported()
    add_runs(url, attack, monkeypatch)
    settings = traced_profile(tmp_path)
    for task_id in {run.task_id for run in attack}:
        # a deployment reading under this profile refreshes under it (its workers run it): the
        # runs' standings scored for it, and their provenance, changed above, counted again
        for scored in (url, unattacked_url):
            with session_scope(scored) as session:
                refresh_task(session, task_id=task_id, settings=settings)
        with session_scope(url) as session:
            whole = leaderboard(session, task_id=task_id, settings=settings)
            paged = leaderboard(session, task_id=task_id, settings=settings, limit=3, offset=0)
            rest = leaderboard(session, task_id=task_id, settings=settings, limit=100, offset=3)
        with session_scope(unattacked_url) as session:
            unattacked = leaderboard(session, task_id=task_id, settings=settings)
        ranked = [e for e in whole.entries if e.rank is not None]
        apart = [e for e in whole.entries if e.rank is None]
        assert ranked and all(e.usage_source == "collected-trace" for e in ranked)
        assert {e.submission_id for e in apart if not e.held} == {
            e.submission_id for e in whole.entries if e.usage_source == "self-reported"
        }
        assert all(
            e.unranked == SELF_REPORTED for e in apart if e.usage_source != "collected-trace"
        )
        # the attack's runs, whose usage was not collected, are not ranked under this profile
        # (nor counted in its baseline when it is refreshed under it: the test below)
        assert {e.submission_id for e in ranked} == {
            e.submission_id for e in unattacked.entries if e.rank is not None
        }
        # the database's page reads as the whole board
        listed = [e.model_dump() for e in paged.entries + rest.entries]
        assert listed == [e.model_dump() for e in whole.entries]
        assert paged.total == whole.total == len(whole.entries)
    configure(monkeypatch, database_url=url, profile_path=str(settings.profile_path))
    try:
        terminal = CliRunner().invoke(app, ["leaderboard", "arena-data-sales-summary"])
    finally:
        monkeypatch.undo()
        configure(monkeypatch)  # the process's settings read again without the profile
    assert terminal.exit_code == 0, terminal.output
    rows = [line for line in terminal.output.splitlines() if "arena-da-10-halved" in line]
    assert len(rows) == 1 and rows[0].split()[1] == "unranked", terminal.output
    with session_scope(url) as session:
        key = create_key(session, name="traced", scopes=["read"])
    served = Settings(database_url=url, auth_required=True, profile_path=settings.profile_path)
    with TestClient(create_app(served), base_url="https://testserver") as browser:
        assert sign_in(browser, key).status_code == 303
        ui = browser.get("/ui/tasks/arena-data-sales-summary").text
    row = ui[ui.index('<tr data-run="arena-da-10-halved"') :].split("</tr>", 1)[0]
    assert ">unranked<" in row and "unranked: usage not from a collected trace" in row


def with_trace_agreeing(run: Submission, factor: float, suffix: str) -> Submission:
    """``run`` under a new id reporting ``factor`` of its tokens and time, with its trace's
    timed steps squeezed by the same factor: a trace invented to agree with the lie."""
    usage = run.usage
    assert run.trace is not None and usage.execution_time is not None
    steps = [
        step.model_copy(
            update={
                "started_at": None if step.started_at is None else step.started_at * factor,
                "ended_at": None if step.ended_at is None else step.ended_at * factor,
            }
        )
        for step in run.trace.steps
    ]
    lied = Usage.model_validate(
        usage.model_dump(exclude_none=True, exclude={"total_tokens"})
        | {
            "input_tokens": int((usage.input_tokens or usage.tokens) * factor),
            "output_tokens": int((usage.output_tokens or 0) * factor),
            "execution_time": usage.execution_time * factor,
        }
    )
    return run.model_copy(
        update={
            "id": f"{run.id}-{suffix}",
            "usage": lied,
            "trace": run.trace.model_copy(update={"steps": steps}),
        }
    )


DARK = "arena-frontend-dark-mode"


def test_a_trace_invented_to_agree_with_halved_usage_is_never_read_as_collected(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: o3's dark-mode run halved with its trace's steps squeezed to span the halved time
    # passed the trace check, moved up, and was badged usage_source "trace" (checked) while the
    # honest runs without a trace read self-reported
    url = collected_copy(store, tmp_path / "attacked")
    unattacked_url = collected_copy(store, tmp_path / "unattacked")
    original = next(s for s in examples("arena.jsonl") if s.id == "arena-fe-10")
    lie = with_trace_agreeing(original, 0.5, "halved-traced")
    add_runs(url, [lie], monkeypatch)
    with session_scope(url) as session:
        row = queries.get_submission_row(session, submission_id=lie.id)
        board = leaderboard(session, task_id=DARK)
        html = render_html(report_data(session, task_id=DARK))
    assert row.trace_seconds is not None and row.execution_time is not None
    assert row.trace_seconds <= row.execution_time  # consistent with its own trace: not held
    assert row.trace_provenance == "submitted"
    entry = next(e for e in board.entries if e.submission_id == lie.id)
    before = next(e for e in board.entries if e.submission_id == original.id)
    assert not entry.held and entry.rank is not None and entry.rank < (before.rank or 0)
    assert entry.usage_source == "own-trace"
    assert (board.self_reported, board.own_trace) == (1, 1)
    assert board.usage_note == usage_note(1, 1, len(board.entries))
    table = html[html.index('<table id="leaderboard">') :]
    cells = table[table.index(f'<tr data-sid="{lie.id}"') :].split("</tr>", 1)[0]
    assert "own trace (unverified)" in cells and "collected" not in cells
    terminal = CliRunner().invoke(app, ["leaderboard", DARK], env={"EVALQ_DATABASE_URL": url})
    assert terminal.exit_code == 0, terminal.output
    [line] = [x for x in terminal.output.splitlines() if lie.id in x]
    assert "usage: own trace (unverified)" in " ".join(terminal.output.split())
    assert "collected" not in line
    # a profile that ranks only collected usage does not rank it: the same runs are ranked
    settings = traced_profile(tmp_path)
    for scored in (url, unattacked_url):  # refreshed under it, as its deployment would be
        with session_scope(scored) as session:
            refresh_task(session, task_id=DARK, settings=settings)
    with session_scope(url) as session:
        traced = leaderboard(session, task_id=DARK, settings=settings)
        page = leaderboard(session, task_id=DARK, settings=settings, limit=3)
    with session_scope(unattacked_url) as session:
        unattacked = leaderboard(session, task_id=DARK, settings=settings)
    listed = next(e for e in traced.entries if e.submission_id == lie.id)
    assert listed.rank is None and listed.unranked == SELF_REPORTED
    assert {e.submission_id for e in traced.entries if e.rank is not None} == {
        e.submission_id for e in unattacked.entries if e.rank is not None
    }
    assert [e.model_dump() for e in page.entries] == [e.model_dump() for e in traced.entries[:3]]
    with session_scope(url) as session:
        key = create_key(session, name="provenance", scopes=["read"])
    with TestClient(
        create_app(Settings(database_url=url, auth_required=True)), base_url="https://testserver"
    ) as browser:
        assert sign_in(browser, key).status_code == 303
        ui = browser.get(f"/ui/tasks/{DARK}").text
    row_html = ui[ui.index(f'<tr data-run="{lie.id}"') :].split("</tr>", 1)[0]
    assert '<td class="usage own-trace">own trace (unverified)</td>' in row_html


def test_an_implausibly_fast_time_is_held_even_with_a_trace_that_agrees(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # usage outside what the task's own runs make plausible is held for review whatever trace
    # the run brings to agree with it (a halving inside that range is answered by provenance)
    url = copy_of(store, tmp_path)
    original = next(s for s in examples("arena.jsonl") if s.id == "arena-fe-10")
    lie = with_trace_agreeing(original, 0.01, "hundredth-traced")
    add_runs(url, [lie], monkeypatch)
    with session_scope(url) as session:
        board = leaderboard(session, task_id=DARK)
    entry = next(e for e in board.entries if e.submission_id == lie.id)
    assert entry.held and entry.rank is None and IMPLAUSIBLY_FAST in entry.flags
    assert USAGE_BELOW_TRACE not in entry.flags
    assert entry.usage_source == "own-trace"


@pytest.mark.parametrize("baseline", ["runs", "robust"])
def test_runs_whose_usage_was_not_collected_move_no_ranked_runs_score_under_traced(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, baseline: str
) -> None:
    # before: under arena.usage = "traced" the halved runs were listed unranked but still
    # counted in their tasks' baselines, so under spec 000's ranges the ranked runs' scores moved
    # with them (two ranked runs swapped places); now the baseline counts only the runs it ranks
    # (the robust default's band and medians already kept these halvings from moving a range)
    settings = traced_profile(tmp_path, baseline)
    urls = {}
    for name in ("attacked", "unattacked"):
        urls[name] = collected_copy(store, tmp_path / name)
        configure(monkeypatch, database_url=urls[name], profile_path=str(settings.profile_path))
        for task_id in ("arena-frontend-dark-mode", FLOODED, "arena-data-sales-summary"):
            refresh_baseline(task_id)
    original = next(s for s in examples("arena.jsonl") if s.id == "arena-fe-10")
    attack = [*under_reported(), with_trace_agreeing(original, 0.5, "halved-traced")]
    add_runs(urls["attacked"], attack, monkeypatch)  # refreshed under the traced profile
    for task_id in {run.task_id for run in attack}:
        ranked = {}
        for name, url in urls.items():
            with session_scope(url) as session:
                board = leaderboard(session, task_id=task_id, settings=settings)
            ranked[name] = {
                e.submission_id: (e.rank, e.overall, e.speed, e.cost, e.efficiency)
                for e in board.entries
                if e.rank is not None
            }
        assert not any(sid.endswith(("-halved", "-halved-traced")) for sid in ranked["attacked"])
        assert ranked["attacked"] == ranked["unattacked"], task_id
