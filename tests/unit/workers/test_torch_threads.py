"""Prefork text children share the CPUs out as torch threads instead of each taking all of them."""

from __future__ import annotations

from evalq.workers.bootstrap import torch_threads


def test_children_share_the_cpus_out() -> None:
    assert torch_threads(2, cpus=2) == 1
    assert torch_threads(2, cpus=8) == 4
    assert torch_threads(1, cpus=8) == 8


def test_every_child_keeps_at_least_one_thread() -> None:
    assert torch_threads(4, cpus=2) == 1
    assert torch_threads(0, cpus=2) == 2
