"""Judge spend: tokens and dollars per evaluation, priced by the profile or genai-prices, against
a budget."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from evalq.core.pricing import Quote, price_tokens, profile_entry
from evalq.core.profile import Profile
from evalq.core.results import PriceSource


def judge_price(
    model_id: str, input_tokens: int, output_tokens: int, profile: Profile
) -> Quote | None:
    """The price of judge tokens, or None when the model has none.

    A judge on an OpenAI-compatible server of one's own (``model@base_url``) is priced by the
    profile's table only, under its model name: genai-prices would price a self-hosted model at
    some provider's rate.
    """
    if "@" not in model_id:
        return price_tokens(model_id, input_tokens, output_tokens, profile)
    entry = profile_entry(model_id.split("@", 1)[0], profile)
    cost = None if entry is None else profile.price(entry, input_tokens, output_tokens)
    return None if cost is None else Quote(cost, PriceSource(origin="profile", entry=entry))


@dataclass
class Spend:
    """Tokens and dollars spent by the judge on one evaluation; thread-safe.

    Attributes:
        profile: its ``pricing`` table overrides genai-prices.
        model_id: the judge model being priced.
        budget_usd: dollars allowed for this evaluation.
    """

    profile: Profile
    model_id: str
    budget_usd: float
    input_tokens: int = 0
    output_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, input_tokens: int, output_tokens: int) -> None:
        """Count one response's tokens."""
        with self._lock:
            self.input_tokens += max(0, input_tokens)
            self.output_tokens += max(0, output_tokens)

    def cost_of(self, input_tokens: int, output_tokens: int) -> float | None:
        """Dollars for the given tokens; None when the model has no price."""
        price = judge_price(self.model_id, input_tokens, output_tokens, self.profile)
        return None if price is None else price.cost_usd

    @property
    def priced_by(self) -> PriceSource | None:
        """Where the judge model's price comes from; None when it has none."""
        price = judge_price(self.model_id, 0, 0, self.profile)
        return None if price is None else price.source

    @property
    def cost_usd(self) -> float | None:
        """Dollars spent so far; None when the model has no price."""
        return self.cost_of(self.input_tokens, self.output_tokens)

    @property
    def exhausted(self) -> bool:
        """True once the spend reached the budget (never, when the price is unknown)."""
        cost = self.cost_usd
        return cost is not None and cost >= self.budget_usd
