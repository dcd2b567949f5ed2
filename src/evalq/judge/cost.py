"""Judge spend: tokens and dollars per evaluation, priced from the profile, against a budget."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from evalq.core.profile import Profile


def pricing_key(model: str, profile: Profile) -> str | None:
    """The profile's pricing entry for a judge model id, or None when it has none.

    Tries the id as configured, then without its ``provider:`` prefix, so ``openai:gpt-4o``
    is priced by the profile's ``gpt-4o`` entry.
    """
    for candidate in (model, model.split(":", 1)[-1]):
        if candidate in profile.pricing:
            return candidate
    return None


@dataclass
class Spend:
    """Tokens and dollars spent by the judge on one evaluation; thread-safe.

    Attributes:
        profile: prices per million tokens.
        price_key: the pricing entry of the judge model; None = unknown price.
        budget_usd: dollars allowed for this evaluation.
    """

    profile: Profile
    price_key: str | None
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
        """Dollars for the given tokens; None when the model has no price in the profile."""
        if self.price_key is None:
            return None
        return self.profile.price(self.price_key, input_tokens, output_tokens)

    @property
    def cost_usd(self) -> float | None:
        """Dollars spent so far; None when the model has no price."""
        return self.cost_of(self.input_tokens, self.output_tokens)

    @property
    def exhausted(self) -> bool:
        """True once the spend reached the budget (never, when the price is unknown)."""
        cost = self.cost_usd
        return cost is not None and cost >= self.budget_usd
