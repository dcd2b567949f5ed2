"""The tier-1 compute slots of every evalq process on this machine, so that each shares the CPUs
out over all of them, not only over its own children.

A process that runs tier 1 records how many computations it runs at once (a prefork child: one;
a worker on threads, the in-process one included: its slots) in a file named after its process
id, in a directory the workers of one machine share (``EVALQ_TEXT_SLOTS_DIR``; by default one
per user under the temporary directory). A share counts the slots of the files whose process is
alive; a file left by a process killed with -9 counts for nothing.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import tempfile
from pathlib import Path

from evalq.core.settings import Settings
from evalq.workers.bootstrap import torch_threads


def slots_dir(settings: Settings) -> Path:
    """Where the machine's processes record their tier-1 slots."""
    if settings.text_slots_dir is not None:
        return Path(settings.text_slots_dir)
    return Path(tempfile.gettempdir()) / f"evalq-tier1-slots-{os.getuid()}"


def record(directory: Path, slots: int) -> Path:
    """Record this process's ``slots``; the file goes when the process exits normally."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / str(os.getpid())
    path.write_text(str(slots))
    atexit.register(_forget, path)
    return path


def machine_slots(directory: Path) -> int:
    """The tier-1 slots recorded by the live processes of this machine (0 when none)."""
    total = 0
    with contextlib.suppress(FileNotFoundError):
        for path in directory.iterdir():
            if path.name.isdigit() and _alive(int(path.name)):
                with contextlib.suppress(OSError, ValueError):
                    total += int(path.read_text())
    return total


def threads_per_slot(own_slots: int, directory: Path, cpus: int | None = None) -> int:
    """torch threads for each tier-1 computation of a process with ``own_slots``: the CPUs shared
    out over every slot recorded on the machine (its own at least), at least 1."""
    return torch_threads(max(own_slots, machine_slots(directory)), cpus)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process, alive
        return True
    return True


def _forget(path: Path) -> None:
    if path.name == str(os.getpid()):  # not a forked child's copy of its parent's hook
        path.unlink(missing_ok=True)
