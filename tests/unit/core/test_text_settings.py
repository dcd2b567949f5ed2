"""The tier-1 settings: EVALQ_TEXT_DEVICE and EVALQ_TEXT_BATCH_MAX, checked when read."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evalq.core.settings import Settings


@pytest.mark.parametrize("device", ["cpu", "cuda", "cuda:0", "cuda:12"])
def test_the_devices_that_exist_are_accepted(device: str) -> None:
    assert Settings(text_device=device).text_device == device


@pytest.mark.parametrize("device", ["gpu", "cuda:", "cuda:a", "mps", "CPU", ""])
def test_any_other_device_is_refused_naming_the_setting(device: str) -> None:
    with pytest.raises(ValidationError, match="text_device"):
        Settings(text_device=device)


def test_the_defaults_run_on_the_cpu_in_batches_of_32() -> None:
    settings = Settings()
    assert (settings.text_device, settings.text_batch_max) == ("cpu", 32)


@pytest.mark.parametrize("size", [0, 1025])
def test_a_batch_size_out_of_range_is_refused(size: int) -> None:
    with pytest.raises(ValidationError, match="text_batch_max"):
        Settings(text_batch_max=size)


def test_a_negative_helper_count_is_refused_naming_the_setting() -> None:
    assert Settings().text_helpers is None  # one per tier-1 slot
    assert Settings(text_helpers=0).text_helpers == 0  # tier 1 in the worker's threads
    with pytest.raises(ValidationError, match="text_helpers"):
        Settings(text_helpers=-1)
