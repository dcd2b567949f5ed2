"""`evalq api` and `evalq keys ...`: serve the HTTP API and manage its keys.

Importing this module needs neither FastAPI nor uvicorn, nor the store (each command imports what
it uses, so `evalq --help` stays quick)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail, fail_with

keys_app = typer.Typer(help="API keys of the HTTP API.", no_args_is_help=True)


def api(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    workers: Annotated[int, typer.Option(help="uvicorn worker processes.")] = 1,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """Serve the HTTP API with uvicorn (needs the `api` extra).

    With no EVALQ_BROKER_URL the API evaluates what it receives in its own process, as the
    Python client does (the `worker` extra is then needed too): one process, for trying evalq
    out or a small deployment.

    Proxy headers (X-Forwarded-For, X-Forwarded-Proto) are believed only from the addresses in
    EVALQ_FORWARDED_ALLOW_IPS; unset, from none (uvicorn's own default trusts any loopback
    client, which could then make the UI's plain-http cookies Secure). docs/deploy.md, "Behind
    a reverse proxy".
    """
    from evalq.core.settings import get_settings

    settings = get_settings()
    if not settings.broker_url and workers > 1:
        fail_with(
            "--workers > 1 needs EVALQ_BROKER_URL (e.g. redis://127.0.0.1:6379/0):"
            " without a broker each process evaluates what it receives in-process"
        )
    import uvicorn

    uvicorn.run(
        # The front answers /healthz at once and loads the API behind it (producer/api/front.py)
        "evalq.producer.api.front:create_front",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        proxy_headers=settings.forwarded_allow_ips is not None,
        forwarded_allow_ips=settings.forwarded_allow_ips or "",
    )


@keys_app.command("create")
def keys_create(
    name: Annotated[str, typer.Option(help="A unique name for the key.")],
    scopes: Annotated[str, typer.Option(help="Comma-separated: read, write.")] = "read",
) -> None:
    """Create a key and print it once; the store keeps only its SHA-256 digest."""
    from evalq.store.db import session_scope
    from evalq.store.keys import create_key

    try:
        with session_scope() as session:
            secret = create_key(session, name=name, scopes=scopes.split(","))
    except EvalqError as error:
        fail(error)
    print(secret)


@keys_app.command("list")
def keys_list() -> None:
    """Every key: name, scopes, created, revoked (never the secret)."""
    from evalq.store.db import session_scope
    from evalq.store.keys import list_keys

    with session_scope() as session:
        keys = list_keys(session)
    table = Table("name", "scopes", "created", "revoked")
    for key in keys:
        revoked = key.revoked_at.isoformat(timespec="seconds") if key.revoked_at else "-"
        created = key.created_at.isoformat(timespec="seconds")
        table.add_row(key.name, ",".join(key.scopes), created, revoked)
    console.print(table)


@keys_app.command("revoke")
def keys_revoke(name: str) -> None:
    """Revoke the key NAME; requests with it get 401 from then on."""
    from evalq.store.db import session_scope
    from evalq.store.keys import revoke_key

    try:
        with session_scope() as session:
            revoke_key(session, name=name)
    except EvalqError as error:
        fail(error)
    console.print(f"revoked {name}")
