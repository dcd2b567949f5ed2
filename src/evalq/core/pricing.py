"""Dollars for tokens: the profile's pricing table first, then the maintained genai-prices data.

The profile's table is the operator's word (negotiated rates, a model the package prices
differently) and overrides the package; every other model is priced by `genai-prices`, whose
version is recorded with the figure because its data changes between releases. A model neither
knows stays unpriced (None), never 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalq.core.profile import Profile
from evalq.core.results import PriceSource
from evalq.core.schemas import Submission


@dataclass(frozen=True)
class Quote:
    """A priced token count: dollars and where the price came from (the profile's per-token
    rates are `evalq.core.profile.Price`)."""

    cost_usd: float
    source: PriceSource


def profile_entry(model: str, profile: Profile) -> str | None:
    """The profile's pricing key for a model id, or None when it has none.

    Tries the id as given, then without a ``provider:`` prefix, so ``openai:gpt-4o`` is priced
    by the profile's ``gpt-4o`` entry.
    """
    for candidate in (model, model.split(":", 1)[-1]):
        if candidate in profile.pricing:
            return candidate
    return None


def price_submission(sub: Submission, profile: Profile) -> float | None:
    """A run's cost in dollars (`quote_submission`), or None when it cannot be priced."""
    quote = quote_submission(sub, profile)
    return None if quote is None else quote.cost_usd


def quote_submission(sub: Submission, profile: Profile) -> Quote | None:
    """A run's cost and its source: ``usage.cost_usd`` when reported; otherwise its tokens
    priced by the profile's table or genai-prices (`price_tokens`) when both token counts are
    known and the model has a price; otherwise None."""
    usage = sub.usage
    if usage.cost_usd is not None:
        return Quote(usage.cost_usd, PriceSource(origin="reported"))
    if usage.input_tokens is None or usage.output_tokens is None:
        return None
    return price_tokens(sub.model, usage.input_tokens, usage.output_tokens, profile)


def price_tokens(
    model: str, input_tokens: int, output_tokens: int, profile: Profile
) -> Quote | None:
    """The cost of ``input_tokens`` and ``output_tokens`` on ``model``, or None when unpriced."""
    entry = profile_entry(model, profile)
    if entry is not None:
        cost = profile.price(entry, input_tokens, output_tokens)
        if cost is not None:
            return Quote(cost, PriceSource(origin="profile", entry=entry))
    return genai_price(model, input_tokens, output_tokens)


def genai_price(model: str, input_tokens: int, output_tokens: int) -> Quote | None:
    """The genai-prices figure for ``model`` (``provider:name`` or a bare name), or None.

    A ``provider:`` prefix (pydantic-ai's model strings) narrows the search to that provider;
    one genai-prices does not know (``google-gla``, a local server's) is retried without it.
    """
    import genai_prices  # 0.4 s to import: only when a price is needed

    usage = genai_prices.Usage(
        input_tokens=max(0, input_tokens), output_tokens=max(0, output_tokens)
    )
    # The provider ends at the first ':' (a Bedrock id has more: ``bedrock:...-v1:0``).
    provider, colon, name = model.partition(":")
    tries = [(provider, name), (None, name)] if colon else []
    for provider_id, model_name in dict.fromkeys([*tries, (None, model)]):
        try:
            calc = genai_prices.calc_price(usage, model_name, provider_id=provider_id)
        except LookupError:
            continue
        source = PriceSource(
            origin="genai-prices",
            entry=f"{calc.provider.id}:{calc.model.id}",
            version=genai_prices.__version__,
        )
        return Quote(float(calc.total_price), source)
    return None
