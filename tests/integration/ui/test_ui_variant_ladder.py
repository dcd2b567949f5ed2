"""The Scylla board page answers "is T2 worth its cost over T1" with the CLI's answer.

A real `evalq api` (SQLite, then PostgreSQL; no broker) over the bundled Scylla example, read
in Debian's Chromium: the board's Comparisons section holds the verdict between any two
variants, and each verdict, its interval and its p-value are the ones `evalq compare TASK
--by variant` prints for the same store (one read computes them:
`evalq.read.leaderboard.board_figures`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect, sync_playwright
from typer.testing import CliRunner

from evalq.producer.cli import app
from evalq.producer.http import HttpClient
from tests.integration.api.conftest import Server, example_task, examples, serve_api
from tests.support.at_rest import wait_at_rest
from tests.support.browser import patient
from tests.support.processes import PATIENCE
from tests.support.tools import required_program

pytestmark = [pytest.mark.browser, pytest.mark.both_databases, pytest.mark.timeout(900)]

SCYLLA = "scylla-token-bucket"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    with serve_api(request.param, tmp_path_factory.mktemp("ladder"), broker=False) as api:
        runs = examples("scylla")
        with HttpClient(api.url, api_key=api.keys["rw"], timeout=60 * PATIENCE) as client:
            client.put_task(example_task(SCYLLA))
            client.submit_many(runs)
            statuses = client.wait([r["id"] for r in runs], timeout=600 * PATIENCE)
        assert set(statuses.values()) == {"done"}, statuses
        wait_at_rest(api.db_url)  # the refresh the merges scheduled has run
        yield api


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = required_program("chromium", "apt-get install chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


def cli_comparison(server: Server, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("EVALQ_DATABASE_URL", server.db_url)
    done = CliRunner().invoke(app, ["compare", SCYLLA, "--by", "variant", "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.output)


def test_the_board_s_verdict_between_any_two_variants_is_the_cli_s(
    server: Server, browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    context = patient(
        browser.new_context(viewport={"width": 1400, "height": 900}, base_url=server.url)
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto("/")
    page.get_by_label("API key").fill(server.keys["rw"])
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Tasks", exact=True)).to_be_visible()
    page.goto(f"/ui/tasks/{SCYLLA}")
    section = page.locator("section#compare")
    expect(section.get_by_role("heading", name="Comparisons")).to_be_visible()
    expect(section.get_by_role("heading", name="Any two variants")).to_be_visible()

    printed = cli_comparison(server, monkeypatch)
    ladder = printed["variants"]
    pairs = {(s["source"], s["target"]): s for s in ladder["pairs"]}
    assert set(pairs) == {(f"T{a}", f"T{b}") for a in range(4) for b in range(a + 1, 4)}
    for (source, target), step in pairs.items():
        row = section.locator(f'#pairs tr[data-step="{source}-{target}"]')
        expect(row).to_have_attribute("data-verdict", step["verdict"])
        d = step["difference"]
        shown = f"{d['mean_difference']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}]"
        expect(row).to_contain_text(shown)
    # job (c): is T2 worth its cost over T1? The same answer, interval and p as the CLI's
    t1_t2 = section.locator('#pairs tr[data-step="T1-T2"]')
    expect(t1_t2).to_have_attribute("data-verdict", pairs[("T1", "T2")]["verdict"])
    expect(t1_t2).to_contain_text(f"{pairs[('T1', 'T2')]['adjusted_p']:.3g}")
    # the tests by variant beside it: the same family, so the same verdicts over T0
    for c in printed["comparisons"]:
        step = pairs[("T0", c["other"])]
        assert c["rejected"] == (step["verdict"] != "inconclusive")
        assert c["adjusted_p"] == pytest.approx(step["adjusted_p"])
        row = section.locator(f'#comparisons tr[data-other="{c["other"]}"]')
        expect(row).to_contain_text(c["conclusion"])
    # the verdict's board says where the rest is, and it is there
    expect(page.locator("section.verdict")).to_contain_text("Comparisons below")
    assert re.search(r"holm", section.inner_text())
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    assert errors == []
    context.close()
