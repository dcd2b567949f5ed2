"""A real PgBouncer in transaction pooling mode in front of the test PostgreSQL.

One `pgbouncer` process per test process, started on first use on a free loopback port and
stopped at exit: every database of the shared cluster is reachable through it by name (its
``*`` entry), with trust authentication as the cluster has. Its pools are two server
connections per database, so that two clients of one store share a server connection between
their transactions, which is what breaks a client that keeps state on it (prepared
statements, ``SET``): the store's integration tests run through it as the ``pgbouncer``
backend (tests/support/databases.py).

Debian's `pgbouncer` (installed by .ci/run) refuses to run as root: as root it is started with
``-u postgres``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.support.services import PG_ADMIN_URL, PG_HOST, PG_PORT, need, reachable

POOL_SIZE = 2
"""Server connections per database and user: small, so that clients share them."""

_port: int | None = None


def pgbouncer_binary() -> str | None:
    """The `pgbouncer` executable (Debian puts it in /usr/sbin, often not on a user's PATH)."""
    found = shutil.which("pgbouncer")
    if found is None and Path("/usr/sbin/pgbouncer").exists():
        found = "/usr/sbin/pgbouncer"
    return found


def pgbouncer_url(database: str) -> str:
    """The URL of ``database`` (on the test PostgreSQL) through this process's PgBouncer."""
    url = make_url(PG_ADMIN_URL).set(host=PG_HOST, port=pgbouncer_port(), database=database)
    return url.render_as_string(hide_password=False)


def pgbouncer_port() -> int:
    """This process's PgBouncer's port, starting it on first use (skipped locally, failed in CI,
    when `pgbouncer` is not installed or PostgreSQL is not reachable)."""
    global _port
    need(PG_HOST, PG_PORT, "PostgreSQL")
    if _port is None:
        binary = pgbouncer_binary()
        if binary is None:
            message = "pgbouncer is not installed (.ci/run installs Debian's)"
            if os.environ.get("CI") == "true":
                pytest.fail(message)
            pytest.skip(message)
        _port = _start(binary)
    return _port


def _start(binary: str) -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    directory = Path(tempfile.mkdtemp(prefix="evalq-pgbouncer-"))
    directory.chmod(0o755)  # readable by the postgres user when started as root
    user = make_url(PG_ADMIN_URL).username or "postgres"
    (directory / "users.txt").write_text(f'"{user}" ""\n', encoding="utf-8")
    (directory / "pgbouncer.ini").write_text(
        f"""[databases]
* = host={PG_HOST} port={PG_PORT}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {directory / "users.txt"}
pool_mode = transaction
default_pool_size = {POOL_SIZE}
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 500
max_db_connections = {POOL_SIZE}
server_lifetime = 3600
ignore_startup_parameters = extra_float_digits
""",
        encoding="utf-8",
    )
    for name in ("users.txt", "pgbouncer.ini"):
        (directory / name).chmod(0o644)
    as_root = ["-u", "postgres"] if os.geteuid() == 0 else []
    log = (directory / "pgbouncer.log").open("wb")
    process = subprocess.Popen(
        [binary, *as_root, str(directory / "pgbouncer.ini")],
        stdout=log,
        stderr=subprocess.STDOUT,
    )

    watcher = _outlive_no_one(process.pid)

    def stop() -> None:
        process.terminate()
        process.wait(10)
        watcher.kill()
        watcher.wait(10)
        log.close()
        shutil.rmtree(directory, ignore_errors=True)

    atexit.register(stop)
    deadline = time.monotonic() + 10
    while not reachable("127.0.0.1", port):
        if process.poll() is not None or time.monotonic() > deadline:
            log.flush()
            said = (directory / "pgbouncer.log").read_text(encoding="utf-8", errors="replace")
            raise RuntimeError(f"pgbouncer did not start on {port}: {said[-2000:]}")
        time.sleep(0.02)
    return port


def _outlive_no_one(pid: int) -> subprocess.Popen[bytes]:
    """Stop PgBouncer ``pid`` once this process is gone, however it ended: `atexit` does not
    run for a test process killed by a signal or ended by ``os._exit``, and PgBouncer started
    with ``-u postgres`` drops the parent-death signal with its user, so each test process's
    PgBouncer would outlive it. A shell in a session of its own polls this process and
    terminates PgBouncer after it; the caller keeps the shell (and stops it on a clean exit)."""
    watch = f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; kill {pid} 2>/dev/null"
    return subprocess.Popen(
        ["sh", "-c", watch],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
