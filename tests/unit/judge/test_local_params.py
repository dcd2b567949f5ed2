"""What `serve_local_model` hands llama.cpp: threads that do not spin while they wait.

llama.cpp's server is replaced by a recorder of the parameters it would start with (starting
the real one is `tests/integration/judge/test_local_model.py`'s, an exclusive case). The poll
level matters on a shared machine: spinning decoding threads made one answer 20x slower beside
two busy processes (docs/judge.md, "A local judge model").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

xllamacpp = pytest.importorskip("xllamacpp", reason="the local-judge extra is not installed")

from evalq.judge.local import serve_local_model  # noqa: E402


class Recorded(Exception):
    """Raised by the recorder in place of starting a server."""


def started_with(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **options: Any) -> Any:
    seen: list[Any] = []

    def recorder(params: Any) -> Any:
        seen.append(params)
        raise Recorded

    monkeypatch.setattr(xllamacpp, "Server", recorder)
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    with pytest.raises(Recorded), serve_local_model(model, **options):
        pass
    [params] = seen
    return params


def test_decoding_threads_do_not_spin_by_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    params = started_with(monkeypatch, tmp_path)
    assert params.cpuparams.poll == 0 and params.cpuparams_batch.poll == 0
    assert xllamacpp.CommonParams().cpuparams.poll > 0  # llama.cpp's own default spins


def test_threads_and_poll_are_passed_through(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    params = started_with(monkeypatch, tmp_path, threads=1, poll=50, parallel=2)
    assert params.cpuparams.n_threads == params.cpuparams_batch.n_threads == 1
    assert params.cpuparams.poll == params.cpuparams_batch.poll == 50
    assert params.n_parallel == 2 and params.n_ctx == 2 * 4096
