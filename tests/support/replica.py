"""A PostgreSQL primary and its streaming replica of the test's own, on free loopback ports.

Made with Debian's binaries (/usr/lib/postgresql/<version>/bin): `initdb` a primary in a
temporary directory (``wal_level=replica``), `pg_basebackup -R` it into another (the standby
signal and ``primary_conninfo`` written by -R), start both. Never the shared cluster. PostgreSQL
refuses to run as root, so as root every binary runs as the ``postgres`` user (`runuser`).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.processes import PATIENCE

HOST = "127.0.0.1"


@dataclass(frozen=True)
class Pair:
    """The primary's and the replica's ports and a URL maker."""

    primary_port: int
    replica_port: int

    def url(self, port: int, database: str) -> str:
        return f"postgresql+psycopg://postgres@{HOST}:{port}/{database}"


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL's bin directory, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    return Path(found[-1]).parent if found else None


def _version(path: str) -> int:
    return int(Path(path).parent.parent.name.split(".")[0])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _run(argv: list[str]) -> None:
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    done = subprocess.run(
        [*as_postgres, *argv], capture_output=True, text=True, timeout=120 * PATIENCE
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stdout[-2000:]}{done.stderr[-2000:]}")


@contextmanager
def streaming_pair() -> Iterator[Pair]:
    """A running primary and its streaming replica; both stopped and removed afterwards.

    Skipped locally, failed in CI, when PostgreSQL's server binaries are not installed.
    """
    binaries = postgres_bin()
    if binaries is None:
        message = "PostgreSQL's server binaries (/usr/lib/postgresql/*/bin) are not installed"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    top = Path(tempfile.mkdtemp(prefix="evalq-replica-"))
    primary, replica = top / "primary", top / "replica"
    if os.geteuid() == 0:
        shutil.chown(top, "postgres", "postgres")
    pair = Pair(_free_port(), _free_port())
    started: list[Path] = []
    try:
        _run([str(binaries / "initdb"), "-D", str(primary), "-U", "postgres", "--auth=trust"])
        settings = (
            f"port = {pair.primary_port}\nlisten_addresses = '{HOST}'\n"
            f"unix_socket_directories = '{top}'\nwal_level = replica\nmax_wal_senders = 4\n"
            "fsync = off\nfull_page_writes = off\nshared_buffers = 32MB\n"
        )
        _append(primary / "postgresql.conf", settings)
        _start(binaries, primary)
        started.append(primary)
        _run(
            [
                str(binaries / "pg_basebackup"),
                *("-h", HOST, "-p", str(pair.primary_port), "-U", "postgres"),
                *("-D", str(replica), "-R", "-X", "stream"),
            ]
        )
        _append(replica / "postgresql.conf", f"port = {pair.replica_port}\nhot_standby = on\n")
        _start(binaries, replica)
        started.append(replica)
        yield pair
    finally:
        for directory in reversed(started):
            _run([str(binaries / "pg_ctl"), "-D", str(directory), "-m", "immediate", "stop"])
        shutil.rmtree(top, ignore_errors=True)


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as conf:
        conf.write("\n" + text)


def _start(binaries: Path, directory: Path) -> None:
    log = directory / "server.log"
    wait = str(int(120 * PATIENCE))
    _run(
        [str(binaries / "pg_ctl"), "-D", str(directory), "-l", str(log), "-w", "-t", wait, "start"]
    )
