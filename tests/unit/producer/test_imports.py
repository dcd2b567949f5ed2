"""A producer-only install must not need torch: the producer side never imports it."""

from __future__ import annotations

import subprocess
import sys

PRODUCER_MODULES = [
    "evalq.producer.client",
    "evalq.producer.cli",
    "evalq.producer.leaderboard",
    "evalq.workers.chords",
    "evalq.scoring.evaluation",
]


def test_producer_side_does_not_import_torch_or_the_tier_code() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {module}\n" for module in PRODUCER_MODULES)
        + "heavy = sorted(m for m in ('torch', 'transformers', 'sklearn', 'torchmetrics',"
        " 'pydantic_ai', 'evalq.tasks.tiers', 'evalq.metrics.semantic') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == ""


def test_base_dependencies_leave_torch_to_the_worker_extra() -> None:
    import tomllib
    from pathlib import Path

    project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
    base = " ".join(project["dependencies"])
    assert "torch" not in base and "transformers" not in base and "scikit-learn" not in base
    assert any(
        dep.startswith("torch==2.13.0") for dep in project["optional-dependencies"]["worker"]
    )
