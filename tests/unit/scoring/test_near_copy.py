"""Near-copies by similarity: appended, nudged or renamed copies count once; distinct runs do
not merge."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from importlib import resources

import pytest

from evalq.scoring import review
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.near_copy import NEAR_CONTAINMENT, containment, sketch
from evalq.scoring.review import RunFacts, duplicates

RUNS = [
    json.loads(line)
    for line in (resources.files("evalq") / "examples" / "scylla.jsonl").read_text().splitlines()
]


def facts(
    payload: dict[str, object],
    sid: str,
    minute: int,
    *,
    model: str = "m",
    scale: float = 1.0,
    cost: float | None = None,
) -> RunFacts:
    return RunFacts(
        run=ArenaRun(
            submission_id=sid,
            task_id="t",
            total_tokens=round(100_000 * scale),
            tool_calls=25,
            iterations=1,
            execution_time=400.0 * scale,
            cost_usd=cost,
            tool="tool",
            model=model,
        ),
        submitted_at=datetime(2026, 11, 28, tzinfo=UTC) + timedelta(minutes=minute),
        run_hash=sid,
        output_hash=sid,
        shape_hash=sid,
        sketch=sketch(payload),
    )


def test_appended_nudged_or_renamed_copies_are_near_copies() -> None:
    run = RUNS[0]
    original = facts(run, "original", 0)
    appended = facts(dict(run, output=f"{run['output']} Checked twice."), "appended", 1)
    nudged = facts(run, "nudged", 2, scale=1.03)
    renamed = facts(run, "renamed", 3, model="other")
    found = duplicates([original, appended, nudged, renamed])
    assert found == {"appended": "original", "nudged": "original", "renamed": "original"}


def test_distinct_outputs_or_usage_apart_do_not_merge() -> None:
    a, b = RUNS[0], next(r for r in RUNS if r["output"] != RUNS[0]["output"])
    sa, sb = sketch(a), sketch(b)
    assert sa is not None and sb is not None and containment(sa, sb) < NEAR_CONTAINMENT
    assert duplicates([facts(a, "a", 0), facts(b, "b", 1)]) == {}
    assert duplicates([facts(a, "a", 0), facts(a, "far", 1, scale=1.05)]) == {}


def test_one_agents_runs_apart_in_cost_alone_are_its_own_runs_and_another_agents_are_not() -> None:
    # the cost is left out only across agents (a relabelled copy is re-priced by its model's
    # name); within one agent a cost 4% apart is a run of its own, as it was for the shape rule
    run = RUNS[0]
    first = facts(run, "first", 0, cost=10.0)
    again = facts(dict(run, output=f"{run['output']} (attempt 2)"), "again", 1, cost=10.4)
    assert duplicates([first, again]) == {}
    relabelled = facts(run, "relabelled", 1, model="other", cost=10.4)
    assert duplicates([first, relabelled]) == {"relabelled": "first"}


def scanned(runs: list[RunFacts]) -> dict[str, str]:
    """`duplicates` as a scan of every earlier counted run, pair by pair (the rule as stated in
    `evalq.scoring.review`): the reference the indexed search must equal."""
    from evalq.scoring.near_copy import near
    from evalq.scoring.review import same_agent, same_usage

    first: dict[str, str] = {}
    counted: list[RunFacts] = []
    found: dict[str, str] = {}
    for f in sorted((f for f in runs if f.run_hash is not None), key=lambda f: f.order):
        original = first.setdefault(str(f.run_hash), f.run.submission_id)
        if original != f.run.submission_id:
            found[f.run.submission_id] = original
            continue
        same = next(
            (
                e
                for e in counted
                if e.shape_hash is not None
                and (e.shape_hash, e.run.tool, e.run.model)
                == (f.shape_hash, f.run.tool, f.run.model)
                and same_usage(e.run, f.run)
            ),
            None,
        )
        if same is None and f.sketch is not None:
            same = next(
                (
                    e
                    for e in counted
                    if e.sketch is not None
                    and same_usage(e.run, f.run, cost=same_agent(e.run, f.run))
                    and near(e.sketch, f.sketch) is not None
                ),
                None,
            )
        if same is not None:
            found[f.run.submission_id] = same.run.submission_id
            continue
        counted.append(f)
    return found


def random_runs(rng: random.Random) -> list[RunFacts]:
    """40-160 runs, with copies of every kind among them (repeated contents, shapes, sketches,
    usage a little or far apart)."""
    texts = [r["output"] for r in RUNS if r.get("output")][:6]
    texts += [f"{t} Checked twice." for t in texts[:3]]  # near by containment
    runs = []
    for i in range(rng.randint(40, 160)):
        text = rng.choice(texts)
        scale = rng.choice([1.0, 1.0, 1.02, 1.034, 1.036, 1.2, 0.97])
        runs.append(
            RunFacts(
                run=ArenaRun(
                    submission_id=f"r{i}",
                    task_id="t",
                    total_tokens=rng.choice([0, 1000, 1030, 1100])
                    if rng.random() < 0.1
                    else round(100_000 * scale),
                    tool_calls=rng.choice([25, 25, 26, 0]),
                    iterations=rng.choice([1, 1, 2]),
                    execution_time=rng.choice([None, 400.0 * scale, 400.0 * scale * 1.05]),
                    cost_usd=rng.choice([None, 0.5 * scale, 0.52 * scale]),
                    tool=rng.choice(["a", "b"]),
                    model=rng.choice(["m", "n"]),
                ),
                submitted_at=datetime(2026, 11, 28, tzinfo=UTC)
                + timedelta(minutes=rng.randint(0, 30)),
                run_hash=rng.choice([f"h{i}", f"h{i}", f"h{i % 7}"])
                if rng.random() > 0.05
                else None,
                output_hash=None,
                shape_hash=rng.choice([None, text[:20]]),
                sketch=rng.choice([None, sketch({"output": text}), sketch({"output": text})]),
            )
        )
    return runs


@pytest.mark.parametrize("seed", range(12))
def test_the_indexed_search_finds_what_a_scan_of_every_earlier_run_finds(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    if seed % 2:  # blocks of a few pairs: the pairs cut between blocks are still found
        monkeypatch.setattr(review, "PAIR_BLOCK", 7)
        monkeypatch.setattr(review, "SKETCH_BLOCK", 3)
    runs = random_runs(random.Random(seed))
    found = duplicates(runs)
    assert found == scanned(runs)
    assert found  # the data hold copies of every kind, not only none


@pytest.mark.parametrize("seed", range(8))
def test_runs_near_in_usage_are_those_a_pairwise_comparison_finds(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalq.scoring.review import near_in_usage, same_usage

    if seed % 2:
        monkeypatch.setattr(review, "PAIR_BLOCK", 5)

    rng = random.Random(seed)
    runs = [
        ArenaRun(
            submission_id=f"r{i}",
            task_id="t",
            total_tokens=rng.choice([0, 0, 1000, 1034, 1036, 1072, 5000, 5100]),
            tool_calls=rng.choice([3, 3, 4, 27, 28, 29]),  # 28 and 29 are within 3.5%
            iterations=rng.choice([1, 1, 2]),
            execution_time=rng.choice([None, 10.0, 10.3, 10.4, 0.0, 27.0, 28.0]),
            cost_usd=rng.choice([None, 1.0, 9.0]),  # left out: it never decides
        )
        for i in range(rng.randint(20, 120))
    ]
    pairs = {
        sid
        for a in runs
        for b in runs
        if a is not b and same_usage(a, b, cost=False)
        for sid in (a.submission_id, b.submission_id)
    }
    found = near_in_usage(runs)
    assert found == pairs
    assert found and len(found) < len(runs)


def test_a_stored_sketch_reads_back_as_the_sketch_it_was() -> None:
    from evalq.scoring.near_copy import sketch_bytes, stored_sketch

    run = RUNS[0]
    found = sketch(run)
    appended = sketch(dict(run, output=f"{run['output']} Checked twice."))
    assert found is not None and appended is not None
    stored = sketch_bytes(found)
    assert stored is not None and len(stored) == 4 + 4 * 128
    back = stored_sketch(stored)
    assert list(back.values) == list(found.values)
    assert back.size == found.size
    assert containment(back, appended) == containment(found, appended) >= NEAR_CONTAINMENT


def test_a_sketchs_jaccard_is_datasketchs_estimate() -> None:
    from datasketch import MinHash

    from evalq.scoring.near_copy import NUM_PERM, SEED, _first_minhash

    scheme = _first_minhash().scheme

    texts = [r["output"] for r in RUNS if r.get("output")][:4]
    found = [sketch({"output": t}) for t in [*texts, f"{texts[0]} Checked twice."]]
    for a in found:
        for b in found:
            assert a is not None and b is not None
            ours = a.jaccard(b)
            theirs = MinHash(
                num_perm=NUM_PERM, seed=SEED, hashvalues=a.values, scheme=scheme
            ).jaccard(MinHash(num_perm=NUM_PERM, seed=SEED, hashvalues=b.values, scheme=scheme))
            assert ours == theirs
    assert 0 < found[0].jaccard(found[-1]) < 1  # type: ignore[union-attr]


@pytest.mark.parametrize("seed", range(12))
def test_runs_decided_after_earlier_ones_are_decided_as_the_whole_task_decides_them(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`duplicates_after` (what a refresh decides of the runs merged since the last one, given
    the counted runs before them in reach of their usage) equals `duplicates` of every run."""
    from evalq.scoring.review import NEAR_COPY_TOLERANCE, duplicates_after

    if seed % 2:
        monkeypatch.setattr(review, "PAIR_BLOCK", 7)
    rng = random.Random(seed)
    runs = sorted((f for f in random_runs(rng) if f.run_hash is not None), key=lambda f: f.order)
    whole = duplicates(runs)
    skipped = 0
    for split in sorted({0, len(runs) // 3, rng.randrange(len(runs)), len(runs) - 1}):
        before, later = runs[:split], runs[split:]
        firsts: dict[str, str] = {}
        for f in before:
            firsts.setdefault(str(f.run_hash), f.run.submission_id)
        in_reach = [
            f
            for f in before
            if f.run.submission_id not in whole
            and any(
                abs(f.run.total_tokens - g.run.total_tokens)
                <= NEAR_COPY_TOLERANCE * max(f.run.total_tokens, g.run.total_tokens)
                for g in later
            )
        ]
        wanted = {
            f.run.submission_id: whole[f.run.submission_id]
            for f in later
            if f.run.submission_id in whole
        }
        assert duplicates_after(in_reach, firsts, later) == wanted
        skipped += sum(f.run.submission_id not in whole for f in before) - len(in_reach)
    assert whole
    assert skipped  # some counted runs were out of reach, and left out of the search
