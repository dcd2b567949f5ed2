"""The generic JSON Lines and CSV mapping, on published files (tests/data/importers: an
`oaieval` record log and a promptfoo CSV output) and variants of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalq.core.errors import InvalidInput
from evalq.producer.importers.generic import ColumnMap, plan_csv, plan_jsonl

DATA = Path(__file__).parents[3] / "data" / "importers"
RECORD_LOG = (DATA / "oaieval_record.jsonl").read_bytes()
PIRATE = (DATA / "promptfoo_output.csv").read_bytes()
MATCHES = ColumnMap(
    output_col="data.sampled",
    task_id="test-match",
    score_col="data.correct",
    id_col="sample_id",
    model="auto_gpt_completion_fn",
    where="type=match",
)
PIRATE_COLUMNS = ColumnMap(
    output_col="Rephrase this from English to Pirate: {{body}}",
    task_id="pirate",
    score_col="RESULT",
)


def test_json_lines_map_by_dotted_columns_and_keep_only_the_rows_asked_for() -> None:
    plan = plan_jsonl(RECORD_LOG, MATCHES)
    assert [task.id for task in plan.tasks] == ["test-match"]
    runs = {run.id: run for run in plan.submissions}
    assert list(runs) == [
        "import-test-match.s1.2",
        "import-test-match.s1.1",
        "import-test-match.s1.0",
    ]
    washington = runs["import-test-match.s1.1"]
    assert (washington.output, washington.model, washington.tool) == (
        "George Washington",
        "auto_gpt_completion_fn",
        "import",
    )
    assert washington.metadata == {"imported_grader": "import", "imported_score": True}
    assert washington.usage.total_tokens == 0  # no token column named


def test_csv_rows_without_an_id_are_named_by_their_content() -> None:
    first = plan_csv(PIRATE, PIRATE_COLUMNS)
    again = plan_csv(PIRATE, PIRATE_COLUMNS)
    assert [s.id for s in first.submissions] == [s.id for s in again.submissions]
    assert len({s.id for s in first.submissions}) == 2
    assert first.submissions[0].output == "Ahoy mateys o' the world!"
    assert first.submissions[0].metadata["imported_score"] == "PASS"
    scored = plan_csv(
        b"task,out,score,tokens\nt,hi,0.5,12\n",
        ColumnMap(output_col="out", task_col="task", score_col="score", total_tokens_col="tokens"),
    )
    assert scored.submissions[0].metadata["imported_score"] == 0.5
    assert scored.submissions[0].usage.total_tokens == 12


def test_a_row_that_cannot_be_mapped_is_named_by_its_line() -> None:
    with pytest.raises(InvalidInput) as refused:
        plan_csv(PIRATE, ColumnMap(output_col="answer", task_id="pirate"))
    assert refused.value.problems == [("line 1", "no column 'answer' in the header")]
    broken = RECORD_LOG.replace(b'"data": {"correct": true, ', b'"data": {')
    with pytest.raises(InvalidInput) as refused:
        plan_jsonl(broken, MATCHES)
    assert refused.value.problems == [
        ("line 6: data.correct", "missing: the row has no such column")
    ]
    multiline = b'task,out,tokens\nt,"two\nlines",3\nt,x,many\n'
    with pytest.raises(InvalidInput) as refused:
        plan_csv(multiline, ColumnMap(output_col="out", task_col="task", total_tokens_col="tokens"))
    assert refused.value.problems == [("line 4: tokens", "must be a token count, not 'many'")]


def test_a_map_without_its_task_or_with_half_the_tokens_is_refused() -> None:
    with pytest.raises(InvalidInput) as refused:
        ColumnMap(output_col="out")
    assert refused.value.problems[0][0] == "task_col"
    with pytest.raises(InvalidInput) as refused:
        ColumnMap(output_col="out", task_id="t", input_tokens_col="in")
    assert refused.value.problems[0][0] == "input_tokens_col"
    with pytest.raises(InvalidInput) as refused:
        ColumnMap(output_col="out", task_id="t", where="type")
    assert refused.value.problems == [("where", "must be COLUMN=VALUE")]
