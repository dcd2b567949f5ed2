"""`evalq labels add|import|list|export` through the real script: bad rows named by line, a
bad file stores nothing, an export imports back."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from sqlalchemy import func, select

from evalq.core.settings import Settings
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.store.models import LabelRow
from tests.integration.cli.test_errors import evalq

RUNS = [
    {"id": f"r{i}", "task_id": "t1", "tool": "a", "model": "m", "usage": {"total_tokens": 9}}
    for i in (1, 2)
]


def stored(url: str) -> int:
    with session_scope(url) as session:
        return int(session.scalar(select(func.count()).select_from(LabelRow)) or 0)


def store_with_runs(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'e.db'}"
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": "t1", "category": "debugging"}]))
    assert evalq(["task", "put", "tasks.json"], tmp_path, database_url=url).returncode == 0
    Client(Settings(database_url=url)).submit_many(RUNS)  # stored; not evaluated (no wait)
    return url


def test_add_import_list_export(tmp_path: Path) -> None:
    url = store_with_runs(tmp_path)
    added = evalq(
        ["labels", "add", "r1", "--labeller", "ann", "--score", "constructiveness=4", "--fail"],
        tmp_path,
        database_url=url,
    )
    assert added.returncode == 0, added.stderr
    assert "labelled r1 (task t1) as ann" in added.stdout
    bad = evalq(
        ["labels", "add", "r1", "--labeller", "ann", "--score", "constructiveness=9"],
        tmp_path,
        database_url=url,
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: scores.constructiveness: Value error, a score is")
    (tmp_path / "l.csv").write_text(
        "submission_id,labeller,technical_accuracy,recommendation\n"
        "r1,bob,3,weak_reject\nr2,bob,5,\n"
    )
    imported = evalq(["labels", "import", "l.csv"], tmp_path, database_url=url)
    assert imported.returncode == 0, imported.stderr
    assert "stored 2 labels from l.csv" in imported.stdout and stored(url) == 3
    listed = evalq(["labels", "list", "--task", "t1"], tmp_path, database_url=url)
    assert listed.returncode == 0 and "weak_reject" in listed.stdout and "fail" in listed.stdout
    exported = evalq(["labels", "export", "-o", "out.csv"], tmp_path, database_url=url)
    assert exported.returncode == 0, exported.stderr
    lines = (tmp_path / "out.csv").read_text().splitlines()
    assert len(lines) == 4 and lines[1].startswith("r1,ann,,4,,,false,")
    again = evalq(["labels", "import", "out.csv"], tmp_path, database_url=url)
    assert again.returncode == 0, again.stderr  # the same labels again: replaced, not added
    assert stored(url) == 3
    as_jsonl = evalq(["labels", "export", "--format", "jsonl"], tmp_path, database_url=url)
    rows = [json.loads(line) for line in as_jsonl.stdout.splitlines()]
    assert [(r["submission_id"], r["labeller"]) for r in rows] == [
        ("r1", "ann"),
        ("r1", "bob"),
        ("r2", "bob"),
    ]


def test_a_bad_file_names_its_lines_and_stores_nothing(tmp_path: Path) -> None:
    url = store_with_runs(tmp_path)
    (tmp_path / "bad.csv").write_text(
        "submission_id,labeller,constructiveness\nr1,ann,4\nr2,ann,six\n"
    )
    bad = evalq(["labels", "import", "bad.csv"], tmp_path, database_url=url)
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: bad.csv:3: scores.constructiveness: Value error")
    (tmp_path / "unknown.jsonl").write_text(
        '{"submission_id": "r1", "labeller": "ann", "passed": true}\n\n'
        '{"submission_id": "r9", "labeller": "ann", "passed": true}\n'
    )
    unknown = evalq(["labels", "import", "unknown.jsonl"], tmp_path, database_url=url)
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("error: unknown.jsonl:3: submission_id: no run 'r9'")
    assert stored(url) == 0


def test_bad_rows_and_unknown_runs_are_named_in_one_pass_in_one_error_style(
    tmp_path: Path,
) -> None:
    """A file with bad rows and labels of runs that are not stored: every one named in the
    same list, in line order (the unknown runs were a second pass, after the bad rows were
    fixed), each line ``error: FILE:LINE: field: rule``, exit 2, nothing stored."""
    url = store_with_runs(tmp_path)
    (tmp_path / "mixed.csv").write_text(
        "submission_id,labeller,constructiveness\n"
        "r9,ann,4\n"  # line 2: no such run
        "r1,ann,six\n"  # line 3: a score that is not 1-5
        "r2,ann,3\n"  # line 4: good
        "r8,bob,2\n"  # line 5: no such run
        "r2,ann,4\n"  # line 6: ann labels r2 twice
    )
    mixed = evalq(["labels", "import", "mixed.csv"], tmp_path, database_url=url)
    assert mixed.returncode == 2
    lines = mixed.stderr.splitlines()
    assert all(line.startswith("error: ") for line in lines), lines
    named = [line.removeprefix("error: ").split(": ")[0] for line in lines[:-1]]
    assert named == [f"mixed.csv:{n}" for n in (2, 3, 5, 6)], lines
    assert "no run 'r9' is stored" in lines[0] and "no run 'r8' is stored" in lines[2]
    assert lines[1].startswith("error: mixed.csv:3: scores.constructiveness: ")
    assert lines[-1] == "error: 4 problems; no label of mixed.csv stored"
    assert "Error" not in mixed.stderr
    assert stored(url) == 0


def test_a_usage_error_is_one_line_in_the_same_style(tmp_path: Path) -> None:
    """click's usage errors came in typer's boxed "Error" panel, beside evalq's ``error:``."""
    url = f"sqlite:///{tmp_path / 'e.db'}"
    for args, said in [
        (["labels", "import"], "Missing argument"),
        (["labels", "import", "l.csv", "--bogus"], "No such option: --bogus"),
        (["labels", "add", "r1"], "Missing option '--labeller'"),
        (["compare", "t1", "--by", "model", "--correction", "x"], "Invalid value"),
        (["no-such-command"], "No such command"),
    ]:
        refused = evalq(args, tmp_path, database_url=url)
        assert refused.returncode == 2, (args, refused.stderr)
        assert refused.stderr.startswith(f"error: {said}"), (args, refused.stderr)
        assert refused.stderr.splitlines() == [refused.stderr.strip()], refused.stderr
        assert "--help)" in refused.stderr and "╭" not in refused.stderr
    helped = evalq(["labels"], tmp_path, database_url=url)  # no command: the group's help
    assert helped.returncode == 2 and "import" in helped.stdout and helped.stderr == ""


def test_a_formula_in_a_note_is_quoted_in_the_csv_and_imports_back_unchanged(
    tmp_path: Path,
) -> None:
    url = store_with_runs(tmp_path)
    notes = {"r1": '=HYPERLINK("http://evil.example","open")', "r2": "'=quoted on purpose"}
    client = Client(Settings(database_url=url))
    for run, note in notes.items():  # as any write key could store them
        client.add_label({"submission_id": run, "labeller": "ann", "note": note, "passed": True})
    exported = evalq(["labels", "export", "-o", "out.csv"], tmp_path, database_url=url)
    assert exported.returncode == 0, exported.stderr
    with (tmp_path / "out.csv").open(newline="") as file:
        cells = {row["submission_id"]: row["note"] for row in csv.DictReader(file)}
    assert cells == {"r1": "'" + notes["r1"], "r2": "''=quoted on purpose"}
    again = evalq(["labels", "import", "out.csv"], tmp_path, database_url=url)
    assert again.returncode == 0, again.stderr
    assert {label.submission_id: label.note for label in client.labels()} == notes
    as_jsonl = evalq(["labels", "export", "--format", "jsonl"], tmp_path, database_url=url)
    assert [json.loads(line)["note"] for line in as_jsonl.stdout.splitlines()] == list(
        notes.values()
    )


def test_an_unterminated_quote_or_an_oversized_cell_exits_2_naming_its_line(
    tmp_path: Path,
) -> None:
    """An unterminated quote swallowed the rows after it into one note and exited 0; a huge
    cell ended "unexpected Error: field larger than field limit" with no line."""
    url = store_with_runs(tmp_path)
    header = "submission_id,labeller,constructiveness,note\n"
    (tmp_path / "open.csv").write_text(header + 'r1,ann,4,"never closed\nr2,ann,3,\n')
    (tmp_path / "big.csv").write_text(header + "r1,ann,4,\n" + f'r2,ann,3,"{"n" * 200_000}"\n')
    for name, line, rule in (
        ("open.csv", 2, "a quoted cell starts here and is never closed"),
        ("big.csv", 3, "longer than 65536 characters"),
    ):
        result = evalq(["labels", "import", name], tmp_path, database_url=url)
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith(f"error: {name}:{line}: (row): {rule}"), result.stderr
    assert stored(url) == 0
