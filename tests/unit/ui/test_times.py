"""Times on the pages read to the second, in UTC, and say so."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import evalq.ui
from evalq.core.review_decisions import ReviewDecision
from evalq.ui.web import templates


def shown(value: datetime | str | None) -> str:
    return templates.from_string("{{ t|when }}").render(t=value)


def test_a_stored_time_prints_to_the_second_in_utc_without_microseconds() -> None:
    # the run page printed "2026-11-24 10:31:07.483920" (no zone, microseconds)
    assert shown(datetime(2026, 11, 24, 10, 31, 7, 483920)) == "2026-11-24 10:31:07 UTC"


def test_an_aware_time_is_turned_into_utc_and_none_is_a_dash() -> None:
    cet = timezone(timedelta(hours=1))
    assert shown(datetime(2026, 11, 24, 11, 31, 7, tzinfo=cet)) == "2026-11-24 10:31:07 UTC"
    assert shown(datetime(2026, 11, 24, 10, 31, 7, tzinfo=UTC)) == "2026-11-24 10:31:07 UTC"
    assert shown(None) == "-"


def test_the_iso_text_the_read_side_serves_prints_the_same() -> None:
    assert shown("2026-11-24T10:31:07.483920+00:00") == "2026-11-24 10:31:07 UTC"
    assert shown("2026-11-24T10:31:07.483920") == "2026-11-24 10:31:07 UTC"
    assert shown("") == "-"


def test_every_page_prints_its_times_through_the_one_helper() -> None:
    # the tasks page printed last activity with its own isoformat (no zone named)
    folder = Path(evalq.ui.__file__).parent / "templates"
    for page in folder.glob("*.html"):
        text = page.read_text()
        assert "isoformat" not in text and "strftime" not in text, page.name


def test_a_review_decision_reads_who_when_to_the_second_and_why() -> None:
    decision = ReviewDecision(
        action="unaccept",
        by="ana",
        reason="the <b>cache</b> was the test's",
        decided_at=datetime(2026, 11, 24, 10, 31, 7, 483920, tzinfo=UTC),
    )
    html = templates.get_template("_review_decisions.html").render(decisions=[decision])
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    assert text == (
        "un-accepted by ana at 2026-11-24 10:31:07 UTC: the &lt;b&gt;cache&lt;/b&gt; was the "
        "test&#39;s"
    )
