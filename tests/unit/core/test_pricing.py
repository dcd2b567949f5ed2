"""genai-prices lookups by a pydantic-ai model string."""

from __future__ import annotations

import pytest

from evalq.core.pricing import genai_price


@pytest.mark.parametrize(
    ("model", "entry"),
    [
        ("openai:gpt-4.1-mini", "openai:gpt-4.1-mini"),
        ("gpt-4.1-mini", "openai:gpt-4.1-mini"),
        # the provider ends at the first ':'; a Bedrock id carries a version after another one
        (
            "bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0",
            "aws:regional.anthropic.claude-3-5-sonnet-20240620-v1:0",
        ),
    ],
)
def test_a_model_string_finds_its_genai_prices_entry(model: str, entry: str) -> None:
    price = genai_price(model, 1000, 1000)
    assert price is not None and price.source.entry == entry
    assert price.source.origin == "genai-prices" and price.cost_usd > 0


def test_an_unknown_model_has_no_price() -> None:
    assert genai_price("local:my-finetune-7b", 1000, 1000) is None
