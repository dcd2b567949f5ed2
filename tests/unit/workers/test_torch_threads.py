"""Prefork text children share the CPUs out as torch threads instead of each taking all of them."""

from __future__ import annotations

import pytest
from tests.support.settings import configure

from evalq.workers.bootstrap import torch_threads


def test_children_share_the_cpus_out() -> None:
    assert torch_threads(2, cpus=2) == 1
    assert torch_threads(2, cpus=8) == 4
    assert torch_threads(1, cpus=8) == 8


def test_every_child_keeps_at_least_one_thread() -> None:
    assert torch_threads(4, cpus=2) == 1
    assert torch_threads(0, cpus=2) == 2


def test_the_setting_replaces_the_share_when_workers_share_a_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch

    from evalq.tasks.resources import text_capacity

    before = torch.get_num_threads()
    try:
        configure(monkeypatch, text_threads="3")
        with text_capacity():
            assert torch.get_num_threads() == 3
        configure(monkeypatch, text_threads="1")
        with text_capacity():
            assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
