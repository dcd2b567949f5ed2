"""What `pip install evalq` gets: the examples `evalq demo` reads, and `evalq --version`.

The wheel is built from this checkout by pip itself (no build isolation: the offline machine has
setuptools in the environment already).
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import evalq
from evalq.producer.cli import EXAMPLES
from tests.support.processes import EVALQ, PATIENCE

ROOT = Path(__file__).resolve().parents[2]


def build_wheel(out: Path) -> Path:
    """Build evalq's wheel from this checkout into ``out``; returns its path."""
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    done = subprocess.run(
        [*pip, "-w", out, ROOT],
        capture_output=True,
        text=True,
        timeout=300 * PATIENCE,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = out.glob("evalq-*.whl")
    return wheel


def test_the_wheel_ships_every_example_the_demo_reads(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    assert wheel.name.startswith(f"evalq-{evalq.__version__}-")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if name.startswith("evalq/examples/")}
    bundled = {
        f"evalq/examples/{p.relative_to(EXAMPLES).as_posix()}"
        for p in EXAMPLES.rglob("*")
        if p.is_file() and p.suffix != ".py"
    }
    assert bundled >= {
        "evalq/examples/tasks.json",
        "evalq/examples/arena.jsonl",
        "evalq/examples/published/hanna_chatgpt_vs_people.jsonl",  # the UI's agreement page
    }
    assert shipped == bundled


def test_the_demo_reads_its_examples_from_the_package() -> None:
    """Not from a checkout's root: an installed evalq has no `examples/` next to it."""
    assert Path(evalq.__file__).parent / "examples" == EXAMPLES
    assert sorted(p.name for p in EXAMPLES.glob("*.json*")) == [
        "arena.jsonl",
        "peerread.jsonl",
        "scylla.jsonl",
        "suite.jsonl",
        "tasks.json",
    ]


def test_evalq_version_prints_the_package_version(tmp_path: Path) -> None:
    done = subprocess.run(
        [EVALQ, "--version"], capture_output=True, text=True, timeout=60 * PATIENCE, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"evalq {evalq.__version__}\n"


def test_the_wheel_ships_the_web_uis_templates_and_static_files(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    package = Path(evalq.__file__).parent
    wanted = {
        f"evalq/{path.relative_to(package).as_posix()}"
        for folder in ("ui/templates", "ui/static")
        for path in (package / folder).iterdir()
    }
    with zipfile.ZipFile(wheel) as archive:
        shipped = set(archive.namelist())
    assert {"evalq/ui/templates/board.html", "evalq/ui/static/ui.js"} <= wanted
    assert wanted <= shipped, sorted(wanted - shipped)
