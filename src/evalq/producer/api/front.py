"""What `evalq api` serves: an ASGI app that answers GET /healthz at once and loads the API
behind it.

Importing the whole API (FastAPI's routes, the store's models, the read side, the UI, Celery)
takes seconds; a load balancer or an orchestrator polling /healthz would see a dead port all
that time. `ApiFront` is up as soon as uvicorn is: /healthz runs the same checks as the loaded
API's route (`evalq.producer.api.health_checks`), while `create_app` and the API's own lifespan
(the in-process worker when no broker is set) run in the background. Every other request waits
until the API is loaded, then goes to it; from then on /healthz is the API's own route too.

If loading fails, the error is logged and every request, /healthz included, gets 503 with its
one-line reason: the process stays up to say why rather than restart in a loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger(__name__)

HEALTH_PATH = "/healthz"


def create_front() -> ApiFront:
    """uvicorn's factory for `evalq api`: the front over `evalq.producer.api.app.create_app`.

    The checks' modules and client libraries are loaded here, before the API starts loading in
    its thread: the first /healthz then waits on no import.
    """
    from evalq.core.settings import get_settings
    from evalq.producer.api.health_checks import prepare

    prepare(get_settings())
    return ApiFront(_load_api)


def _load_api() -> AsgiApp:
    from evalq.producer.api.app import create_app

    return create_app()


class ApiFront:
    """An ASGI app answering /healthz while ``load`` (blocking; run in a thread) builds the API.

    Args:
        load: builds the API; its ASGI lifespan is run before requests are passed to it.
    """

    def __init__(self, load: Callable[[], AsgiApp]) -> None:
        self._load = load
        self._api: AsgiApp | None = None
        self._failure: str | None = None
        self._settled = asyncio.Event()
        self._loading: asyncio.Task[None] | None = None
        self._api_lifespan: _Lifespan | None = None

    @property
    def loaded(self) -> bool:
        """Whether the API is loaded and started (requests go to it)."""
        return self._api is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if self._api is None and self._failure is None:
            if scope["type"] == "http" and scope["path"] == HEALTH_PATH:
                await self._health(send)
                return
            await self._settled.wait()
        if self._api is None:
            await _reply_json(send, 503, {"detail": f"the API failed to start: {self._failure}"})
            return
        await self._api(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """uvicorn's startup completes at once (the API loads meanwhile); shutdown stops the
        API's own lifespan once its loading is over."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._loading = asyncio.create_task(self._start_api())
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._loading is not None:
                    await self._loading
                if self._api_lifespan is not None:
                    await self._api_lifespan.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _start_api(self) -> None:
        try:
            api = await asyncio.to_thread(self._load)
            lifespan = _Lifespan(api)
            self._api_lifespan = lifespan
            await lifespan.startup()
        except Exception as error:
            log.exception("the API failed to start")
            self._failure = f"{type(error).__name__}: {error}"
        else:
            self._api = api
        finally:
            self._settled.set()

    async def _health(self, send: Send) -> None:
        """The loaded API's /healthz answer, computed here (the checks block: a thread)."""
        from evalq.core.settings import get_settings
        from evalq.producer.api.health_checks import health_of  # imported by create_front

        health = await asyncio.to_thread(lambda: health_of(get_settings()))
        await _reply_json(send, 200 if health.status == "ok" else 503, health.model_dump())


class _Lifespan:
    """Runs an ASGI app's lifespan protocol as a server would: startup now, shutdown later."""

    def __init__(self, app: AsgiApp) -> None:
        self._app = app
        self._inbox: asyncio.Queue[Message] = asyncio.Queue()
        self._outbox: asyncio.Queue[Message] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def startup(self) -> None:
        """Send startup and wait for its answer; RuntimeError when the app reports a failure."""
        scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
        self._task = asyncio.ensure_future(self._app(scope, self._inbox.get, self._outbox.put))
        await self._inbox.put({"type": "lifespan.startup"})
        await self._answer("lifespan.startup")

    async def shutdown(self) -> None:
        """Send shutdown and wait for the app's answer (a failure is logged)."""
        if self._task is None or self._task.done():
            return
        await self._inbox.put({"type": "lifespan.shutdown"})
        try:
            await self._answer("lifespan.shutdown")
        except RuntimeError:
            log.exception("the API's shutdown failed")

    async def _answer(self, step: str) -> None:
        assert self._task is not None
        waiting = asyncio.ensure_future(self._outbox.get())
        await asyncio.wait({waiting, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if not waiting.done():  # the app returned (or raised) without answering
            waiting.cancel()
            self._task.result()  # re-raises its error, if any
            raise RuntimeError(f"the API ended its lifespan without answering {step}")
        message = waiting.result()
        if message["type"] == f"{step}.failed":
            raise RuntimeError(message.get("message") or f"{step} failed")


async def _reply_json(send: Send, status: int, body: Any) -> None:
    payload = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(payload))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
