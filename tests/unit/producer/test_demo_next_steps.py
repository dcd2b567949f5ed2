"""`evalq demo`'s last lines name the `evalq` the person can type: the venv's path when the venv
is not activated (after `make demo`), the bare name when PATH finds it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evalq.producer.cli.demo import UI_URL, next_steps


@pytest.fixture
def venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clone with a .venv whose python runs this process, as after `make demo`."""
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "evalq", "pip"):
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    return bin_dir


def test_after_make_demo_the_commands_name_the_venvs_evalq(venv: Path) -> None:
    lines = next_steps(has_api_extra=True)
    assert [line.split("#")[0].strip() for line in lines[-3:-1]] == [
        ".venv/bin/evalq keys create --name me --scopes read,write",
        ".venv/bin/evalq api",
    ]
    assert lines[-1] == f"then open {UI_URL} and sign in with the key."
    assert not any("pip" in line for line in lines)


def test_with_the_venv_activated_the_bare_name_and_without_the_api_extra_its_install(
    venv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{venv}:/usr/bin:/bin")
    lines = next_steps(has_api_extra=False)
    assert f"  evalq api   # serves {UI_URL}" in lines
    assert any(line.strip().startswith("pip install -e '.[api]'") for line in lines)
