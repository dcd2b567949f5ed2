"""A local OpenAI chat-completions server with scheduled faults, for judge tests and benchmarks.

    with OpenAIStub(plan={"a": ["rate_limit", "ok"]}, proportions={"server_error": 0.2}) as stub:
        ...  # point an OpenAI client at stub.base_url

The stub listens on 127.0.0.1 with a random port, serves from a daemon thread, and answers
``POST /v1/chat/completions``. What each request gets is decided in this order:

1. ``plan``: when the request body contains a case marker (``[case:NAME]`` by default) and NAME
   is in the plan, the next fault of that case's list is served; once the list is used up, the
   case gets valid answers. This makes the expected counts of a concurrent batch exact.
2. ``proportions``: other requests draw a fault from a ``random.Random(seed)`` in arrival order,
   with the given probabilities (the remainder is ``ok``).
3. Otherwise ``ok``.

Faults: ``ok`` (a schema-valid answer), ``rate_limit`` (429 with ``Retry-After`` and
``retry-after-ms``), ``server_error`` (500), ``slow`` (no answer until the client gives up
and hangs up: its timeout trips however loaded the machine is; a valid answer after ``slow_s``
seconds if it never does), ``malformed`` (200 whose message content is not JSON),
``reset`` (the connection is closed without a response), ``unauthorized`` (401),
``bad_request`` (400), ``echo_credentials`` (401 whose message repeats the credentials the
request carried, as a careless provider does: the bearer token, or a basic-auth header and its
decoded ``user:password``). Every request is counted (``requests``, ``served``, ``log``).

Valid answers are built from the request's ``response_format`` JSON schema (or from the first
tool's parameters when the judge uses tool output): enums take ``score`` when it is allowed,
strings are a short rationale. A custom ``answer`` callable can replace this.

A request asking for ``logprobs`` gets them for its content, as OpenAI and llama.cpp's server
return them: the content split into tokens (each digit its own token), every digit with
``score_logprob`` (a number, or a callable of the request) and every other token 0.0.
``requests_seen`` keeps each request's ``Authorization`` header and JSON body.

Run as a script for a quick manual server: ``python tests/support/openai_stub.py --port 8099``.
"""

from __future__ import annotations

import argparse
import base64
import collections
import json
import math
import random
import re
import select
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Fault = Literal[
    "ok",
    "rate_limit",
    "server_error",
    "slow",
    "malformed",
    "reset",
    "unauthorized",
    "bad_request",
    "echo_credentials",
]
FAULTS: tuple[Fault, ...] = (
    "ok",
    "rate_limit",
    "server_error",
    "slow",
    "malformed",
    "reset",
    "unauthorized",
    "bad_request",
    "echo_credentials",
)
Answer = Callable[[dict[str, Any]], dict[str, Any]]
SCORE_LOGPROB = math.log(0.8)  # a score token's logprob when logprobs are asked for


def schema_instance(
    schema: Mapping[str, Any], *, score: int, defs: Mapping[str, Any] | None = None
) -> Any:
    """A value valid for a (simple) JSON schema: objects, refs, enums, strings, numbers, lists."""
    defs = defs if defs is not None else schema.get("$defs", schema.get("definitions", {}))
    if "$ref" in schema:
        return schema_instance(defs[schema["$ref"].rsplit("/", 1)[-1]], score=score, defs=defs)
    if "enum" in schema:
        return score if score in schema["enum"] else schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for union in ("anyOf", "oneOf", "allOf"):
        if union in schema:
            return schema_instance(schema[union][0], score=score, defs=defs)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: schema_instance(sub, score=score, defs=defs) for name, sub in props.items()}
    if kind == "array":
        return [schema_instance(schema.get("items", {}), score=score, defs=defs)]
    if kind == "string":
        return "stub rationale"
    if kind in ("integer", "number"):
        return score
    if kind == "boolean":
        return True
    return None


class OpenAIStub:
    """The stub server. Use as a context manager, or call `start` and `stop`.

    Args:
        plan: case name -> faults served, in order, to requests carrying that case's marker.
        proportions: fault -> probability for requests outside the plan (sum <= 1).
        seed: seed of the proportions draw.
        slow_s: the longest a ``slow`` response waits for the client to hang up.
        retry_after_s: the wait a ``rate_limit`` response asks for.
        score: the enum value valid answers use when the schema allows it.
        answer: builds the JSON body of a valid answer from the request instead.
        case_pattern: regex whose first group names the case in a request body.
    """

    def __init__(
        self,
        *,
        plan: Mapping[str, Sequence[Fault]] | None = None,
        proportions: Mapping[Fault, float] | None = None,
        seed: int = 0,
        slow_s: float = 60.0,
        retry_after_s: float = 0.05,
        score: int = 4,
        answer: Answer | None = None,
        case_pattern: str = r"\[case:([A-Za-z0-9_.\-]+)\]",
        port: int = 0,
        score_logprob: float | Callable[[dict[str, Any]], float] = SCORE_LOGPROB,
    ) -> None:
        if proportions and sum(proportions.values()) > 1 + 1e-9:
            raise ValueError("fault proportions must sum to at most 1")
        self._pending = {case: collections.deque(faults) for case, faults in (plan or {}).items()}
        self._proportions = dict(proportions or {})
        self._rng = random.Random(seed)
        self.slow_s = slow_s
        self.retry_after_s = retry_after_s
        self.score = score
        self.answer = answer
        self._case = re.compile(case_pattern)
        self._lock = threading.Lock()
        self.requests = 0
        self.served: collections.Counter[str] = collections.Counter()
        self.log: list[tuple[str | None, Fault]] = []
        self.score_logprob = score_logprob
        self.requests_seen: list[tuple[str, dict[str, Any]]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI base URL of this stub (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> OpenAIStub:
        """Start serving in a daemon thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def choose(self, body: str) -> tuple[str | None, Fault]:
        """Decide (and record) the fault for one request body."""
        match = self._case.search(body)
        case = match.group(1) if match else None
        with self._lock:
            self.requests += 1
            if case is not None and case in self._pending:
                queue = self._pending[case]
                fault: Fault = queue.popleft() if queue else "ok"
            else:
                fault = self._draw()
            self.served[fault] += 1
            self.log.append((case, fault))
        return case, fault

    def _draw(self) -> Fault:
        if not self._proportions:
            return "ok"
        x, total = self._rng.random(), 0.0
        for fault, share in self._proportions.items():
            total += share
            if x < total:
                return fault
        return "ok"

    def completion(
        self, request: dict[str, Any], *, content_override: str | None = None
    ) -> dict[str, Any]:
        """A chat-completion response body answering ``request``."""
        message: dict[str, Any] = {"role": "assistant", "content": None}
        fmt = request.get("response_format") or {}
        tools = request.get("tools") or []
        if self.answer is not None:
            message["content"] = json.dumps(self.answer(request))
        elif fmt.get("type") == "json_schema":
            schema = fmt["json_schema"]["schema"]
            message["content"] = json.dumps(schema_instance(schema, score=self.score))
        elif tools:
            function = tools[0]["function"]
            args = schema_instance(function.get("parameters", {}), score=self.score)
            message["tool_calls"] = [
                {
                    "id": f"call_{self.requests}",
                    "type": "function",
                    "function": {"name": function["name"], "arguments": json.dumps(args)},
                }
            ]
        else:
            message["content"] = "stub answer"
        if content_override is not None:
            message = {"role": "assistant", "content": content_override}
        text = message["content"] or json.dumps(message.get("tool_calls"))
        choice: dict[str, Any] = {
            "index": 0,
            "message": message,
            "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
        }
        if request.get("logprobs") and message.get("content"):
            choice["logprobs"] = {"content": self.token_logprobs(request, message["content"])}
        prompt_tokens = math.ceil(len(json.dumps(request.get("messages", []))) / 4)
        completion_tokens = math.ceil(len(text) / 4)
        return {
            "id": f"chatcmpl-stub-{self.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "stub"),
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def token_logprobs(self, request: dict[str, Any], content: str) -> list[dict[str, Any]]:
        """The content as tokens with logprobs: digits get ``score_logprob``, the rest 0."""
        digit = self.score_logprob(request) if callable(self.score_logprob) else self.score_logprob
        return [
            {
                "token": token,
                "logprob": digit if token.isdigit() else 0.0,
                "bytes": list(token.encode()),
                "top_logprobs": [],
            }
            for token in re.findall(r"\d|\D+", content)
        ]


def echo(authorization: str) -> str:
    """An error message repeating the credentials of an ``Authorization`` header."""
    scheme, _, credentials = authorization.partition(" ")
    if scheme.lower() == "basic":
        decoded = base64.b64decode(credentials).decode(errors="replace")
        return f"Incorrect credentials provided: {authorization} ({decoded})"
    return f"Incorrect API key provided: {credentials or authorization}"


def _handler(stub: OpenAIStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, body: dict[str, Any], headers: Mapping[str, str] = {}) -> None:
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace")
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(
                    404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}
                )
                return
            _case, fault = stub.choose(raw)
            request = json.loads(raw) if raw else {}
            with stub._lock:
                stub.requests_seen.append((self.headers.get("Authorization", ""), request))
            error = {"message": f"stub fault: {fault}", "type": fault, "code": fault}
            if fault == "rate_limit":
                wait = stub.retry_after_s
                headers = {
                    "Retry-After": str(math.ceil(wait)),
                    "retry-after-ms": str(int(wait * 1000)),
                }
                self._send(429, {"error": {**error, "code": "rate_limit_exceeded"}}, headers)
            elif fault == "server_error":
                self._send(500, {"error": error})
            elif fault == "unauthorized":
                self._send(401, {"error": {**error, "code": "invalid_api_key"}})
            elif fault == "echo_credentials":
                echoed = {**error, "message": echo(self.headers.get("Authorization", ""))}
                self._send(401, {"error": {**echoed, "code": "invalid_api_key"}})
            elif fault == "bad_request":
                self._send(400, {"error": {**error, "code": "invalid_request_error"}})
            elif fault == "reset":
                self.close_connection = True  # no response at all
            elif fault == "malformed":
                self._send(200, stub.completion(request, content_override="not json {score: 5"))
            elif fault == "slow" and self._client_hangs_up(within_s=stub.slow_s):
                self.close_connection = True
            else:
                self._send(200, stub.completion(request))

        def _client_hangs_up(self, *, within_s: float) -> bool:
            """Wait for the client to close the connection (its timeout); True when it did.

            A timeout test that answered after a fixed delay instead would depend on which of
            the two clocks, the client's and this sleep, a loaded machine runs first.
            """
            deadline = time.monotonic() + within_s
            while time.monotonic() < deadline:
                readable, _, _ = select.select([self.connection], [], [], 0.05)
                if readable:
                    try:
                        return self.connection.recv(1, socket.MSG_PEEK) == b""
                    except OSError:  # reset by the client: hung up too
                        return True
            return False

    return Handler


def main() -> None:
    """Serve until interrupted: ``python tests/support/openai_stub.py --port 8099``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    for fault in FAULTS[1:]:
        parser.add_argument(f"--{fault.replace('_', '-')}", type=float, default=0.0)
    args = parser.parse_args()
    shares = {f: getattr(args, f) for f in FAULTS[1:] if getattr(args, f) > 0}
    with OpenAIStub(proportions=shares, seed=args.seed, port=args.port) as stub:
        print(f"serving {stub.base_url} (Ctrl-C to stop)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
