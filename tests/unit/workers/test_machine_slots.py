"""torch's threads are shared out over every tier-1 slot on the machine, not one worker's."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalq.core.settings import Settings
from evalq.workers.machine_slots import machine_slots, record, slots_dir, threads_per_slot


@pytest.fixture
def other_worker() -> Iterator[int]:
    """The pid of a live process standing for another worker on the machine."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    yield process.pid
    process.kill()
    process.wait()


def finished_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_alone_a_worker_shares_the_cpus_over_its_own_slots(tmp_path: Path) -> None:
    assert machine_slots(tmp_path / "none yet") == 0
    assert threads_per_slot(2, tmp_path, cpus=8) == 4
    record(tmp_path, 2)
    assert machine_slots(tmp_path) == 2
    assert threads_per_slot(2, tmp_path, cpus=8) == 4


def test_two_workers_on_one_machine_take_half_each(tmp_path: Path, other_worker: int) -> None:
    # Before issue 49's thread budget each counted its own children only: two workers of two
    # children on 8 CPUs ran 4 threads per child, 16 threads on 8 CPUs.
    record(tmp_path, 2)
    (tmp_path / str(other_worker)).write_text("2")
    assert machine_slots(tmp_path) == 4
    assert threads_per_slot(2, tmp_path, cpus=8) == 2
    assert threads_per_slot(2, tmp_path, cpus=2) == 1  # at least one


def test_a_dead_workers_record_counts_for_nothing(tmp_path: Path) -> None:
    (tmp_path / str(finished_pid())).write_text("6")  # killed with -9: its file stayed
    (tmp_path / "notes.txt").write_text("3")  # not a process's record
    record(tmp_path, 1)
    assert machine_slots(tmp_path) == 1
    assert threads_per_slot(1, tmp_path, cpus=4) == 4


def test_the_directory_is_per_user_unless_set(tmp_path: Path) -> None:
    assert slots_dir(Settings()).name == f"evalq-tier1-slots-{os.getuid()}"
    assert slots_dir(Settings(text_slots_dir=str(tmp_path))) == tmp_path
