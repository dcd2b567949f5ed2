"""docker-compose.yml and the Dockerfile, checked offline (there is no Docker engine here).

`docker-compose config` (Debian's docker-compose 1.29, installed by .ci/run) validates the file
and resolves anchors and variables; the tests then check the services, their healthchecks and
start order, that required secrets fail loudly, and that every `evalq` command exists.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from evalq.producer.cli import app as cli
from evalq.workers.names import QUEUES
from tests.support.processes import EVALQ, PATIENCE
from tests.support.tools import required_program

ROOT = Path(__file__).resolve().parents[2]
SECRETS = {"REDIS_PASSWORD": "r3dis", "POSTGRES_PASSWORD": "p0stgres", "FLOWER_PASSWORD": "fl0wer"}
WORKERS = {
    "worker-text": ("evalq.text", "prefork"),
    "worker-judge": ("evalq.judge", "threads"),
    "worker-graph": ("evalq.graph", "prefork"),
    "worker-merge": ("evalq.merge", "prefork"),
    "worker-webhooks": ("evalq.webhooks", "threads"),
}
EVALQ_SERVICES = {"migrate", "api", *WORKERS, "beat", "flower"}


def docker_compose() -> str:
    """The docker-compose program; fails in CI (.ci/run installs it), skips locally when missing."""
    return required_program("docker-compose", "apt-get install docker-compose")


def compose_config(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in SECRETS and not k.startswith("EVALQ")}
    return subprocess.run(
        [docker_compose(), "-f", str(ROOT / "docker-compose.yml"), "config"],
        env=clean | env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60 * PATIENCE,
    )


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    done = compose_config(SECRETS)
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = yaml.safe_load(done.stdout)
    return parsed


def option(command: list[str], name: str) -> str:
    return next(arg.split("=", 1)[1] for arg in command if arg.startswith(f"--{name}="))


@pytest.mark.parametrize("missing", sorted(SECRETS))
def test_a_missing_secret_fails_naming_the_variable(missing: str) -> None:
    done = compose_config({k: v for k, v in SECRETS.items() if k != missing})
    assert done.returncode != 0
    assert f"set {missing}" in done.stderr


def test_services_and_start_order(config: dict[str, Any]) -> None:
    services = config["services"]
    assert set(services) == {"redis", "postgres", *EVALQ_SERVICES}
    for name, service in services.items():
        assert "container_name" not in service, name
        if name != "migrate":
            assert name == "beat" or "healthcheck" in service, name
    migrate = services["migrate"]
    assert migrate["command"] == ["evalq", "db", "upgrade"]
    assert migrate["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    for name in ("api", *WORKERS):
        assert services[name]["depends_on"] == {
            "redis": {"condition": "service_healthy"},
            "postgres": {"condition": "service_healthy"},
            "migrate": {"condition": "service_completed_successfully"},
        }, name
    for name in ("beat", "flower"):
        assert services[name]["depends_on"] == {"redis": {"condition": "service_healthy"}}


def test_redis_refuses_to_evict_and_keeps_an_append_only_file(config: dict[str, Any]) -> None:
    redis = config["services"]["redis"]
    command = " ".join(redis["command"])
    assert "--maxmemory-policy noeviction" in command
    assert "--appendonly yes" in command
    # the password comes from the container's environment ($$ escapes compose interpolation)
    assert '--requirepass "$$REDIS_PASSWORD"' in command
    assert redis["environment"]["REDIS_PASSWORD"] == SECRETS["REDIS_PASSWORD"]
    assert "PONG" in " ".join(redis["healthcheck"]["test"])


def test_one_scalable_worker_service_per_queue(config: dict[str, Any]) -> None:
    services = config["services"]
    consumed = []
    for name, (queue, pool) in WORKERS.items():
        service = services[name]
        command = service["command"]
        assert command[:2] == ["evalq", "worker"]
        assert option(command, "queues") == queue
        assert option(command, "pool") == pool
        assert "ports" not in service, name  # a fixed host port would stop --scale
        assert service["stop_grace_period"]
        consumed.append(queue)
        env = service["environment"]
        assert env["EVALQ_BROKER_URL"] == f"redis://:{SECRETS['REDIS_PASSWORD']}@redis:6379/0"
        assert SECRETS["POSTGRES_PASSWORD"] in env["EVALQ_DATABASE_URL"]
        assert "ping" in " ".join(service["healthcheck"]["test"])
    assert sorted(consumed) == sorted(QUEUES)
    assert int(option(services["worker-judge"]["command"], "concurrency")) >= 16


def test_flower_requires_its_password_and_listens_on_loopback(config: dict[str, Any]) -> None:
    flower = config["services"]["flower"]
    assert flower["environment"]["EVALQ_FLOWER_PASSWORD"] == SECRETS["FLOWER_PASSWORD"]
    assert flower["ports"] == ["127.0.0.1:5555:5555/tcp"]


def test_every_evalq_command_the_compose_file_runs_exists(config: dict[str, Any]) -> None:
    commands = {
        name: service["command"]
        for name, service in config["services"].items()
        if name in EVALQ_SERVICES
    }
    assert set(commands) == EVALQ_SERVICES
    entry_point = subprocess.run(
        [EVALQ, "--help"], capture_output=True, text=True, timeout=60 * PATIENCE
    )
    assert entry_point.returncode == 0 and "Usage: evalq" in entry_point.stdout
    runner = CliRunner()
    for name, command in commands.items():
        assert command[0] == "evalq", name
        # the whole command with --help: an unknown command or option exits 2
        result = runner.invoke(cli, [*command[1:], "--help"])
        assert result.exit_code == 0, (name, command, result.output)
        assert "Usage: " in result.output, name
    ping = config["services"]["worker-text"]["healthcheck"]["test"][-1]
    assert "from evalq.workers.app import get_app" in ping
    from evalq.workers.app import get_app  # the healthcheck's import resolves

    assert callable(get_app)


def test_the_dockerfile_installs_cpu_torch_then_the_extras() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    lines = [line.strip() for line in dockerfile.splitlines()]
    assert [line for line in lines if line.startswith("FROM ")] == ["FROM python:3.11-slim"]
    torch = dockerfile.index("https://download.pytorch.org/whl/cpu torch==2.13.0")
    assert torch < dockerfile.index('pip install ".[worker,postgres,api,monitor,otel]"')
    ignored = (ROOT / ".dockerignore").read_text().split()
    for line in lines:
        if line.startswith("COPY "):
            *sources, _ = line.split()[1:]
            for source in sources:
                assert (ROOT / source).exists(), source
                assert source.rstrip("/") not in ignored, source


def test_the_api_listens_on_loopback_only(config: dict[str, Any]) -> None:
    # plain HTTP carries API keys: published on every interface, anyone on the network read
    # them; a TLS-terminating proxy on the host publishes it (docs/deploy.md, "HTTPS")
    (port,) = config["services"]["api"]["ports"]
    assert port == "127.0.0.1:8000:8000/tcp"


def memory(limit: str | int) -> int:
    """A compose memory limit (``1g``, ``512m``, or bytes as `config` prints them) in bytes."""
    text = str(limit).lower().rstrip("b")
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def test_every_service_has_a_memory_limit(config: dict[str, Any]) -> None:
    services = config["services"]
    for name, service in services.items():
        assert "mem_limit" in service, name  # one leaking service must not take the host down
        assert memory(service["mem_limit"]) >= 128 << 20, name
    command = " ".join(services["redis"]["command"])
    maxmemory = command.split("--maxmemory ")[1].split()[0]
    assert memory(maxmemory) < memory(services["redis"]["mem_limit"])  # refuses before OOM


def test_the_judge_key_is_given_to_the_judge_worker_alone() -> None:
    judge_env = {"EVALQ_JUDGE_API_KEY": "sk-judge-only-0123", "EVALQ_JUDGE_MODEL": "openai:m"}
    done = compose_config(SECRETS | judge_env)
    assert done.returncode == 0, done.stderr
    services = yaml.safe_load(done.stdout)["services"]
    holders = {
        name for name, s in services.items() if "sk-judge-only-0123" in str(s.get("environment"))
    }
    assert holders == {"worker-judge"}
    judge = services["worker-judge"]["environment"]
    assert judge["EVALQ_JUDGE_API_KEY"] == "sk-judge-only-0123"
    # the API (the process that stores a run) decides whether tier 2 runs: it knows the model
    assert services["api"]["environment"]["EVALQ_JUDGE_MODEL"] == "openai:m"
