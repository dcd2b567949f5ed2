"""Judge unit tests run with real model requests disabled; their models are FunctionModels."""

from __future__ import annotations

from collections.abc import Iterator

import pydantic_ai.models
import pytest


@pytest.fixture(autouse=True)
def _no_real_model_requests() -> Iterator[None]:
    before = pydantic_ai.models.ALLOW_MODEL_REQUESTS
    pydantic_ai.models.ALLOW_MODEL_REQUESTS = False
    yield
    pydantic_ai.models.ALLOW_MODEL_REQUESTS = before
