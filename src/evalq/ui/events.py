"""Server-Sent Events, the alternative to polling that `bench/ui_live.py` measures it against.

``GET /ui/events?page=PATH`` holds one response open per page and sends ``event: changed`` when
the page's version (`freshness.version_of`) moves. The versions are read at most once per
`INTERVAL_S` per page, whatever the number of open streams on it. The pages use polling
(`ui.js`, docs/ui.md gives the measured reasons); this stream is served for that comparison and
for scripts that want to wait for a change.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator
from typing import Annotated

import anyio
from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from evalq.core.settings import Settings
from evalq.store.db import read_scope
from evalq.ui import freshness
from evalq.ui.web import ViewerDep, settings_of

router = APIRouter(include_in_schema=False)
INTERVAL_S = 5.0
"""How often a page's version is read while streams are open on it (ui.js polls as often)."""
_versions: dict[str, tuple[str | None, float]] = {}
_lock = threading.Lock()


def shared_version(settings: Settings, page: str) -> str | None:
    """``page``'s version, read from the store at most once per `INTERVAL_S`."""
    now = time.monotonic()
    with _lock:
        found = _versions.get(page)
    if found is not None and now - found[1] < INTERVAL_S:
        return found[0]
    # where the page is read (a replica): a version the page cannot show yet would reload it
    # to the old content and never again
    with read_scope(settings) as session:
        version = freshness.version_of(session, page)
    with _lock:
        if len(_versions) > 4096:
            _versions.clear()
        _versions[page] = (version, now)
    return version


@router.get("/ui/events")
async def events(
    request: Request, viewer: ViewerDep, page: Annotated[str, Query(max_length=300)]
) -> StreamingResponse:
    """``event: changed`` each time the live page ``page`` changes, until the client leaves."""
    settings = settings_of(request)

    async def stream() -> AsyncIterator[str]:
        last = await anyio.to_thread.run_sync(shared_version, settings, page)
        yield f"event: open\ndata: {last}\n\n"
        while True:
            await anyio.sleep(INTERVAL_S)
            version = await anyio.to_thread.run_sync(shared_version, settings, page)
            if version != last:
                last = version
                yield f"event: changed\ndata: {version}\n\n"

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)
