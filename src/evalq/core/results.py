"""The typed contract between the tiers, the merge and the read side: what is stored as JSON.

A tier task stores `TierOutcome.stored()` in its ``tier_results`` row; the merge reads it back
with `TierOutcome.from_stored`, scores it, and stores `EvaluationScores.model_dump`; the read side
and the front doors read `EvaluationScores.model_validate`. Nothing else reads stored results by
string key, so a field renamed here is renamed everywhere (and mypy says where it is used).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
    computed_field,
    field_serializer,
    model_validator,
)

from evalq.core.profile import Recommendation
from evalq.core.schemas import TaskKind, Tier

# Re-exported: scoring/evaluation.py and producer/api/reports.py import it from here.
from evalq.core.status import EvaluationStatus as EvaluationStatus
from evalq.core.trajectory import TrajectoryMatch

FinalTierStatus = Literal["ok", "skipped", "failed"]
TierStatus = Literal["running", FinalTierStatus]
ErrorKind = Literal[
    "invalid_input",
    "transient",
    "permanent",
    "deadline",
    "invalid_output",
    "worker_lost",
    "internal",
]
"""Whose fault a failure was: bad input; an upstream fault that outlasted its retries (429,
5xx, timeout); an upstream answer that retrying cannot fix; time ran out; a judge answer that
never validated; a worker killed on every delivery; evalq's own code."""

WORKER_LOST = "PoisonMessage"
"""Error type of a tier whose input killed its worker process on every delivery (see
`evalq.tasks.runner`); the merge marks such a submission ``failed``, not ``degraded``."""


class Record(BaseModel):
    """A stored record: frozen, and strict about its fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ErrorRecord(Record):
    """One failure as data: the same shape for a tier, a judge rubric and what clients see.

    ``traceback`` stays in the store for operators; `public` leaves it out.
    """

    type: str = Field(description="Exception class name.")
    message: str = Field(description="Its message, bounded.")
    attempts: int = Field(default=1, ge=0, description="Tries made before giving up.")
    kind: ErrorKind = "internal"
    tier: Tier | None = Field(default=None, description="The tier that failed.")
    rubric: str | None = Field(default=None, description="The judge rubric that failed.")
    traceback: str | None = None
    errors: tuple[ErrorRecord, ...] = Field(
        default=(), description="The failures this one sums up (a judge's failed rubrics)."
    )

    def public(self) -> ErrorRecord:
        """The record without tracebacks (what the API and the client show)."""
        return self.model_copy(
            update={"traceback": None, "errors": tuple(e.public() for e in self.errors)}
        )


# --- tier results ----------------------------------------------------------------------------


class SourceCopy(Record):
    """The extractive fragments of an output in one source (Grusky et al. 2018)."""

    source: str = Field(description="'reference 1', 'reference 2', ... or 'context'.")
    coverage: float = Field(description="Share of the output's words inside a fragment.")
    density: float = Field(description="Mean squared fragment length per word.")
    copied: float = Field(description="Share of its words in fragments of copy_min_words+.")


class CopyRecord(Record):
    """What an output copies from its task's references and context (docs/scoring/tier1.md)."""

    copied: float = Field(
        description="Share of the output's words in passages copied from any source."
    )
    borrowed_words: float = Field(description="Share of its content words found in the references.")
    originality: float = Field(
        description="(1 - copied excess) x (1 - borrowed excess), in [0, 1]."
    )
    sources: tuple[SourceCopy, ...] = ()
    stuffed_words: int = Field(
        default=0,
        description="Words in passages that list the references' words (left out of the "
        "similarity; evalq.metrics.stuffing).",
        exclude_if=lambda value: not value,
    )


class InjectionMark(Record):
    """One sentence of a run's output that instructs its evaluator (`evalq.scoring.injection`).

    Tier 1 reads the output without the marked sentences; the judge keeps the lower of its
    judgments with and without the ones its patterns mark; a run judged with a sentence only
    tier 1's meaning pass marked is held (docs/scoring.md, 'Instructions to the evaluator').
    """

    sentence: str = Field(description="The sentence as written, cut to 200 characters.")
    kind: str = Field(
        description="What it does: a pattern's name, or 'addresses its evaluator' when its "
        "meaning is read as an instruction to the evaluator."
    )
    probability: float | None = Field(
        default=None,
        description="For a meaning mark, the classifier's probability that the sentence "
        "instructs its evaluator (marked from 0.8); null for a pattern mark.",
    )

    def note(self) -> str:
        """The mark in words, as every door shows it."""
        why = "" if self.probability is None else f" (probability {self.probability:.2f})"
        return f'{self.kind}: "{self.sentence}"{why}'


InjectionMarks = Annotated[
    tuple[InjectionMark, ...],
    Field(
        description="The sentences of the output marked as instructions to the evaluator, "
        "each with why; absent when none.",
        exclude_if=lambda marks: not marks,
    ),
]


class TextResult(Record):
    """Tier 1 (spec 001): similarities of the output to the task's references."""

    cosine: float | None
    jaccard: float | None
    semantic: float | None
    references: int
    overall_similarity: float | None
    task_success: float | None
    tier_score: float | None
    tier_missing: tuple[str, ...] = ()
    reference_agreement: float | None = Field(
        default=None,
        description="The references' agreement with one another (the human ceiling); None "
        "with a single reference.",
    )
    calibrated_similarity: float | None = Field(
        default=None,
        description="overall_similarity placed between unrelated_agreement (0) and "
        "reference_agreement (0.8), uncapped below 1; None without a ceiling.",
    )
    unrelated_agreement: float | None = Field(
        default=None,
        description="How close reviews of unrelated papers come to the references (the floor).",
    )
    copying: CopyRecord | None = Field(
        default=None, description="What the output copies from the references and the context."
    )
    original_similarity: float | None = Field(
        default=None,
        description="The calibrated (else raw) similarity times the output's originality: the "
        "PeerRead output_similarity.",
    )
    copy_note: str | None = Field(
        default=None, description="Set when the output copies rather than reviews."
    )
    injection: InjectionMarks = ()


class GraphResult(Record):
    """Tier 3 (spec 001): metrics of the execution trace; None means not applicable, never 0.

    Attributes:
        path_convergence: minimum / actual steps from the reference start to end, in [0, 1].
        tool_selection_accuracy: share of judged steps that used the context's optimal tool.
        communication_overhead: coordination messages / all messages (lower is better).
        coordination_centrality: agent -> mean of betweenness, closeness, degree centrality.
        central_agent: the agent with the highest centrality.
        max_coordination_centrality: that agent's centrality (the scalar summary).
        task_distribution_balance: 1 - stdev / mean of the per-agent step counts, >= 0.
        tool_efficiency: PeerRead composite input (docs/scoring/tier3.md).
        coordination_quality: PeerRead composite input (docs/scoring/tier3.md).
        trajectory: the run's tool calls against the task's expected ones (None: the task
            names none).
    """

    path_convergence: float | None = None
    tool_selection_accuracy: float | None = None
    communication_overhead: float | None = None
    coordination_centrality: dict[str, float] = Field(default_factory=dict)
    central_agent: str | None = None
    max_coordination_centrality: float | None = None
    task_distribution_balance: float | None = None
    tool_efficiency: float | None = None
    coordination_quality: float | None = None
    trajectory: TrajectoryMatch | None = Field(default=None, exclude_if=lambda value: value is None)


PriceOrigin = Literal["profile", "genai-prices", "reported"]


class PriceSource(Record):
    """Where a dollar figure came from, so a cost can be audited and re-priced later.

    Attributes:
        origin: ``profile`` (the scoring profile's ``pricing`` table, which overrides the
            package), ``genai-prices`` (the maintained price data of that package), or
            ``reported`` (the submitter's own ``usage.cost_usd``).
        entry: the price entry used: the profile's model key, or genai-prices'
            ``provider:model``; None for a reported cost.
        version: the genai-prices version whose data priced it; None otherwise.
    """

    origin: PriceOrigin
    entry: str | None = None
    version: str | None = None


class RunCost(Record):
    """A submission's cost as priced at submit (its row's ``cost_usd``) and the price's source.

    Attributes:
        usd: dollars.
        priced_by: where the price came from; None when it cannot be told any more (the prices
            changed between submit and merge, or evalq did not record sources then).
    """

    usd: float
    priced_by: PriceSource | None = None


RubricStatus = Literal["ok", "failed", "skipped"]


class CriterionScore(Record):
    """One judge criterion: the raw 1-5 score, its normalised value, and the rationale."""

    score: int
    normalised: float
    rationale: str


class RubricResult(Record):
    """One rubric's result.

    Attributes:
        status: ``ok`` (scored), ``failed`` (applied but could not be judged), ``skipped``.
        score: weighted mean of the normalised criterion scores in [0, 1]; None unless ok.
        skip_reason: why a skipped rubric was not judged (not applicable, or the budget).
        attempts: model requests sent (transport retries and output retries included).
        transport_retries: retries after a transient fault (429, 5xx, timeout, reset).
        rate_limited: requests the provider refused with 429 Too Many Requests.
        validation_retries: extra requests after an answer failed validation.
        cache_hit: the verdict came from the cache (no request, no cost).
        cost_usd: dollars for the tokens billed; None when the model has no price
            (the price's source is the result's ``priced_by``).
        truncated: field -> {"original_chars", "kept_chars"} for each shortened input.
        waited_s: seconds spent in backoff and rate-limit waits.
    """

    rubric: str
    status: RubricStatus
    score: float | None = None
    criteria: dict[str, CriterionScore] = Field(default_factory=dict)
    skip_reason: str | None = None
    error: ErrorRecord | None = None
    attempts: int = 0
    transport_retries: int = 0
    rate_limited: int = 0
    validation_retries: int = 0
    cache_hit: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    truncated: dict[str, dict[str, int]] = Field(default_factory=dict)
    waited_s: float = 0.0
    confidence: float | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The probability the model gave its verdict: from its token logprobs "
        "(product over the criteria of their score tokens' probabilities) when they were asked "
        "for and returned, or as it stated it when asked to.",
    )


class JudgeIdentity(Record):
    """Which judge made a judged score: its model, provider and version, and digests of the
    prompt and rubrics it was asked with (`evalq.judge.identity`; docs/judge.md). Two scores
    with different identities come from two judges, even under one model name."""

    model: str = Field(description="The judge model as configured (e.g. openai:gpt-4o-mini).")
    provider: str | None = Field(description="The provider pydantic-ai reached it through.")
    version: str | None = Field(
        description="The model name the provider's model object resolved (None: not built)."
    )
    prompt_digest: str = Field(description="SHA-256 of the prompt template and its version.")
    rubric_digest: str = Field(
        description="SHA-256 of every rubric's name, version, instructions and verdict schema."
    )


class PanelMember(Record):
    """One judge model of a panel and its own result of each rubric.

    Attributes:
        model: the member's model id (as `JudgeResult.model`).
        rubrics: its rubric results, in rubric order: status, normalised score, the 1-5
            criterion scores with rationales, its error, tokens and cost.
        cost_usd: its dollars; None when its model has no price.
        priced_by: where its price came from; None when it has none.
    """

    model: str
    rubrics: tuple[RubricResult, ...] = ()
    cost_usd: float | None = None
    priced_by: PriceSource | None = None


class Agreement(Record):
    """How much a panel's members agreed on one submission's 1-5 criterion scores.

    The units are the (rubric, criterion) pairs; each member's raw score on a unit is one value,
    a member that failed or skipped the rubric has none there (docs/statistics.md, "Judge
    agreement (panel)").
    """

    alpha: float | None = Field(
        description=(
            "Krippendorff's alpha, ordinal metric, over the units: 1 perfect agreement, 0 chance "
            "level, below 0 systematic disagreement; None when undefined (no unit scored by two "
            "members, or every score the same)."
        )
    )
    units: int = Field(ge=0, description="Units scored by two or more members.")
    members: int = Field(ge=0, description="Members that scored at least one of those units.")


class LevelOutcome(Record):
    """What one level of a cascade said of a run: its confidence and its samples' 1-5 steps."""

    level: int
    model: str
    confidence: float | None
    confidence_kind: Literal["samples", "logprobs", "stated"] = Field(
        default="samples",
        description="What the confidence measures: the samples' agreement, the verdict's "
        "probability from token logprobs, or the probability the model stated.",
    )
    steps: dict[str, int | None] = Field(
        default_factory=dict,
        description="Rubric -> the most common 1-5 step among the level's samples; None when "
        "no sample scored it.",
    )


class CascadeRecord(Record):
    """Which level of a judge cascade decided a run, how sure it was, and by what calibration.

    Attributes:
        level: the level whose verdict stands (0 = the cheapest); None: "judge uncertain" (no
            level was confident enough; the top level's scores are kept, and the run is a
            candidate for a person's label).
        model: that level's model (the top level's when uncertain).
        confidence: its confidence: the lowest, over the rubrics it scored, of the share of its
            samples that gave the most common 1-5 score.
        threshold: the level's calibrated threshold (None when it has none, or when uncertain).
        levels_asked: how many levels were asked (each asked level's requests are counted).
        audited: the run was drawn for the audit share and judged by the top level too; the
            top level's scores stand, ``level`` still says what the cascade would have decided.
        calibration: the profile's name for the calibration the thresholds came from.
        asked: every level asked, in order: the labelled (confidence, agreed) pairs a new
            calibration is made of (an audited run has every level).
    """

    level: int | None
    model: str
    confidence: float | None
    threshold: float | None = None
    levels_asked: int
    levels: int = Field(default=0, description="Levels the cascade has.")
    audited: bool = False
    calibration: str
    skipped: tuple[int, ...] = Field(
        default=(),
        description="Levels left off this run's route: no threshold, so they decide nothing.",
    )
    asked: tuple[LevelOutcome, ...] = ()


class JudgeResult(Record):
    """Tier 2 (spec 001): the judge's rubric scores, or its errors as data, and what it cost.

    Attributes:
        scores: rubric -> normalised score in [0, 1], or None (not applicable, skipped, failed).
        failed: True when a rubric that applied could not be judged (retries or time ran out).
        errors: one record per failed rubric.
        rubrics: the per-rubric details, in rubric order. With a panel, a rubric's score is the
            median of the members' scores that succeeded, its counts and cost are summed over
            the members, and its ``criteria`` are left empty (each member's are in ``panel``).
        cost_usd: total dollars; None when neither the profile nor genai-prices prices the model
            (with a panel: when some member's model has no price).
        priced_by: where the judge model's price came from; None when it has none, and for a
            panel (each member carries its own).
        redis_error: the first Redis failure, after which this evaluation ran without the
            shared cache and rate limit; None when Redis answered (or none is configured).
        panel: each member's own results when a panel of two or more models judged; absent
            from the stored JSON for a single judge.
        agreement: the panel's agreement; absent from the stored JSON for a single judge.
        injection: the sentences marked as instructions to the evaluator; the scores are then
            each rubric's lower of the judgments with and without them (`lower_judgment`).
    """

    model: str = ""
    scores: dict[str, float | None]
    failed: bool
    errors: tuple[ErrorRecord, ...] = ()
    rubrics: tuple[RubricResult, ...] = ()
    cost_usd: float | None = None
    priced_by: PriceSource | None = None
    budget_usd: float | None = None
    redis_error: str | None = None
    panel: tuple[PanelMember, ...] = Field(default=(), exclude_if=lambda members: not members)
    agreement: Agreement | None = Field(default=None, exclude_if=lambda value: value is None)
    cascade: CascadeRecord | None = Field(default=None, exclude_if=lambda value: value is None)
    identity: JudgeIdentity | None = Field(
        default=None,
        description="The judge that made these scores (None on rows judged before it was "
        "recorded).",
        exclude_if=lambda value: value is None,
    )
    injection: InjectionMarks = ()

    @model_validator(mode="before")
    @classmethod
    def _drop_totals(cls, data: Any) -> Any:
        """Stored JSON carries the totals below; they are derived, not read back. Rows stored
        before evalq 0.2 keep ``rubrics`` as a mapping by rubric name: read as a list."""
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k not in JUDGE_TOTALS}
            rubrics = data.get("rubrics")
            if isinstance(rubrics, dict):
                data["rubrics"] = [{"rubric": name, **r} for name, r in rubrics.items()]
        return data

    def rubric(self, name: str) -> RubricResult:
        """The result of the rubric ``name``; KeyError when it was not part of this judgment."""
        for result in self.rubrics:
            if result.rubric == name:
                return result
        raise KeyError(name)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def attempts(self) -> int:
        """Model requests sent over all rubrics."""
        return sum(r.attempts for r in self.rubrics)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def transport_retries(self) -> int:
        """Retries after transient faults over all rubrics."""
        return sum(r.transport_retries for r in self.rubrics)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rate_limited(self) -> int:
        """Requests refused with 429 over all rubrics."""
        return sum(r.rate_limited for r in self.rubrics)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def validation_retries(self) -> int:
        """Extra requests after invalid answers over all rubrics."""
        return sum(r.validation_retries for r in self.rubrics)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cache_hits(self) -> int:
        """Rubrics answered from the cache."""
        return sum(r.cache_hit for r in self.rubrics)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def input_tokens(self) -> int:
        """Prompt tokens billed over all rubrics, failed requests included."""
        return sum(r.input_tokens for r in self.rubrics)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def output_tokens(self) -> int:
        """Completion tokens billed over all rubrics."""
        return sum(r.output_tokens for r in self.rubrics)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def skipped(self) -> dict[str, str | None]:
        """Each skipped rubric with why."""
        return {r.rubric: r.skip_reason for r in self.rubrics if r.status == "skipped"}

    @computed_field  # type: ignore[prop-decorator]
    @property
    def truncated(self) -> dict[str, dict[str, dict[str, int]]]:
        """Each rubric whose inputs were shortened, with how much."""
        return {r.rubric: r.truncated for r in self.rubrics if r.truncated}

    @property
    def retries(self) -> int:
        """Transport and validation retries over all rubrics."""
        return self.transport_retries + self.validation_retries


JUDGE_TOTALS = frozenset(
    {
        "attempts",
        "transport_retries",
        "rate_limited",
        "validation_retries",
        "cache_hits",
        "input_tokens",
        "output_tokens",
        "skipped",
        "truncated",
    }
)


TierResult = TextResult | JudgeResult | GraphResult
RESULT_TYPES: dict[Tier, type[TextResult] | type[JudgeResult] | type[GraphResult]] = {
    "text": TextResult,
    "judge": JudgeResult,
    "graph": GraphResult,
}


class TierOutcome(Record):
    """What one tier ended with: ``ok`` with its result, ``skipped`` with a reason, ``failed``
    with an error (a failed judge also keeps its partial result for inspection).

    ``injection`` is what a skipped text tier still found: the output's sentences that instruct
    its evaluator (a task without references has no similarity to score, but its run is read
    for instructions all the same); an ok tier keeps its marks in its result.
    """

    tier: Tier
    status: FinalTierStatus
    result: TextResult | JudgeResult | GraphResult | None = None
    reason: str | None = None
    error: ErrorRecord | None = None
    injection: InjectionMarks = ()

    def stored(self) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The ``metrics`` and ``error`` columns of the tier row."""
        metrics: dict[str, Any] | None = None
        if self.result is not None:
            metrics = self.result.model_dump(mode="json")
        elif self.reason is not None:
            metrics = {"reason": self.reason}
            if self.injection:
                metrics["injection"] = [m.model_dump(mode="json") for m in self.injection]
        error = None if self.error is None else self.error.model_dump(mode="json")
        return metrics, error

    @classmethod
    def from_stored(
        cls,
        tier: Tier,
        status: FinalTierStatus,
        metrics: dict[str, Any] | None,
        error: dict[str, Any] | None,
    ) -> TierOutcome:
        """Read a tier row's columns back (the inverse of `stored`)."""
        result: TierResult | None = None
        reason: str | None = None
        marks: tuple[InjectionMark, ...] = ()
        if status == "skipped":
            reason = (metrics or {}).get("reason")
            found = (metrics or {}).get("injection") or ()
            marks = tuple(InjectionMark.model_validate(m) for m in found)
        elif metrics:
            result = RESULT_TYPES[tier].model_validate(metrics)
        parsed = None if error is None else ErrorRecord.model_validate(error)
        return cls(
            tier=tier, status=status, result=result, reason=reason, error=parsed, injection=marks
        )

    def marks(self) -> tuple[InjectionMark, ...]:
        """The sentences this tier marked as instructions to the evaluator (its result's, or a
        skipped text tier's own)."""
        found = getattr(self.result, "injection", ())
        return tuple(found) or self.injection

    @property
    def text(self) -> TextResult | None:
        """The tier-1 result when this is an ok text tier."""
        ok = self.status == "ok" and isinstance(self.result, TextResult)
        return self.result if ok else None  # type: ignore[return-value]

    @property
    def judge(self) -> JudgeResult | None:
        """The tier-2 result when this is an ok judge tier."""
        ok = self.status == "ok" and isinstance(self.result, JudgeResult)
        return self.result if ok else None  # type: ignore[return-value]

    @property
    def graph(self) -> GraphResult | None:
        """The tier-3 result when this is an ok graph tier."""
        ok = self.status == "ok" and isinstance(self.result, GraphResult)
        return self.result if ok else None  # type: ignore[return-value]


class MissingTier(Record):
    """A tier that produced no metrics, and why."""

    status: Literal["absent", "skipped", "failed"]
    reason: str | None = None
    error: ErrorRecord | None = None


# --- evaluation scores -----------------------------------------------------------------------


class PeerReadScores(Record):
    """The PeerRead composite (spec 001) and its recommendation."""

    composite: float | None
    recommendation: Recommendation | None
    recommendation_weight: float | None
    used: tuple[str, ...]
    missing: tuple[str, ...]
    inputs: dict[str, float | None]
    not_reported: tuple[str, ...] = Field(
        default=(), description="Inputs the submitter did not report, counted as 0."
    )
    partial: bool = Field(
        default=False, description="A tier failed, so inputs the task needs are missing."
    )
    raw_similarity: float | None = Field(
        default=None,
        description="Tier 1's raw overall similarity; output_similarity is it read relative to "
        "reference_agreement when the task has two or more references.",
    )
    reference_agreement: float | None = Field(
        default=None, description="The references' agreement with one another (the ceiling)."
    )
    note: str | None = Field(
        default=None,
        description="What the composite cannot see (no judge ran: it cannot tell a review from "
        "a summary of the paper).",
    )
    copied: str | None = Field(
        default=None,
        description="Set when the run copies or restates instead of reviewing (tier 1's "
        "copy_note); its similarity then counts only what it did not copy.",
    )


class CriterionRecord(Record):
    """One Arena success criterion's outcome."""

    # `evalq.scoring.arena.correctness` returns these; the docstring is the API's description.

    type: str
    passed: bool
    reason: str


ARENA_DECIMALS = 2
"""The Arena scores are written (stored, served) rounded to this many decimals."""


class ArenaScores(Record):
    """The Arena evaluation (spec 000) in the spec's key names, rounded to two decimals."""

    @model_validator(mode="before")
    @classmethod
    def _before_0_2(cls, data: Any) -> Any:
        """Scores stored before evalq 0.2 name ``not_reported`` ``imputed`` (then scored 50)."""
        if isinstance(data, dict) and "imputed" in data and "not_reported" not in data:
            data = {k: v for k, v in data.items() if k != "imputed"}
            data["not_reported"] = []
            # the stored scores gave those dimensions 50; the read side re-scores them
        return data

    # What `evalq.scoring.arena.overall.score_arena_run` returns. The scores are held
    # unrounded (the leaderboard ranks by them, the validation rules read them) and written
    # rounded to `ARENA_DECIMALS` (the serializers below): a score read back from storage is
    # the rounded one. ``efficiency_breakdown`` holds the parts of the efficiency score
    # (``tokens``, ``tool_calls``, ``iterations``); ``breakdown`` the dimension weights used,
    # divided by their sum (``efficiency_weight``, ...); ``not_reported`` the dimensions
    # scored 0 because the run lacked the figure.

    submission_id: str
    task_id: str
    overall_score: float
    unadjusted_score: float
    efficiency_score: float
    speed_score: float
    cost_score: float
    correctness_score: float
    efficiency_breakdown: dict[str, float]
    breakdown: dict[str, float]
    difficulty_factor: float
    not_reported: tuple[str, ...]
    criteria: tuple[CriterionRecord, ...]
    baseline_is_default: bool

    @field_serializer(
        "overall_score",
        "unadjusted_score",
        "efficiency_score",
        "speed_score",
        "cost_score",
        "correctness_score",
    )
    def _rounded(self, value: float) -> float:
        return round(value, ARENA_DECIMALS)

    @field_serializer("efficiency_breakdown")
    def _rounded_parts(self, value: dict[str, float]) -> dict[str, float]:
        return {name: round(part, ARENA_DECIMALS) for name, part in value.items()}


INFINITE = "inf"
"""JSON's word for an infinite cost of pass: JSON has no infinity."""


def _infinite_from_json(value: Any) -> Any:
    return math.inf if value == INFINITE else value


def _infinite_to_json(value: float) -> float | str:
    return INFINITE if math.isinf(value) else value


CostOfPass = Annotated[
    float,
    BeforeValidator(_infinite_from_json),
    PlainSerializer(_infinite_to_json, when_used="json"),
    WithJsonSchema({"anyOf": [{"type": "number"}, {"const": INFINITE, "type": "string"}]}),
]
"""Expected dollars per passing run (spec 003): ``math.inf`` when no run passed. The one place
the infinite rule is written: JSON (stored rows, API replies) carries it as the string "inf",
read back as ``math.inf``."""


class ScyllaScores(Record):
    """One Scylla run (spec 003); an infinite cost of pass is stored as the string "inf"."""

    # What `evalq.scoring.scylla.score_scylla_run` returns: the docstring is the API's
    # description (docs/openapi.json), so each field is explained there.
    passed: bool | None
    pass_rate: float | None
    impl_rate: float | None
    composite: float | None
    grade: str | None
    cost_usd: float | None
    cost_of_pass: CostOfPass | None
    duration_seconds: float | None
    variant: str
    run_index: int | None


class SuiteScores(Record):
    """A suite run's gate (spec 004): passed, the final score, and every reason."""

    metrics: dict[str, Any]
    final_score: float | None
    final_used: tuple[str, ...]
    final_missing: tuple[str, ...]
    passed: bool
    blocking_failures: tuple[str, ...]
    warnings: tuple[str, ...]
    missing_required: tuple[str, ...]
    failed_required: tuple[str, ...]


class TierResults(Record):
    """The results of the tiers that ran ok."""

    text: TextResult | None = None
    judge: JudgeResult | None = None
    graph: GraphResult | None = None


class ReviewScores(Record):
    """Spec 000's plausibility checks of one run, as the merge found them.

    Attributes:
        flags: the outlier indicators (extremely efficient tokens, extremely fast, minimal tool
            usage) when there are enough of them to ask for a manual review; empty otherwise.
        warnings: the validation rules' messages (they are shown, they do not hold a run back).
    """

    flags: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


class EvaluationScores(Record):
    """Every score of one evaluation, as stored in ``evaluations.scores``.

    ``kind`` is the task kind the merge scored for (`evalq.scoring.kinds`): PeerRead scores exist
    for ``peerread`` tasks, Scylla scores for ``scylla``, the suite gate for ``suite``; the Arena
    scores always (as merged: the read side re-scores them against the current baseline).
    ``cost`` is the run's cost in dollars and where its price came from (None: not reported
    and not priced); the judge's own is ``tiers.judge.cost_usd`` and ``tiers.judge.priced_by``.
    ``injection`` is every sentence of the output a tier marked as an instruction to the
    evaluator (`evalq.scoring.injection.merged_marks`): what every door shows.
    """

    @model_validator(mode="before")
    @classmethod
    def _before_0_2(cls, data: Any) -> Any:
        """Scores stored before evalq 0.2 have no ``kind``: the scorers that ran say it."""
        if isinstance(data, dict) and "kind" not in data:
            kind = "suite" if data.get("suite") else "scylla" if data.get("scylla") else "arena"
            data = {**data, "kind": kind}
        return data

    kind: TaskKind
    peerread: PeerReadScores | None = None
    arena: ArenaScores
    judge: dict[str, float | None]
    tiers: TierResults
    scylla: ScyllaScores | None = None
    suite: SuiteScores | None = None
    review: ReviewScores = Field(default_factory=ReviewScores)
    cost: RunCost | None = None
    injection: InjectionMarks = ()
