"""Spec 001's reference style of BERTScore, for tests and benchmarks that compare against it."""

from __future__ import annotations

import torch

from evalq.metrics.semantic import go_offline


def reference_bertscore(text: str, reference: str, model_path: str) -> float:
    """Spec 001's reference style: a new torchmetrics `BERTScore` per call, same local model.

    For benchmarks against `SemanticScorer`. Loads the model on every call and, like torchmetrics
    itself, fails on texts longer than the model's 512 positions.
    """
    go_offline()
    from torchmetrics.text import BERTScore

    metric = BERTScore(model_name_or_path=model_path)  # last layer, no idf, no rescaling
    f1 = metric([text], [reference])["f1"]
    return float(torch.as_tensor(f1).reshape(-1)[0])  # one pair: torchmetrics returns a 0-d tensor
