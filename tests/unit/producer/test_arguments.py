"""Command-line values the store cannot hold are named with their option and the rule."""

from __future__ import annotations

import os
from pathlib import Path

from evalq.core.storable import SURROGATE_RULE
from evalq.producer.cli.arguments import unstorable

BAD = os.fsdecode(b"a\xff")  # a byte that is not UTF-8, as Python hands it over


def test_a_value_is_named_by_its_option_or_as_an_argument() -> None:
    assert unstorable(["labels", "list", "--labeller", BAD]) == [("--labeller", SURROGATE_RULE)]
    assert unstorable(["labels", "list", f"--task={BAD}"]) == [("--task", SURROGATE_RULE)]
    assert unstorable(["status", BAD]) == [("argument 'a\\udcff'", SURROGATE_RULE)]
    assert unstorable(["leaderboard", "--", BAD]) == [("argument 'a\\udcff'", SURROGATE_RULE)]


def test_storable_values_and_existing_file_names_pass(tmp_path: Path) -> None:
    assert unstorable(["labels", "list", "--labeller", "été 🙂", "--task=t1"]) == []
    named = tmp_path / BAD
    named.write_text("")
    assert unstorable(["submit", str(named)]) == []
