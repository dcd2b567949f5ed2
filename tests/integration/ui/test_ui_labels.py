"""People's labels in the UI, driven by Playwright in Debian's Chromium against a real `evalq api`
(on SQLite, then PostgreSQL: one store per database for the module; no broker: it evaluates
what it receives itself).

The store holds the bundled PeerRead runs, judged by `OpenAIStub` (a local OpenAI-compatible
server: every run carries rubric scores), so the judge's agreement with people is a figure that
a label moves. A label added on a run page moves the agreement the board shows; the labelling
queue moves on to the next run (by keys, and as a plain form without script); a bad label is
refused naming its field and rule, and nothing is stored; a post from another origin is refused.
A run whose output tries to instruct its evaluator is marked on the board, its page and the API.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, Route, expect, sync_playwright

from evalq.core.judge_validation import JudgeValidation
from evalq.core.labels import EMPTY_RULE, SCORE_RULE
from evalq.producer.cli import EXAMPLES
from evalq.producer.http import HttpClient
from tests.integration.api.conftest import Server, examples, serve_api
from tests.integration.ui.test_ui_browser import shoot
from tests.support.at_rest import wait_at_rest
from tests.support.browser import patient
from tests.support.openai_stub import OpenAIStub
from tests.support.processes import HTTP_TIMEOUT, PATIENCE
from tests.support.tools import required_program

pytestmark = [pytest.mark.browser, pytest.mark.both_databases, pytest.mark.timeout(900)]

PEERREAD, ARENA = "peerread-salience-gating", "arena-frontend-dark-mode"
INJECTION = "peer-05-injection"
ATTACKER = "http://attacker.test"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """`evalq api` over the bundled tasks, the PeerRead runs (judged) and one Arena task's."""
    directory = tmp_path_factory.mktemp("ui-labels")
    with OpenAIStub() as stub:
        judge = {
            "judge_model": "openai:stub-judge",
            "judge_base_url": stub.base_url,
            "judge_api_key": "sk-test",
            "judge_max_attempts": "1",
            "judge_backoff_base_s": "0",
        }
        with serve_api(request.param, directory, broker=False, extra=judge) as api:
            runs = examples("peerread") + [r for r in examples("arena") if r["task_id"] == ARENA]
            with HttpClient(api.url, api_key=api.keys["rw"], timeout=60 * PATIENCE) as client:
                for task in json.loads((EXAMPLES / "tasks.json").read_text()):
                    client.put_task(task)
                for start in range(0, len(runs), 40):
                    client.submit_many(runs[start : start + 40])
                statuses = client.wait([r["id"] for r in runs], timeout=600 * PATIENCE)
            assert set(statuses.values()) <= {"done", "degraded"}, statuses
            wait_at_rest(api.db_url)  # the refreshes the merges scheduled have run
            yield api


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = required_program("chromium", "apt-get install chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


def signed_in(browser: Browser, server: Server, key: str = "rw", *, script: bool = True) -> Page:
    """A fresh browser context signed in with the named key through the form."""
    context = patient(
        browser.new_context(
            viewport={"width": 1400, "height": 900}, base_url=server.url, java_script_enabled=script
        )
    )
    page = context.new_page()
    page.goto("/")
    page.get_by_label("API key").fill(server.keys[key])
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Tasks", exact=True)).to_be_visible()
    return page


def api(server: Server) -> HttpClient:
    return HttpClient(server.url, api_key=server.keys["rw"], timeout=60 * PATIENCE)


def agreement_text(server: Server, task_id: str) -> str:
    """What the board's agreement block must say: the API's validation, in its own words."""
    with api(server) as client:
        served = client.leaderboard(task_id)["judge_validation"]
    return "\n".join(line.strip() for line in JudgeValidation.model_validate(served).lines())


def shown_agreement(page: Page) -> str:
    lines = page.locator("#agreement .judge-validation").first.inner_text().splitlines()
    return "\n".join(line.strip() for line in lines if line.strip())


def labels_of(server: Server, submission_id: str) -> list[dict[str, Any]]:
    with api(server) as client:
        return [
            label.model_dump(mode="json") for label in client.labels(submission_id=submission_id)
        ]


def test_a_label_added_on_a_run_page_moves_the_judge_human_agreement(
    server: Server, browser: Browser
) -> None:
    page = signed_in(browser, server)
    with api(server) as client:  # two labels already: an agreement figure exists
        client.add_labels(
            [
                {
                    "submission_id": "peer-01-balanced",
                    "labeller": "ann",
                    "scores": {"constructiveness": 5, "technical_accuracy": 4},
                },
                {
                    "submission_id": "peer-07-terse",
                    "labeller": "ann",
                    "scores": {"constructiveness": 1, "technical_accuracy": 2},
                },
            ]
        )
    page.goto(f"/ui/tasks/{PEERREAD}")
    before = agreement_text(server, PEERREAD)
    assert "not validated" in before and "n 2" in before
    expect(page.locator("#agreement")).to_contain_text("Judge-human agreement")
    assert shown_agreement(page) == before

    run = "peer-06-parrot"
    page.goto(f"/ui/runs/{run}")
    form = page.locator("#label-form")
    form.locator('fieldset[data-rubric="constructiveness"]').get_by_label("2").check()
    form.locator('fieldset[data-rubric="technical_accuracy"]').get_by_label("3").check()
    form.get_by_label("recommendation").select_option("reject")
    form.get_by_label("note").fill("Parrots the paper's abstract.")
    form.get_by_role("button", name="Save label").click()
    expect(page.locator("#labels [role=status]")).to_have_text(f"Label of {run} saved.")
    expect(page.locator('#run-labels tr[data-labeller="rw"]')).to_contain_text("constructiveness 2")
    (stored,) = labels_of(server, run)
    assert stored["labeller"] == "rw" and stored["recommendation"] == "reject"
    assert stored["scores"] == {"technical_accuracy": 3, "constructiveness": 2}

    after = agreement_text(server, PEERREAD)
    assert after != before and "n 3" in after
    assert shown_agreement(page) == after  # the run page shows the task's agreement too
    page.locator("#labels").scroll_into_view_if_needed()
    shoot(page, "run-labels")
    page.goto(f"/ui/tasks/{PEERREAD}")
    assert shown_agreement(page) == after
    page.context.close()


def queue_run(page: Page) -> str:
    shown = page.locator("#queue-run").get_attribute("data-run")
    assert shown
    return shown


def waiting(page: Page) -> int:
    found = re.match(r"(\d+) run", page.locator("#queue-waiting").inner_text())
    assert found
    return int(found.group(1))


def keys_ready(page: Page) -> None:
    """Wait for the page's script to take the queue's keys: it marks the first rubric when it has.

    The form and its run id are in the document before the deferred script runs, so a key
    pressed as soon as they show can reach a page that does not listen yet (on a loaded machine
    CI stored a label without its scores: the score keys went nowhere, `p` and Enter did not).
    """
    expect(page.locator("#queue-run fieldset.score.current")).to_have_count(1)


def test_the_labelling_queue_scores_by_keys_and_moves_to_the_next_run(
    server: Server, browser: Browser
) -> None:
    page = signed_in(browser, server)
    page.get_by_role("link", name="Label", exact=True).click()
    page.get_by_label("task").select_option(ARENA)
    page.get_by_role("button", name="Show").click()
    first, left = queue_run(page), waiting(page)
    shoot(page, "labels")
    assert first.startswith("arena-") and left >= 3
    keys_ready(page)
    page.keyboard.press("4")  # the first rubric, then the next
    page.keyboard.press("2")
    page.keyboard.press("p")
    page.keyboard.press("Enter")
    expect(page.locator("[role=status]").first).to_have_text(f"Label of {first} saved.")
    second = queue_run(page)
    assert second != first and waiting(page) == left - 1
    (stored,) = labels_of(server, first)
    assert stored["scores"] == {"technical_accuracy": 4, "constructiveness": 2}
    assert stored["passed"] is True

    keys_ready(page)
    page.keyboard.press("s")  # skip: the next run, nothing stored
    expect(page.locator("#queue-run")).not_to_have_attribute("data-run", second)
    third = queue_run(page)
    assert third > second and waiting(page) == left - 1
    assert labels_of(server, second) == []
    page.context.close()

    plain = signed_in(browser, server, script=False)  # the same form, no script
    plain.goto(f"/ui/labels?task={ARENA}")
    shown = queue_run(plain)
    plain.get_by_role("radio", name="fail").check()
    plain.get_by_role("button", name="Save label").click()
    expect(plain.locator("[role=status]").first).to_have_text(f"Label of {shown} saved.")
    assert queue_run(plain) != shown
    assert labels_of(server, shown)[0]["passed"] is False
    plain.context.close()


def test_a_bad_label_is_refused_naming_the_field_and_nothing_is_stored(
    server: Server, browser: Browser
) -> None:
    run = "peer-02-generic"
    page = signed_in(browser, server)
    page.goto(f"/ui/runs/{run}")
    page.locator("#label-form").get_by_role("button", name="Save label").click()  # nothing chosen
    expect(page.locator("#label-problems")).to_have_text(f"scores: {EMPTY_RULE}")
    assert labels_of(server, run) == []

    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    csrf = page.locator('#label-form input[name="csrf"]').get_attribute("value")
    assert csrf
    base = {"csrf": csrf, "submission_id": run, "next": f"/ui/runs/{run}"}
    for fields, named, rule in [
        ({"score_constructiveness": "7"}, "scores.constructiveness", SCORE_RULE),
        ({"score_originality": "3"}, "scores.originality.[key]", "technical_accuracy"),
        ({"recommendation": "maybe"}, "recommendation", "accept"),
        ({"passed": "perhaps", "score_constructiveness": "3"}, "passed", ""),
        ({"score_constructiveness": "3", "note": "x" * 2001}, "note", "2000"),
    ]:
        refused = httpx.post(
            f"{server.url}/ui/labels", data=base | fields, cookies=cookies, timeout=HTTP_TIMEOUT
        )
        assert refused.status_code == 422, (fields, refused.text[:300])
        problems = re.search(r'id="label-problems">(.*?)</ul>', refused.text, re.DOTALL)
        assert problems and f"<li>{named}: " in problems.group(1), (fields, refused.text[:300])
        assert rule in problems.group(1)
    assert labels_of(server, run) == []
    page.context.close()


def test_a_label_needs_the_write_scope_and_the_forms_token(
    server: Server, browser: Browser
) -> None:
    run = "peer-03-wrong-paper"
    reader = signed_in(browser, server, key="read")
    reader.goto(f"/ui/runs/{run}")
    expect(reader.locator("#labels")).to_contain_text("Labelling needs the write scope.")
    read_cookies = {c["name"]: c["value"] for c in reader.context.cookies()}
    token = reader.locator('header input[name="csrf"]').get_attribute("value")
    data = {"submission_id": run, "score_constructiveness": "4"}
    no_scope = httpx.post(
        f"{server.url}/ui/labels",
        data=data | {"csrf": token},
        cookies=read_cookies,
        timeout=HTTP_TIMEOUT,
    )
    assert no_scope.status_code == 403 and "write scope" in no_scope.text
    reader.context.close()

    writer = signed_in(browser, server)
    cookies = {c["name"]: c["value"] for c in writer.context.cookies()}
    for wrong in ({}, {"csrf": "x" * 43}):
        refused = httpx.post(
            f"{server.url}/ui/labels", data=data | wrong, cookies=cookies, timeout=HTTP_TIMEOUT
        )
        assert refused.status_code == 403 and "CSRF" in refused.text
    assert labels_of(server, run) == []

    # another origin's page posting to the label form: the session cookie is SameSite=Strict,
    # so the post arrives signed out and stores nothing, and the browser lands on the sign-in
    form = "".join(
        f'<input name="{name}" value="{value}">' for name, value in (data | {"next": "/"}).items()
    )
    page_html = (
        f'<form id="f" method="post" action="{server.url}/ui/labels">{form}</form>'
        '<script>document.getElementById("f").submit()</script>'
    )

    def attacker_page(route: Route) -> None:
        route.fulfill(status=200, content_type="text/html", body=page_html)

    writer.context.route(f"{ATTACKER}/**", attacker_page)
    writer.goto(f"{ATTACKER}/prize")
    expect(writer).to_have_url(re.compile(re.escape(f"{server.url}/ui/login?next=")))
    assert labels_of(server, run) == []
    writer.goto(f"/ui/runs/{run}")  # still signed in: only the forged post was refused
    expect(writer.locator("h1")).to_have_text(f"Run {run}")
    writer.context.close()


def test_a_run_that_tries_to_instruct_its_evaluator_is_marked(
    server: Server, browser: Browser
) -> None:
    with api(server) as client:
        entries = client.leaderboard(PEERREAD)["entries"]
    marked = {e["submission_id"]: e["injection"] for e in entries if e["injection"]}
    assert list(marked) == [INJECTION]
    kinds = [note.split(":", 1)[0] for note in marked[INJECTION]]  # each mark: kind: "sentence"
    assert kinds == ["orders the evaluator to ignore its instructions", "awards itself a score"]
    page = signed_in(browser, server)
    page.goto(f"/ui/tasks/{PEERREAD}")
    expect(page.locator("#board .mark.injection")).to_have_count(1)
    expect(page.locator(f'#board tr[data-run="{INJECTION}"] .mark.injection')).to_have_text(
        "injection attempt"
    )
    shoot(page, "board-peerread-labelled")
    page.goto(f"/ui/runs/{INJECTION}")
    expect(page.locator("#injection-mark")).to_have_text("injection attempt")
    expect(page.locator("dl.facts")).to_contain_text("orders the evaluator")
    page.goto("/ui/runs/peer-01-balanced")
    expect(page.locator("#injection-mark")).to_have_count(0)
    page.context.close()
