"""`evalq compare` / GET /v1/compare: two or more groups of submissions compared over the store.

The groups are the values of one field (``model``, ``tool``, ``variant`` or ``metadata.KEY``)
among the evaluated submissions of the tasks named. Every submission is scored by its task's
own ranking score, exactly as its leaderboard shows it (`evalq.read.leaderboard`); a suite
task's submissions are compared scenario by scenario (scenario score, scenario passed), so
their pairs are scenarios. Tasks must share one ranking score: an Arena overall (0-100) and a
PeerRead composite (0-1) are not one scale. Partial evaluations (a tier failed) and runs held
for review (flagged as outliers, not yet accepted; ``include_held=True`` keeps them) are left
out and counted. The statistics are `evalq.stats.contrast`; a single Scylla task compared by
variant also carries the complete variant analysis (`evalq.scoring.worth`).
"""

from __future__ import annotations

import fnmatch
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, get_args

from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput
from evalq.core.judge_validation import JudgeValidation
from evalq.core.metadata import KEY_RULE, MAX_KEY_CHARS, as_text, valid_key
from evalq.core.power import PowerPlan
from evalq.core.profile import Profile, profile_named
from evalq.core.results import ScyllaScores
from evalq.core.schemas import STORED, Task, TaskKind
from evalq.core.settings import Settings, get_settings
from evalq.read.baseline import current_baselines
from evalq.read.flood import flood_notes
from evalq.read.plans import (
    Shortfall,
    Tickets,
    counted_rows,
    padded,
    registration_note,
    shortfalls,
    unregistered,
    with_shortfalls,
)
from evalq.read.power import plan_view, underpowered_note
from evalq.read.reply import Reply
from evalq.read.variants import VariantsAnalysis, variants_analysis
from evalq.read.view import ScoredRow, TaskContext, TaskView, view_from
from evalq.scoring.kinds import KindRule, kind_of, ranking_value
from evalq.scoring.suite.scenario import scenario_passed, scenario_score
from evalq.scoring.variants import natural_order
from evalq.scoring.worth import analyse_variants
from evalq.stats.comparison import RESAMPLES, SEED, Correction
from evalq.stats.contrast import Family, GroupComparison, Observation, UnitValues, contrast
from evalq.store import queries
from evalq.store.chunks import chunks
from evalq.store.models import EvaluationRow, SubmissionRow, TaskRow
from evalq.store.tickets import tickets_of

FIELDS = ("model", "tool", "variant")
HELD = "held for review"
COPY = "copy of an earlier run"
NEAR = "near-copy of an earlier run (its content by MinHash similarity; usage nudged)"
UNTICKETED = "sent without a ticket (its variant's runs are registered: `evalq.read.plans`)"
"""Why a run is left out of a comparison until a person accepts it (`evalq review accept`)."""
MAX_RESAMPLES = 100_000
"""Most bootstrap resamples one comparison may ask for (the default is 2,000)."""
BY_RULE = "one of model, tool, variant, or metadata.KEY"
BY_PATTERN = (
    f"^({'|'.join(FIELDS)}|metadata\\.[A-Za-z0-9_][A-Za-z0-9_.\\-]{{0,{MAX_KEY_CHARS - 1}}})$"
)
"""`BY_RULE` and the metadata key rule as one pattern, for the OpenAPI document."""
TASKS_PATTERN = r"^[^,]*[^,\s][^,]*(,[^,]*[^,\s][^,]*)*$"
"""What `resolve_tasks` can match: comma-separated names, none of them empty or blank."""


class LeftOut(Reply):
    """Submissions of a compared group that were not compared, and why."""

    group: str
    reason: str
    count: int


class CompareReport(Reply):
    """Body of GET /v1/compare: groups of submissions compared over the units they share."""

    tasks: list[str] = Field(description="The tasks compared.")
    not_evaluated: list[str] = Field(
        description="Tasks named that have no evaluated submission yet (left out)."
    )
    kind: TaskKind
    ranking_key: str = Field(description="What the tasks rank by.")
    score: str = Field(
        description="The score compared: the ranking score, or scenario_score in a suite."
    )
    unit: Literal["task", "scenario"] = Field(description="What pairs (scenarios in a suite).")
    by: str = Field(description="The field that makes the groups.")
    groups: list[str] = Field(description="The groups, the reference first.")
    reference: str
    comparisons: list[GroupComparison] = Field(
        description="Each other group against the reference: design (paired over shared units "
        "or unpaired), the deciding test (the permutation test of the mean difference: sign "
        "flips when paired, splits of the pooled values when unpaired), the mean difference "
        "other - reference with that test's inverted interval (at interval_level), Wilcoxon "
        "signed-rank (secondary) and McNemar where they apply, Cliff's delta, the corrected "
        "p-value; design 'too few' (under 5 shared units) has no interval, test or verdict."
    )
    units: list[UnitValues] = Field(description="Each unit's mean score per group.")
    correction: Correction = Field(description="The multiple-comparison correction applied.")
    alpha: float
    level: float = Field(
        description="The level of the figures that decide nothing (Cliff's delta)."
    )
    family: Family = Field(
        default="reference",
        description="The tests corrected together: each group against the reference, or (a "
        "Scylla task by variant) every pair of variants, the variant ladder's family.",
    )
    tests: int = Field(default=0, description="How many tests the correction judged together.")
    interval_level: float = Field(
        default=0.95,
        description="The level of every difference's interval: 1 - the raw p-value threshold "
        "the correction judged the family at, so an interval excludes 0 exactly when its "
        "comparison is rejected.",
    )
    resamples: int
    seed: int
    left_out: list[LeftOut]
    include_held: bool = Field(
        description="True: runs held for review were compared; false: left out, counted in "
        'left_out as "held for review".'
    )
    variants: VariantsAnalysis | None = Field(
        description="The variant analysis of a single Scylla task compared by variant."
    )
    notes: list[str] = Field(
        default_factory=list,
        description="What the Arena tasks' boards say of a crowd of agent names "
        "(evalq.read.flood): a range note (under the runs or agents baseline, a crowd of names "
        "seen on no other task stretched the ranges every score compared is measured against, "
        "so each comparison's conclusion is withheld) or a crowd note (under the robust "
        "baseline, thin names' runs lie beyond ranges read without them: said, nothing "
        "withheld). Empty when none.",
    )
    judge_validation: JudgeValidation | None = Field(
        default=None,
        description="The judge's agreement with people's labels and whether its scores are "
        "validated (docs/judge.md); absent when no judge score is shown.",
        exclude_if=lambda value: value is None,
    )
    judge_break: str | None = Field(
        default=None,
        description='"judge changed: ..." when the scores shown mix two or more judges: which, '
        "how many runs each scored, and each break's bridge (docs/judge.md); absent otherwise.",
        exclude_if=lambda value: value is None,
    )


def resolve_tasks(session: Session, pattern: str) -> list[str]:
    """The task ids ``pattern`` names: an id, ids separated by commas, or globs (``arena-*``).

    Raises:
        InvalidInput: on ``tasks`` when a name or glob matches no task.
    """
    known = list(session.scalars(select(TaskRow.id).order_by(TaskRow.id)))
    chosen: list[str] = []
    missing = []
    for name in (p.strip() for p in pattern.split(",")):
        if name in known:  # an id is itself, even if it holds glob characters
            hits = [name]
        else:
            hits = [t for t in known if fnmatch.fnmatchcase(t, name)] if name else []
        if not hits:
            missing.append(name)
        chosen += [t for t in hits if t not in chosen]
    if missing:
        raise InvalidInput([("tasks", f"no task matches {', '.join(repr(m) for m in missing)}")])
    return chosen


def group_of(by: str, row: ScoredRow) -> str | None:
    """The group ``by`` puts ``row`` in (None: the run does not name it)."""
    if by in FIELDS:
        value = getattr(row.submission, by)
        return None if value is None else str(value)
    key = by.removeprefix("metadata.")
    return as_text(row.metadata[key]) if key in row.metadata else None


def check_by(by: str) -> None:
    """Raises `InvalidInput` on ``by`` unless it is `BY_RULE`."""
    if by in FIELDS:
        return
    if not by.startswith("metadata."):
        raise InvalidInput([("by", BY_RULE)])
    if not valid_key(by.removeprefix("metadata.")):
        raise InvalidInput([("by", KEY_RULE)])


def _limit(what: str, setting: str, limit: int) -> str:
    """The rule of a limit, naming the setting that raises it."""
    return f"{what}; at most {limit:,} ({setting}, EVALQ_{setting.upper()})"


@dataclass(frozen=True)
class _Plan:
    """What a comparison will read, known from task rows and counts alone (no evaluation is
    loaded): the tasks with evaluated submissions, their kinds, profiles and row counts."""

    tasks: dict[str, Task]
    profiles: dict[str, Profile]
    rules: dict[str, KindRule]
    rows: int


def _plan(session: Session, named: Sequence[str], settings: Settings) -> _Plan:
    """Check what the comparison would read before reading it.

    One grouped query counts each task's evaluated submissions, those naming a variant and
    those with suite scores: enough to know each task's kind as its leaderboard derives it
    (`kind_of`), so tasks that rank by different scores are refused before any evaluation is
    loaded, as is a request over more rows than ``compare_max_submissions``.
    """
    counts: dict[str, tuple[int, int, int]] = {}
    definitions: dict[str, Task] = {}
    for chunk in chunks(named):
        query = (
            select(
                SubmissionRow.task_id,
                func.count(),
                func.count(SubmissionRow.variant),
                func.count(EvaluationRow.scores["suite"].as_string()),
            )
            .join(EvaluationRow, EvaluationRow.submission_id == SubmissionRow.id)
            .where(SubmissionRow.task_id.in_(chunk), SubmissionRow.status.in_(queries.EVALUATED))
            .group_by(SubmissionRow.task_id)
        )
        counts.update(
            {task: (n, variants, suites) for task, n, variants, suites in session.execute(query)}
        )
        for row in session.scalars(select(TaskRow).where(TaskRow.id.in_(chunk))):
            definitions[row.id] = Task.model_validate(row.definition, context=STORED)
    evaluated = [t for t in named if t in counts]  # the others' kind may depend on runs to come
    rules = {
        t: kind_of(definitions[t], has_variants=counts[t][1] > 0, has_scenarios=counts[t][2] > 0)
        for t in evaluated
    }
    scores = sorted({rule.ranking_key for rule in rules.values()})
    if len(scores) > 1:
        raise InvalidInput(
            [("tasks", f"the tasks rank by different scores {scores}; compare tasks of one kind")]
        )
    rows = sum(counts[t][0] for t in evaluated)
    if rows > settings.compare_max_submissions:
        what = f"the tasks named hold {rows:,} evaluated submissions"
        raise InvalidInput(
            [("tasks", _limit(what, "compare_max_submissions", settings.compare_max_submissions))]
        )
    tasks = {t: definitions[t] for t in evaluated}
    profiles = {t: profile_named(task.profile, settings) for t, task in tasks.items()}
    return _Plan(tasks, profiles, rules, rows)


def _variants_present(session: Session, tasks: Sequence[str]) -> int:
    """How many variants the evaluated submissions of ``tasks`` name (no evaluation loaded)."""
    names: set[str | None] = set()
    for chunk in chunks(tasks):
        names.update(
            session.scalars(
                select(SubmissionRow.variant)
                .distinct()
                .join(EvaluationRow, EvaluationRow.submission_id == SubmissionRow.id)
                .where(
                    SubmissionRow.task_id.in_(chunk),
                    SubmissionRow.status.in_(queries.EVALUATED),
                )
            )
        )
    return len(names - {None})


@dataclass(frozen=True)
class _Gathered:
    observations: list[Observation]
    left_out: Counter[tuple[str, str]]
    present: set[str]
    variant_runs: dict[str, list[ScyllaScores]]


def _gather(views: Sequence[TaskView], by: str, *, include_held: bool) -> _Gathered:
    """Every task's evaluated submissions (each scored once, by its view) as observations;
    a run held for review is left out (and counted) unless ``include_held``."""
    observations = []
    left_out: Counter[tuple[str, str]] = Counter()
    present: set[str] = set()
    runs: dict[str, list[ScyllaScores]] = defaultdict(list)
    for view in views:
        task_id, rule, profile = view.task.id, view.rule, view.profile
        for copy in view.copies:
            group = group_of(by, copy)
            if group is not None:
                near = copy.submission.id in view.near_copies
                left_out[(group, NEAR if near else COPY)] += 1
        counted = {id(row) for row in counted_rows(view.rows, view.tickets)}
        for row in view.rows:
            held = row.held and not include_held
            aside = id(row) not in counted
            if row.scores.scylla is not None and len(views) == 1 and not held and not aside:
                runs[row.scores.scylla.variant].append(row.scores.scylla)
            group = group_of(by, row)
            if group is None:
                continue
            present.add(group)
            if aside and by == "variant":
                left_out[(group, UNTICKETED)] += 1
                continue
            if held:
                left_out[(group, HELD)] += 1
                continue
            if row.values.partial:
                left_out[(group, "partial evaluation")] += 1
                continue
            if rule.kind == "suite" and row.scenarios:
                observations += [
                    Observation(
                        f"{task_id}/{s.id}",
                        group,
                        scenario_score(s),
                        scenario_passed(s, profile.suite),
                    )
                    for s in row.scenarios
                ]
                continue
            value = ranking_value(rule, row.values)
            if value is None:
                left_out[(group, f"no {rule.ranking_key}")] += 1
                continue
            scylla = row.scores.scylla
            passed = None if scylla is None else scylla.passed
            observations.append(Observation(task_id, group, round(value, 4), passed))
    return _Gathered(observations, left_out, present, dict(runs))


def _groups(gathered: _Gathered, plan: _Plan, by: str, values: Sequence[str]) -> list[str]:
    """The groups named (every one must have a complete evaluation), or by variant every
    variant that has one, the profile's baseline variant first."""
    present = sorted(gathered.present)
    scored = {o.group for o in gathered.observations}
    named = list(dict.fromkeys(values))
    if not named and by == "variant":
        ordered = sorted(scored, key=natural_order)
        baselines = {profile.scylla.baseline_variant for profile in plan.profiles.values()}
        first = next((v for v in ordered if v in baselines), None)
        named = ([first] if first else []) + [v for v in ordered if v != first]
        if len(named) < 2:
            rule = f"fewer than two variants have a complete evaluation; present: {present}"
            raise InvalidInput([("values", rule)])
    if len(named) < 2:
        raise InvalidInput(
            [("values", f"name two or more {by} values to compare; present: {present}")]
        )
    absent = [v for v in named if v not in scored]
    if absent:
        raise InvalidInput(
            [("values", f"no complete evaluation has {by} {absent}; present: {present}")]
        )
    return named


def check_method(correction: str, alpha: float | None, level: float | None, resamples: int) -> None:
    problems = []
    if correction not in get_args(Correction):
        problems.append(("correction", f"one of {', '.join(get_args(Correction))}"))
    if alpha is not None and not 0 < alpha < 1:
        problems.append(("alpha", "between 0 and 1"))
    if level is not None and not 0 < level < 1:
        problems.append(("level", "between 0 and 1"))
    if not 1 <= resamples <= MAX_RESAMPLES:
        problems.append(("resamples", f"from 1 to {MAX_RESAMPLES}"))
    if problems:
        raise InvalidInput(problems)


def _check_limits(plan_tasks: int, values: Sequence[str], settings: Settings) -> None:
    problems = []
    if plan_tasks > settings.compare_max_tasks:
        what = f"{plan_tasks:,} tasks match"
        problems.append(("tasks", _limit(what, "compare_max_tasks", settings.compare_max_tasks)))
    groups = len(dict.fromkeys(values))
    if groups > settings.compare_max_groups:
        what = f"{groups:,} groups named"
        problems.append(("values", _limit(what, "compare_max_groups", settings.compare_max_groups)))
    if problems:
        raise InvalidInput(problems)


def compare(
    session: Session,
    *,
    tasks: str,
    by: str,
    values: Sequence[str] = (),
    correction: Correction = "holm",
    alpha: float | None = None,
    level: float | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    settings: Settings | None = None,
    include_held: bool = False,
) -> CompareReport:
    """Compare the groups ``by`` makes among the evaluated submissions of ``tasks``.

    Every check that needs no evaluation runs before one is read: the arguments, the limits
    on tasks and groups (``compare_max_tasks``, ``compare_max_groups``), the tasks' kinds and
    the number of rows (``compare_max_submissions``); the units paired
    (``compare_max_units``) are checked before any statistic is drawn. Each task's
    submissions are read and scored once.

    Args:
        tasks: a task id, ids separated by commas, or globs (`resolve_tasks`).
        by: ``model``, ``tool``, ``variant`` or ``metadata.KEY``.
        values: the groups, the reference first; by ``variant`` they may be left out (every
            variant, the profile's baseline variant first).
        correction / alpha: the multiple-comparison correction and its level.
        level / resamples / seed: the bootstrap intervals; ``level`` defaults to the first
            task's profile confidence level (the one its report uses).
        settings: the limits and profiles; the process Settings when None.
        include_held: compare the runs held for review too (by default they are left out,
            and counted in ``left_out``, until a person accepts them).

    Raises:
        InvalidInput: on ``tasks``, ``by``, ``values``, ``correction``, ``alpha``, ``level``
            or ``resamples``, naming the rule broken (a limit names its setting).
    """
    settings = settings or get_settings()
    check_by(by)
    check_method(correction, alpha, level, resamples)
    if not 0 <= seed < 2**32:
        raise InvalidInput([("seed", "from 0 to 2**32 - 1")])
    loaded = load_views(session, tasks=tasks, by=by, values=values, settings=settings)
    found = compare_loaded(
        loaded,
        by=by,
        values=values,
        correction=correction,
        alpha=alpha,
        level=level,
        resamples=resamples,
        seed=seed,
        settings=settings,
        include_held=include_held,
    )
    return with_range_notes(session, found, loaded.views)


def with_range_notes(
    session: Session, found: CompareReport, views: Sequence[TaskView]
) -> CompareReport:
    """``found`` with the range and crowd notes of its Arena tasks
    (`evalq.read.flood.flood_notes`) and, when there are range notes, every conclusion
    withheld (a crowd note withholds nothing: those runs moved no other run's scores)."""
    arena = [view.task.id for view in views if view.rule.kind == "arena"]
    robust = {v.task.id: v.current.baseline for v in views if v.profile.arena.baseline == "robust"}
    found_notes = flood_notes(session, task_ids=arena, robust=robust) if arena else {}
    stretched = [f"{t}: {ranges}" for t, (ranges, _) in found_notes.items() if ranges]
    beyond = [f"{t}: {crowd}" for t, (_, crowd) in found_notes.items() if crowd]
    if not stretched and not beyond:
        return found
    update: dict[str, object] = {"notes": [*found.notes, *stretched, *beyond]}
    if stretched:
        withheld = f"withheld: {'; '.join(stretched)}"
        update["comparisons"] = [replace(c, conclusion=withheld) for c in found.comparisons]
    return found.model_copy(update=update)


@dataclass(frozen=True)
class LoadedTasks:
    """The tasks a comparison reads, each loaded and scored once (`load_views`).

    Attributes:
        named: every task the pattern named, evaluated or not.
        views: the evaluated ones, in the order named.
    """

    named: list[str]
    plan: _Plan
    views: list[TaskView]

    def only(self, task_id: str) -> LoadedTasks:
        """The one task ``task_id`` of these, as if it alone had been named."""
        view = next(v for v in self.views if v.task.id == task_id)
        plan = _Plan(
            {task_id: self.plan.tasks[task_id]},
            {task_id: self.plan.profiles[task_id]},
            {task_id: self.plan.rules[task_id]},
            len(view.rows),
        )
        return LoadedTasks([task_id], plan, [view])


def load_views(
    session: Session, *, tasks: str, by: str, values: Sequence[str], settings: Settings
) -> LoadedTasks:
    """Check the limits a comparison of ``tasks`` by ``by`` keeps, then load every task's
    baseline and evaluations together: a fixed number of statements (one per 500 tasks), not
    two per task.

    Raises:
        InvalidInput: on ``tasks`` or ``values``, as `compare`.
    """
    named = resolve_tasks(session, tasks)
    _check_limits(len(named), values, settings)
    plan = _plan(session, named, settings)
    task_ids = list(plan.tasks)
    if not task_ids:
        raise InvalidInput([("tasks", f"no evaluated submission in {named}")])
    if by == "variant" and not values:
        found = _variants_present(session, task_ids)
        if found > settings.compare_max_groups:
            what = f"{found:,} variants to compare (every variant when values are omitted)"
            rule = _limit(what, "compare_max_groups", settings.compare_max_groups)
            raise InvalidInput([("values", f"{rule}; name the variants to compare")])
    baselines = current_baselines(session, profiles={t: plan.profiles[t] for t in task_ids})
    evaluated = queries.tasks_evaluations(session, task_ids=task_ids)
    views = [
        view_from(
            TaskContext(
                plan.tasks[t],
                plan.profiles[t],
                baselines[t],
                tickets=tickets_of(session, task_id=t) if len(task_ids) == 1 else {},
            ),
            evaluated[t],
        )
        for t in task_ids
    ]
    return LoadedTasks(named, plan, views)


def compare_loaded(
    loaded: LoadedTasks,
    *,
    by: str,
    values: Sequence[str],
    correction: Correction = "holm",
    alpha: float | None = None,
    level: float | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    settings: Settings,
    include_held: bool = False,
    threshold: float | None = None,
) -> CompareReport:
    """`compare` of tasks already loaded (the method's arguments already checked); the
    intervals at ``1 - threshold`` when given (`evalq.stats.contrast.contrast`)."""
    return _compared(
        loaded.views,
        loaded.named,
        loaded.plan,
        by=by,
        values=values,
        correction=correction,
        alpha=alpha,
        level=level,
        resamples=resamples,
        seed=seed,
        settings=settings,
        include_held=include_held,
        threshold=threshold,
    )


def compare_task(
    view: TaskView,
    *,
    by: str,
    values: Sequence[str] = (),
    settings: Settings | None = None,
    include_held: bool = False,
) -> CompareReport:
    """`compare` over one task already loaded (`task_view`), with the default method: what a
    task's report shows. The same limits are checked; nothing more is read.

    Raises:
        InvalidInput: as `compare` (``by``, ``values``, or a limit on ``tasks``).
    """
    settings = settings or get_settings()
    check_by(by)
    task_id = view.task.id
    _check_limits(1, values, settings)
    if not view.rows:
        raise InvalidInput([("tasks", f"no evaluated submission in {[task_id]}")])
    rows = len(view.rows)
    if rows > settings.compare_max_submissions:
        what = f"the tasks named hold {rows:,} evaluated submissions"
        raise InvalidInput(
            [("tasks", _limit(what, "compare_max_submissions", settings.compare_max_submissions))]
        )
    if by == "variant" and not values:
        found = len({r.submission.variant for r in view.rows} - {None})
        if found > settings.compare_max_groups:
            what = f"{found:,} variants to compare (every variant when values are omitted)"
            rule = _limit(what, "compare_max_groups", settings.compare_max_groups)
            raise InvalidInput([("values", f"{rule}; name the variants to compare")])
    plan = _Plan({task_id: view.task}, {task_id: view.profile}, {task_id: view.rule}, rows)
    return _compared(
        [view],
        [task_id],
        plan,
        by=by,
        values=values,
        correction="holm",
        alpha=None,
        level=None,
        resamples=RESAMPLES,
        seed=SEED,
        settings=settings,
        include_held=include_held,
    )


def _compared(
    views: Sequence[TaskView],
    named: Sequence[str],
    plan: _Plan,
    *,
    by: str,
    values: Sequence[str],
    correction: Correction,
    alpha: float | None,
    level: float | None,
    resamples: int,
    seed: int,
    settings: Settings,
    include_held: bool,
    threshold: float | None = None,
) -> CompareReport:
    """The comparison of the tasks loaded in ``views`` (every check on the request done)."""
    task_ids = list(plan.tasks)
    gathered = _gather(views, by, include_held=include_held)
    groups = _groups(gathered, plan, by, values)
    units = len({o.unit for o in gathered.observations if o.group in groups})
    if units > settings.compare_max_units:
        what = f"{units:,} units (tasks or scenarios) to pair"
        raise InvalidInput(
            [("tasks", _limit(what, "compare_max_units", settings.compare_max_units))]
        )
    kind, score_key = plan.rules[task_ids[0]].kind, plan.rules[task_ids[0]].ranking_key
    profile = plan.profiles[task_ids[0]]
    level = profile.arena.confidence_level if level is None else level
    alpha = round(1 - profile.arena.confidence_level, 12) if alpha is None else alpha
    analysis = None
    short: dict[str, Shortfall] = {}
    observations = gathered.observations
    ladder = by == "variant" and len(task_ids) == 1 and kind == "scylla"
    if ladder:
        # the runs planned and not sent count as failures here too (`evalq.read.plans`)
        rows = views[0].rows
        counts = views[0].counts  # the whole task's, when its rows are a sample
        tickets = views[0].tickets
        short = shortfalls(rows, profile.scylla, counts, tickets)
        runs = padded(gathered.variant_runs, short, rows, profile.scylla, counts)
        # as many failures as `padded` added (a sampled variant: its sample's share)
        added = {v: len(runs[v]) - len(found) for v, found in gathered.variant_runs.items()}
        observations = observations + [
            Observation(task_ids[0], variant, 0.0, False)
            for variant, shortfall in short.items()
            for _ in range(added.get(variant, (shortfall.planned or 0) - shortfall.sent))
        ]
        found_analysis = analyse_variants(
            {v: runs[v] for v in groups if v in runs},
            profile.scylla,
            level=level,
            alpha=alpha,
            correction=correction,
            resamples=resamples,
            seed=seed,
        )
        analysis = with_shortfalls(variants_analysis(found_analysis), short, tickets)
    # by default (every variant) a group left out entirely is reported too
    kept = set(groups) if values else gathered.present
    unit: Literal["task", "scenario"] = "scenario" if kind == "suite" else "task"
    # a plan is a task's: only a comparison inside one task is said underpowered
    power = plan_view(views[0]) if len(views) == 1 and kind != "suite" else None
    found = contrast(
        observations,
        groups,
        correction=correction,
        alpha=alpha,
        level=level,
        resamples=resamples,
        seed=seed,
        unit=unit,
        family="all pairs" if ladder else "reference",
        scale=plan.rules[task_ids[0]].scale,
        threshold=threshold,
    )
    return CompareReport(
        tasks=task_ids,
        not_evaluated=[t for t in named if t not in plan.tasks],
        kind=kind,
        ranking_key=score_key,
        score="scenario_score" if kind == "suite" else score_key,
        unit=unit,
        by=by,
        groups=list(found.groups),
        reference=found.reference,
        comparisons=[
            _said(_powered(c, power), short, views[0].tickets if ladder else None)
            for c in found.comparisons
        ],
        units=list(found.units),
        correction=found.correction,
        alpha=found.alpha,
        level=found.level,
        resamples=found.resamples,
        seed=found.seed,
        family=found.family,
        tests=found.tests,
        interval_level=found.interval_level,
        left_out=[
            LeftOut(group=group, reason=reason, count=n)
            for (group, reason), n in sorted(gathered.left_out.items())
            if group in kept
        ],
        include_held=include_held,
        variants=analysis,
    )


def _powered(comparison: GroupComparison, plan: PowerPlan | None) -> GroupComparison:
    """``comparison`` noting that it has fewer runs a side than ``plan`` needs
    (`evalq.read.power`)."""
    if plan is None:
        return comparison
    have = comparison.pairs or min(comparison.n_reference, comparison.n_other)
    note = underpowered_note(plan, have)
    return comparison if note is None else replace(comparison, notes=(*comparison.notes, note))


def _said(
    comparison: GroupComparison, short: Mapping[str, Shortfall], tickets: Tickets | None = None
) -> GroupComparison:
    """``comparison`` noting the variants short of their plan or peers (`evalq.read.plans`);
    its conclusion withheld when one is short of its peers or has tickets pending. With
    ``tickets`` (a comparison of one task's variants), one from or to a variant without run
    tickets says "not pre-registered" first."""
    found = [short[g] for g in (comparison.reference, comparison.other) if g in short]
    loose = unregistered((comparison.reference, comparison.other), tickets)
    if loose:
        comparison = replace(comparison, notes=(*comparison.notes, registration_note(loose)))
    if not found:
        return comparison
    notes = tuple(s.note() for s in found)
    if any(s.withheld for s in found):
        conclusion = f"withheld: {'; '.join(notes)}"
        return replace(comparison, conclusion=conclusion, notes=comparison.notes + notes)
    return replace(comparison, notes=comparison.notes + notes)
