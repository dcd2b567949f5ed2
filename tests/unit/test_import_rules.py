"""The import rules of docs/architecture.md, checked mechanically.

Every ``import`` in ``src/evalq`` counts, those inside functions too (a lazy import is still a
dependency); modules named in strings (the task modules a worker loads by name) do not.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.processes import PATIENCE

SRC = Path(__file__).resolve().parents[2] / "src" / "evalq"

PURE = ("core", "stats", "metrics", "scoring", "judge")
OUTSIDE_PURE = (
    "evalq.store",
    "evalq.tasks",
    "evalq.workers",
    "evalq.read",
    "evalq.producer",
    "evalq.report",
    "celery",
    "kombu",
    "sqlalchemy",
    "alembic",
    "fastapi",
)
ABOVE_READ = ("evalq.service", "evalq.ui")
"""Packages above the read side: the application service and the UI."""
RULES: dict[str, tuple[str, ...]] = {
    # package -> module prefixes it must never import
    "core": (
        "evalq.stats",
        "evalq.metrics",
        "evalq.scoring",
        "evalq.judge",
        *OUTSIDE_PURE,
        "redis",
        "torch",
    ),
    # the statistics toolkit: knows nothing of the specifications, the tiers or the traces
    "stats": (
        "evalq.metrics",
        "evalq.scoring",
        "evalq.judge",
        "evalq.traces",
        *OUTSIDE_PURE,
        "redis",
        "torch",
    ),
    "metrics": ("evalq.scoring", "evalq.judge", *OUTSIDE_PURE),
    "scoring": ("evalq.metrics", "evalq.judge", *OUTSIDE_PURE),
    "judge": ("evalq.scoring", *OUTSIDE_PURE),
    # OTLP in: pure conversion, core only (no Redis either: it never talks to a service)
    "traces": ("evalq.metrics", "evalq.scoring", "evalq.judge", *OUTSIDE_PURE, "redis", "torch"),
    "workers": ("evalq.tasks", "evalq.read", "evalq.producer", "evalq.report", *ABOVE_READ),
    "store": (
        "evalq.tasks",
        "evalq.workers",
        "evalq.read",
        "evalq.producer",
        "evalq.report",
        *ABOVE_READ,
    ),
    "read": (
        "evalq.tasks",
        "evalq.workers",
        "evalq.producer",
        "evalq.report",
        "celery",
        *ABOVE_READ,
    ),
    "report": (
        "evalq.store",
        "evalq.tasks",
        "evalq.workers",
        "evalq.producer",
        "celery",
        *ABOVE_READ,
    ),
    # the application service: every door calls it, it calls no door and no task's code; of the
    # metrics only the graph tier's (pure, no torch), which the intake computes for a run with
    # nothing else to fan out
    "service": (
        "evalq.producer",
        "evalq.tasks",
        "evalq.ui",
        "evalq.report",
        "evalq.metrics.text",
        "evalq.metrics.semantic",
        "evalq.metrics.similarity",
        "evalq.metrics.embedding_cache",
        "torch",
    ),
    # Celery's tasks: call the service and the read side, never a door
    "tasks": ("evalq.producer", "evalq.ui", "evalq.report"),
    # the web UI: a reader of read/ and report/ like the API's routes (which mount it, so it
    # never imports them); never a tier's code
    "ui": (
        "evalq.tasks",
        "evalq.metrics",
        "evalq.judge",
        "evalq.scoring",
        "evalq.producer",
        "celery",
        "torch",
    ),
    # the front doors: anything below them, but never a tier's code (torch)
    "producer": ("evalq.metrics",),
    # the HTTP client: a base URL and an API key, no store, no broker, no server code
    "producer/http": (
        "evalq.store",
        "evalq.tasks",
        "evalq.workers",
        "evalq.read",
        "evalq.report",
        "evalq.service.client",
        "evalq.service.trace_sweep",
        "evalq.producer.api",
        "evalq.producer.cli",
        "celery",
        "kombu",
        "sqlalchemy",
        "alembic",
        "fastapi",
        "redis",
        "torch",
    ),
}

FRONT_DOORS = [
    "evalq.service.client",
    "evalq.producer.cli",
    "evalq.producer.files",
    "evalq.producer.api.app",
    "evalq.ui.mount",
    "evalq.producer.api.routes.submissions",
    "evalq.producer.api.routes.tasks",
    "evalq.producer.api.routes.health",
    "evalq.producer.api.routes.traces",
    "evalq.traces",
    "evalq.producer.api.routes.webhooks",
    "evalq.read.leaderboard",
    "evalq.read.reports",
    "evalq.read.report_data",
    "evalq.report",
    "evalq.workers.chords",
    "evalq.workers.app",
    "evalq.scoring.evaluation",
]
HEAVY = (
    "torch",
    "transformers",
    "sklearn",
    "torchmetrics",
    "pydantic_ai",
    "evalq.tasks.tiers",
    "evalq.metrics.semantic",
)


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, absolute names (``from . import x`` resolved)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = ".".join(path.relative_to(SRC.parent).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def violations(package: str, forbidden: tuple[str, ...]) -> list[str]:
    """``file: module`` for each forbidden import in ``src/evalq/<package>``."""
    found = []
    for path in sorted((SRC / package).rglob("*.py")):
        for module in sorted(imported_modules(path)):
            if any(module == f or module.startswith(f + ".") for f in forbidden):
                found.append(f"{path.relative_to(SRC)}: {module}")
    return found


@pytest.mark.parametrize("package", sorted(RULES))
def test_package_imports_only_what_its_layer_allows(package: str) -> None:
    assert violations(package, RULES[package]) == []


def test_the_checker_sees_a_forbidden_import(tmp_path: Path) -> None:
    module = SRC / "scoring" / "_import_rule_probe.py"
    module.write_text("def f() -> None:\n    from evalq.store import queries  # lazy\n")
    try:
        assert violations("scoring", RULES["scoring"]) == [
            "scoring/_import_rule_probe.py: evalq.store",
            "scoring/_import_rule_probe.py: evalq.store.queries",
        ]
    finally:
        module.unlink()


def test_the_checker_sees_stats_reaching_into_the_specifications() -> None:
    module = SRC / "stats" / "_import_rule_probe.py"
    module.write_text("from evalq.scoring.scylla import letter_grade\n")
    try:
        assert violations("stats", RULES["stats"]) == [
            "stats/_import_rule_probe.py: evalq.scoring.scylla",
            "stats/_import_rule_probe.py: evalq.scoring.scylla.letter_grade",
        ]
    finally:
        module.unlink()


def test_front_doors_do_not_import_torch_or_the_tier_code() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {module}\n" for module in FRONT_DOORS)
        + f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120 * PATIENCE,
    )
    assert result.stdout.strip() == ""


HTTP_CLIENT_NEVER_LOADS = ("celery", "kombu", "sqlalchemy", "alembic", "fastapi", "redis", "torch")


def test_the_http_client_loads_no_broker_store_or_torch() -> None:
    """What `import evalq.producer.http` loads, transitively: nothing a service without the
    database and broker credentials would have to install or configure."""
    code = (
        "import sys\n"
        "import evalq.producer.http\n"
        "loaded = {m.split('.')[0] for m in sys.modules}\n"
        f"print(','.join(sorted(loaded & {set(HTTP_CLIENT_NEVER_LOADS)!r})))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120 * PATIENCE,
    )
    assert result.stdout.strip() == ""


def test_base_dependencies_leave_torch_to_the_worker_extra() -> None:
    project = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text())["project"]
    base = " ".join(project["dependencies"])
    assert "torch" not in base and "transformers" not in base and "scikit-learn" not in base
    assert any(
        dep.startswith("torch==2.13.0") for dep in project["optional-dependencies"]["worker"]
    )


def package_graph() -> dict[str, set[str]]:
    """Package -> the evalq packages its modules import (module-level or not)."""
    graph: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC).parts
        if len(parts) < 2:
            continue
        found = graph.setdefault(parts[0], set())
        for module in imported_modules(path):
            names = module.split(".")
            inside = names[0] == "evalq" and len(names) > 1 and names[1] != parts[0]
            if inside and (SRC / names[1]).is_dir():
                found.add(names[1])
    return graph


def test_every_package_has_rules_and_the_packages_import_no_cycle() -> None:
    graph = package_graph()
    assert set(graph) <= {rule.split("/")[0] for rule in RULES}, set(graph) - set(RULES)
    done: set[str] = set()

    def visit(package: str, path: tuple[str, ...]) -> None:
        assert package not in path, " -> ".join((*path, package))
        if package in done:
            return
        for imported in sorted(graph.get(package, ())):
            visit(imported, (*path, package))
        done.add(package)

    for package in sorted(graph):
        visit(package, ())
