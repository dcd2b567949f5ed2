"""Times on the pages read to the second, in UTC, and say so."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

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
