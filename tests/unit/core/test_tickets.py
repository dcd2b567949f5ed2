"""Run tickets on the wire: a plan's rules, one model for every door, and the ticket a run
carries (`evalq.core.tickets`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.schemas import Submission, canonical_hash, parse_submission
from evalq.core.tickets import MAX_DEADLINE_DAYS, MAX_TICKETS, parse_plan_request

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
PLAN = {"variant": "T1", "runs": 3, "deadline": "2026-12-01T00:00Z"}
RUN = {"id": "r1", "task_id": "t", "tool": "a", "model": "m", "usage": {"total_tokens": 1}}
TICKET = "tkt_" + "a" * 32


def problems(data: Any, now: datetime | None = NOW) -> list[tuple[str, str]]:
    with pytest.raises(InvalidInput) as refused:
        parse_plan_request(data, now=now)
    return refused.value.problems


def test_a_plan_is_read_with_its_deadline_in_utc() -> None:
    found = parse_plan_request(PLAN | {"seeds": [1, 2, 3]}, now=NOW)
    assert (found.variant, found.runs, found.seeds) == ("T1", 3, [1, 2, 3])
    assert found.deadline == datetime(2026, 12, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("changes", "field", "rule"),
    [
        ({"runs": 0}, "runs", "greater than or equal to 1"),
        ({"runs": MAX_TICKETS + 1}, "runs", f"less than or equal to {MAX_TICKETS}"),
        ({"runs": "3"}, "runs", "valid integer"),
        ({"variant": "B"}, "variant", "should match pattern"),
        ({"seeds": [1, 2]}, "(root)", "2 seeds for 3 runs"),
        ({"seeds": [1, 2, -3]}, "seeds.2", "greater than or equal to 0"),
        ({"deadline": "soon"}, "deadline", "valid datetime"),
        ({"deadline": "2026-11-28T11:00Z"}, "deadline", "must be in the future"),
        ({"deadline": "2026-12-01T00:00"}, "deadline", "must carry a time zone"),
        (
            {"deadline": (NOW + timedelta(days=MAX_DEADLINE_DAYS + 1)).isoformat()},
            "deadline",
            f"at most {MAX_DEADLINE_DAYS} days ahead",
        ),
        ({"owner": "me"}, "owner", "Extra inputs are not permitted"),
    ],
)
def test_a_bad_plan_names_the_field_and_the_rule(
    changes: dict[str, Any], field: str, rule: str
) -> None:
    found = problems(PLAN | changes)
    assert any(f == field and rule in r for f, r in found), found


def test_a_missing_field_is_named() -> None:
    assert ("runs", "Field required") in problems({"variant": "T1", "deadline": PLAN["deadline"]})


def test_a_client_checks_the_shape_and_leaves_the_clock_to_the_server() -> None:
    past = PLAN | {"deadline": "2020-01-01T00:00Z"}
    assert parse_plan_request(past, now=None).runs == 3
    assert problems(past)[0][0] == "deadline"
    assert problems(PLAN | {"deadline": "2026-12-01T00:00"}, now=None)[0][0] == "deadline"


def test_a_ticket_is_a_variant_s_and_is_part_of_the_run_s_content() -> None:
    with pytest.raises(InvalidInput) as refused:
        parse_submission(RUN | {"ticket": TICKET})
    assert refused.value.problems == [
        ("ticket", "Value error, needs a variant: a run ticket is a variant's")
    ]
    with pytest.raises(InvalidInput) as refused:
        parse_submission(RUN | {"variant": "T1", "ticket": "tkt_short"})
    assert refused.value.problems[0][0] == "ticket"
    plain = Submission.model_validate(RUN | {"variant": "T1"})
    ticketed = Submission.model_validate(RUN | {"variant": "T1", "ticket": TICKET})
    # a run without a ticket hashes as before the field existed; with one, it is other content
    before = plain.model_dump(mode="json", exclude={"metadata", "planned_runs", "ticket"})
    assert plain.content_hash() == canonical_hash(before)
    assert ticketed.content_hash() != plain.content_hash()
