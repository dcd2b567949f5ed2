"""Four of a new user's jobs done in Debian's Chromium through the UI alone, each answer then
checked against the HTTP API's: (a) which agent is best on an Arena task and how sure, (b) why
a run got its score, (e) how far the judge agrees with people (on the board, then on real
published data: the read that page renders), (f) two models compared across the Arena tasks.

A real `evalq api` on each database (SQLite, then PostgreSQL; one store per database, shared
by the module; no broker: it evaluates what it receives itself, as after `make
demo`) over the bundled tasks and example runs, judged by `OpenAIStub` (a local
OpenAI-compatible server). The browser only clicks, fills and reads; the API is asked after,
with a read-only key, for the figures the page should have shown.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright

from evalq.read.published_agreement import JUDGE, SOURCE, hanna_agreement
from tests.integration.api.conftest import Server, evaluate_examples, examples, serve_api
from tests.integration.ui.test_ui_browser import launch, shoot, signed_in
from tests.support.openai_stub import OpenAIStub
from tests.support.processes import PATIENCE
from tests.support.tools import required_program

pytestmark = [pytest.mark.browser, pytest.mark.both_databases, pytest.mark.timeout(900)]

ARENA_TASKS = (
    "arena-frontend-dark-mode",
    "arena-debug-flaky-date-parser",
    "arena-data-sales-summary",
)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """`evalq api` over the bundled tasks and every bundled example run, all evaluated."""
    directory = tmp_path_factory.mktemp("ui-jobs")
    with OpenAIStub() as stub:
        judge = {
            "judge_model": "openai:stub-judge",
            "judge_base_url": stub.base_url,
            "judge_api_key": "sk-test",
            "judge_max_attempts": "1",
            "judge_backoff_base_s": "0",
        }
        with serve_api(request.param, directory, broker=False, extra=judge) as api:
            kinds = ("arena", "scylla", "peerread", "suite")
            statuses = evaluate_examples(api, [run for kind in kinds for run in examples(kind)])
            assert set(statuses.values()) <= {"done", "degraded"}, statuses
            yield api


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium (Playwright cannot download its own browser here)."""
    executable = required_program("chromium", "apt-get install chromium")
    with sync_playwright() as playwright:
        launched = launch(playwright, executable)
        yield launched
        launched.close()


def api_get(server: Server, path: str, **params: Any) -> Any:
    """The HTTP API's answer, read with the read-only key."""
    answer = httpx.get(
        server.url + path,
        params=params,
        headers={"Authorization": f"Bearer {server.keys['read']}"},
        timeout=120 * PATIENCE,
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def open_board(page: Page, task_id: str) -> None:
    """From the tasks list, by its link, as a person would."""
    page.goto("/")
    page.locator(f'tr[data-task="{task_id}"]').get_by_role("link", name=task_id).click()
    expect(page.get_by_role("heading", name=task_id, exact=True)).to_be_visible()


def expected_answer(board: dict[str, Any]) -> tuple[str, str]:
    """The Arena answer a person should read, built from the API's board alone: the rank 1 run,
    the best-placed run of another agent (tool, model), the gap to 2 decimals, and whether each
    of the two agents ran once (then their order is one draw each)."""
    ranked = [e for e in board["entries"] if e["rank"] is not None]
    lead = ranked[0]
    assert lead["rank"] == 1
    agent = (lead["tool"], lead["model"])
    runner = next(e for e in ranked if (e["tool"], e["model"]) != agent)
    runs = Counter((e["tool"], e["model"]) for e in ranked)
    single = runs[agent] == 1 and runs[(runner["tool"], runner["model"])] == 1
    gap = lead["overall"] - runner["overall"]
    text = (
        f"Leader: {lead['submission_id']} ({lead['tool']} / {lead['model']}) at "
        f"{lead['overall']:.2f}. Next agent: {runner['tool']} / {runner['model']}, its best run "
        f"{runner['submission_id']} at {runner['overall']:.2f} ({gap:.2f} points behind)."
    )
    return text, "single-runs" if single else "separable"


@pytest.mark.parametrize("task_id", ARENA_TASKS)
def test_job_a_the_arena_board_answers_who_leads_by_how_much_and_how_sure(
    server: Server, browser: Browser, task_id: str
) -> None:
    watched = signed_in(browser, server, key="read")
    page = watched.page
    open_board(page, task_id)
    answer = page.locator("section.verdict p.answer")
    expect(answer).to_have_count(1)
    shown = answer.inner_text()
    sure = answer.get_attribute("data-answer")
    # the leader's row on the board carries the number the answer names
    top = page.locator("#board tbody tr").first
    leader_id = top.get_attribute("data-run")
    ranked_by = float(top.locator("td").nth(5).inner_text())

    board = api_get(server, f"/v1/tasks/{task_id}/leaderboard")
    text, how_sure = expected_answer(board)
    assert shown.startswith(text), (shown, text)
    assert sure == how_sure
    if how_sure == "single-runs":  # on the bundled examples every leader and runner ran once
        assert "Single runs: each of these agents ran once on this task" in shown
        assert "cannot say which agent is better" in shown
    lead = board["entries"][0]
    assert leader_id == lead["submission_id"]
    assert f"{ranked_by:.2f}" == f"{lead['overall']:.2f}"
    # how sure, per row: the rank interval the API serves (none for a single run) is the one shown
    rank_cell = top.locator("td").first.inner_text()
    interval = lead["rank_interval"]
    if interval is None:
        assert rank_cell.strip() == "1"
    else:
        assert f"[{interval['low']}–{interval['high']}]" in rank_cell
    if task_id == ARENA_TASKS[0]:
        shoot(page, "board-arena-answer")
    watched.clean()
    page.context.close()


def cells(row: Locator) -> list[str]:
    return [c.strip() for c in row.locator("th, td").all_inner_texts()]


def test_job_b_the_top_run_shows_why_it_got_its_score(server: Server, browser: Browser) -> None:
    task_id = ARENA_TASKS[0]
    watched = signed_in(browser, server, key="read")
    page = watched.page
    open_board(page, task_id)
    top = page.locator("#board tbody tr").first
    run_id = top.get_attribute("data-run")
    assert run_id
    board_value = top.locator("td").nth(5).inner_text()
    top.get_by_role("link", name=run_id, exact=True).click()
    expect(page.get_by_role("heading", name=f"Run {run_id}")).to_be_visible()
    page.wait_for_load_state()  # the reads below do not wait: the whole page parsed first

    # what the page says, read before the API is asked
    score = page.locator('td[data-score="arena-overall"]').inner_text()
    weighed = page.locator('[data-score="arena-weights"]').inner_text()
    criteria = [cells(r) for r in page.locator("#criteria-table tr[data-state]").all()]
    states = page.locator("#criteria-table tr[data-state]").evaluate_all(
        "rows => rows.map(r => r.dataset.state)"
    )
    evidence = page.locator("#unclaimed-evidence li").all_inner_texts()
    failed = page.locator('#unclaimed-evidence li[data-failed="yes"]').count()
    tiers = {
        t.get_attribute("data-tier"): t.locator("h3 .mark").inner_text()
        for t in page.locator(".tier[data-tier]").all()
    }
    not_run = {
        t.get_attribute("data-tier"): t.locator("p.note").inner_text()
        for t in page.locator(".tier[data-tier]").all()
        if t.locator("p.note").count()
    }
    tiers_section = page.locator("section[aria-labelledby=tiers-h]").inner_text()
    judge = page.locator("#judge")
    rubrics = {
        r.get_attribute("data-rubric"): r.locator("h3").inner_text()
        for r in judge.locator(".rubric").all()
    }
    judge_text = judge.inner_text()
    shoot(page, "run-why")

    result = api_get(server, f"/v1/submissions/{run_id}")
    arena = result["scores"]["arena"]
    # the number the board ranks by, named as such; the adjusted one named as what it is
    assert score.startswith(f"{arena['unadjusted_score']:.2f}, the number the board ranks by")
    assert f"{float(board_value):.2f}" == f"{arena['unadjusted_score']:.2f}"
    if arena["overall_score"] != arena["unadjusted_score"]:
        adjusted = f"{arena['overall_score']:.2f} after the task's difficulty factor"
        assert adjusted in score, score
    names = ("efficiency", "speed", "cost", "correctness")
    for name in names:
        assert f"{name} {arena[f'{name}_score']:.1f}" in score, (name, score)
    # how the four figures weigh into that number: the weights shown reproduce it
    assert weighed.startswith("weighed as "), weighed
    weights = {name: float(weight) for weight, name in re.findall(r"([\d.]+) × (\w+)", weighed)}
    assert weights == {n: arena["breakdown"][f"{n}_weight"] for n in names}
    recomputed = sum(weights[n] * arena[f"{n}_score"] for n in names)
    assert recomputed == pytest.approx(arena["unadjusted_score"], abs=0.01)
    # each criterion against the evidence, then the evidence no criterion names
    served = result["criteria"]
    assert criteria == [[c["criterion"], c["state"], c["reason"]] for c in served["criteria"]]
    assert states == [c["state"] for c in served["criteria"]]
    unclaimed = served["unclaimed"]
    assert [e.removeprefix("failed ") for e in evidence] == [
        f"{u['kind']}: {u['name']}" for u in unclaimed
    ]
    assert failed == sum(u["failed"] for u in unclaimed) >= 1  # arena-fe-11's header test
    # its tiers: each one's state, why a skipped one did not run, what the score leaves out
    assert tiers == {name: t["status"] for name, t in result["tiers"].items()}
    assert not_run == {
        name: f"not run: {t['metrics']['reason']}"
        for name, t in result["tiers"].items()
        if t["status"] == "skipped"
    }
    for name, missing in result["missing_tiers"].items():
        assert f"{name} ({missing['status']}: {missing['reason']})" in tiers_section
    # the judge's scores, and whether they are validated against people's labels
    scores = result["scores"]["judge"]
    for rubric, heading in rubrics.items():
        value = scores[rubric]
        assert heading.startswith(f"{rubric}: {'-' if value is None else f'{value:.3f}'}")
    validation = result["judge_validation"]
    assert validation["status"] == "not validated"
    assert "judge scores: not validated against people's labels" in judge_text
    for line in validation["rubrics"]:
        assert line["note"] in judge_text
    watched.clean()
    page.context.close()


def test_job_e_how_far_the_judge_agrees_with_people_on_the_board_and_on_real_data(
    server: Server, browser: Browser
) -> None:
    # the demo's boards opened with an empty agreement block: job (e) could not be done
    task_id = ARENA_TASKS[0]
    watched = signed_in(browser, server, key="read")
    page = watched.page
    open_board(page, task_id)
    line = page.locator("#agreement")
    state = line.get_attribute("data-agreement")
    text = line.inner_text()
    served = api_get(server, f"/v1/tasks/{task_id}/leaderboard")["judge_validation"]
    # the judge (the stub) scored every run and nobody labelled one: the page says so, as the
    # API does (no judge-human pair), and names what adds the figure
    assert served["status"] == "not validated"
    assert sum(entry["pairs"] for entry in served["rubrics"]) == 0
    assert state == "no labels"
    assert "the judge scored runs but nobody labelled them yet" in text
    assert "evalq labels import FILE" in text
    assert "). How the figures read on real data: a published LLM judge against people" in text

    page.locator("#published-link").click()
    expect(
        page.get_by_role("heading", name="Judge-human agreement on a published set")
    ).to_be_visible()
    page.wait_for_load_state()
    shown = [
        " ".join(item.split())
        for item in page.locator("#agreement .judge-validation li").all_inner_texts()
    ]
    head = page.locator("#agreement .judge-validation p.meta").inner_text()
    source = " ".join(page.locator("#published-source").inner_text().split())
    answer = page.locator("#published-answer").inner_text()
    shoot(page, "agreement-published")

    expected = hanna_agreement()
    first, *lines = expected.lines()
    assert head == first == "judge scores: not validated against people's labels"
    assert shown == [" ".join(line.split()) for line in lines]
    assert len(shown) == 6 and all(JUDGE in item and "n 396" in item for item in shown)
    for entry in expected.rubrics:  # each figure with its interval
        assert entry.alpha_ci is not None
        low, high = entry.alpha_ci
        assert any(f"alpha {entry.alpha:.2f} [{low:.2f}, {high:.2f}]" in item for item in shown)
    assert " ".join(SOURCE.split()) in source  # where the figures come from, named
    assert "These are not your runs" in source
    assert "132 stories of the HANNA benchmark" in answer
    watched.clean()
    page.context.close()


def plot_rows(figure: Locator) -> list[tuple[str, str]]:
    """Each bar's row label as drawn (its text, not its tooltip) and the value printed by it."""
    labels = figure.locator("text.row-label").evaluate_all(
        "ts => ts.map(t => [...t.childNodes].filter(n => n.nodeType === 3)"
        ".map(n => n.textContent).join(''))"
    )
    values = figure.locator("text.value").evaluate_all("ts => ts.map(t => t.textContent)")
    return list(zip(labels, values, strict=True))


def overlaps(figure: Locator) -> list[tuple[str, str]]:
    """(value, row label) pairs drawn less than 4 px apart on one row: a value that reads as
    part of a name, or covers it."""
    return figure.evaluate(
        """svg => {
          const box = t => t.getBBox();
          const hit = (a, b) => a.x - 4 < b.x + b.width && b.x < a.x + a.width + 4
            && a.y < b.y + b.height && b.y < a.y + a.height;
          const labels = [...svg.querySelectorAll("text.row-label")];
          return [...svg.querySelectorAll("text.value")].flatMap(v => labels
            .filter(l => hit(box(v), box(l))).map(l => [v.textContent, l.lastChild.textContent]));
        }"""
    )


def differences(report: dict[str, Any], other: str) -> list[tuple[str, str]]:
    """The API's per-task differences (other - reference), printed as signed points."""
    reference = report["reference"]
    return [
        (u["unit"], f"{u['values'][other] - u['values'][reference]:+.2f}")
        for u in report["units"]
        if other in u["values"] and reference in u["values"]
    ]


def test_job_f_two_models_compared_across_the_arena_tasks(server: Server, browser: Browser) -> None:
    watched = signed_in(browser, server, key="read")
    page = watched.page
    page.get_by_role("link", name="Compare", exact=True).click()
    expect(page.get_by_role("heading", name="Compare", exact=True)).to_be_visible()
    page.wait_for_load_state()  # the reads below do not wait: the whole page parsed first
    # the pick-lists: the tasks that exist, and (by model, the default) the models runs carry
    tasks = page.locator("#c-tasks-list option").evaluate_all("os => os.map(o => o.value)")
    arena = sorted(t for t in tasks if t.startswith("arena-"))
    assert arena == sorted(ARENA_TASKS)
    assert page.get_by_label("by", exact=True).input_value() == "model"
    offered = page.locator("#c-values-list option").evaluate_all(
        "os => os.map(o => [o.value, o.label])"
    )
    assert {label for _, label in offered} == {"model"}
    models = [value for value, _ in offered]
    reference, other, third = "gpt-4o", "claude-sonnet-4", "gpt-4.1"
    assert {reference, other, third} <= set(models), models
    page.get_by_label("tasks").fill("arena-*")  # the glob of the Arena tasks
    page.get_by_label("reference group").fill(reference)
    page.get_by_label("group 2").fill(other)
    page.get_by_role("button", name="Compare", exact=True).click()
    expect(page.get_by_role("heading", name=f"{reference} vs {other} by model")).to_be_visible()
    page.wait_for_load_state()
    rows = [cells(r) for r in page.locator("#comparisons tbody tr").all()]
    units = [cells(r) for r in page.locator("#units tbody tr").all()]
    figures = page.locator("main figure svg.signed-bars")
    expect(figures).to_have_count(1)
    drawn = plot_rows(figures.first)
    shoot(page, "compare-models")

    report = api_get(server, "/v1/compare", tasks="arena-*", by="model", values=[reference, other])
    assert report["tasks"] == sorted(ARENA_TASKS)
    assert rows == [comparison_row(c) for c in report["comparisons"]]
    assert units == [
        [u["unit"], *(f"{u['values'][g]:.3f}" for g in report["groups"])] for u in report["units"]
    ]
    # the plot: the point differences, signed to 2 decimals (not percentages), names whole
    assert drawn == differences(report, other)
    assert all(not value.endswith("%") for _, value in drawn)
    assert overlaps(figures.first) == []  # "-11.29" was drawn against its task's name

    # a third model: every group is plotted against the reference, one plot each
    page.get_by_label("group 3").fill(third)
    page.get_by_role("button", name="Compare", exact=True).click()
    expect(figures).to_have_count(2)
    page.wait_for_load_state()
    three = api_get(
        server, "/v1/compare", tasks="arena-*", by="model", values=[reference, other, third]
    )
    titles = figures.evaluate_all("ss => ss.map(s => s.getAttribute('aria-label'))")
    assert titles == [f"{g} - {reference} per task" for g in (other, third)]
    for figure, group in zip(figures.all(), (other, third), strict=True):
        assert plot_rows(figure) == differences(three, group)
    watched.clean()
    page.context.close()


def comparison_row(c: dict[str, Any]) -> list[str]:
    """A row of the comparisons table as the page prints the API's comparison."""

    def num(value: float | None, digits: int = 3) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    d, test, effect = c["difference"], c["test"], c["effect"]
    return [
        c["other"],
        c["design"],
        str(c["pairs"]) if c["pairs"] else f"{c['n_reference']}/{c['n_other']}",
        f"{num(c['mean_reference'])} → {num(c['mean_other'])}",
        f"{num(d['mean_difference'])} [{num(d['low'])}, {num(d['high'])}]" if d else "-",
        f"{test['test']}, p={num(test['p_value'], 4)}" if test else "-",
        num(c["adjusted_p"], 4),
        f"p={num(c['signed_rank']['p_value'], 4)}" if c["signed_rank"] else "-",
        f"p={num(c['mcnemar']['p_value'], 4)}" if c["mcnemar"] else "-",
        f"{num(effect['delta'])} [{num(effect['low'])}, {num(effect['high'])}]" if effect else "-",
        "\n".join([c["conclusion"], *(n for n in c["notes"] if n != c["conclusion"])]),
    ]
