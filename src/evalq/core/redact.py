"""Secrets never leave the process: one redaction for stored rows, logs, responses and keys.

A provider error may echo the judge's API key, a driver error may print a URL with its
password, and a model id built from ``EVALQ_JUDGE_BASE_URL`` carries whatever credentials were
written into it. `Redactor.text` replaces, in any text:

- every secret configured in `Settings`: each ``SecretStr`` value (``EVALQ_JUDGE_API_KEY``,
  ``EVALQ_FLOWER_PASSWORD``, and any secret added later), and from each URL setting
  (``EVALQ_DATABASE_URL``, ``EVALQ_BROKER_URL``, ``EVALQ_RESULT_BACKEND``,
  ``EVALQ_JUDGE_BASE_URL``) its password (or its user name when it has no password: the
  ``https://TOKEN@host`` form), the ``user:password`` pair in base64 (what HTTP basic auth
  sends, so what a server echoes), and the values of query parameters named like a credential
  (``api_key``, ``token``, ``password``, ``sig``, ...); each also in its percent-decoded form;
- the userinfo of any URL (``scheme://user:password@``), configured or not;

with `MARKER`. A configured secret shorter than `MIN_SECRET_CHARS` is not searched for in free
text (a password ``evalq`` would otherwise blank every mention of evalq); it is still removed
wherever it sits in a URL's userinfo. Use secrets of at least that length.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from pydantic import SecretStr

from evalq.core.settings import Settings, get_settings

MARKER = "***"
MIN_SECRET_CHARS = 8
"""Shorter configured secrets are not searched for in free text (URL userinfo still is)."""

CREDENTIAL_PARAM = re.compile(r"key|token|secret|pass|pwd|auth|sig|credential", re.IGNORECASE)
"""Query parameter names whose values are credentials (``api_key``, ``access_token``, ...)."""

# A scheme starts where no scheme character precedes it: without that look-behind the pattern is
# tried at every letter of a long word and scans the rest of it each time (quadratic).
_USERINFO = r"(?<![A-Za-z0-9+.\-])(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)[^\s/?#@'\"<>]+@"


def url_secrets(url: str) -> list[str]:
    """The credentials written into one URL: password (or lone user name), its basic-auth
    base64 form, and the values of credential-named query parameters."""
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
    except ValueError:  # not a URL after all (an invalid port, say): nothing to take apart
        return []
    found: list[str] = []
    if password or username:
        found.append(password or username or "")
        pair = f"{unquote(username or '')}:{unquote(password or '')}"
        found.append(base64.b64encode(pair.encode()).decode())
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if CREDENTIAL_PARAM.search(name):
            found.append(value)  # parse_qsl has decoded it already
    return found


def settings_secrets(settings: Settings) -> list[str]:
    """Every secret configured in ``settings``: ``SecretStr`` values and URL credentials, each
    as written, percent-decoded and percent-encoded."""
    found: list[str] = []
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if isinstance(value, SecretStr):
            found.append(value.get_secret_value())
        elif isinstance(value, str) and "://" in value:
            found += url_secrets(value)
        elif isinstance(value, dict):  # named keys (judge_keys)
            found += [v.get_secret_value() for v in value.values() if isinstance(v, SecretStr)]
    return [form for secret in found for form in (secret, unquote(secret), quote(secret, safe=""))]


@dataclass(frozen=True)
class Redactor:
    """Replaces known secrets and any URL userinfo in text and in JSON-like data.

    Attributes:
        secrets: the secrets to search for; empty ones and those shorter than
            `MIN_SECRET_CHARS` are dropped. Never in ``repr``.
    """

    secrets: tuple[str, ...] = field(default=(), repr=False)  # a repr may reach a log
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The longest secret first, so one that contains another is removed whole.
        long_enough = {s for s in self.secrets if len(s) >= MIN_SECRET_CHARS}
        kept = sorted(long_enough, key=len, reverse=True)
        object.__setattr__(self, "secrets", tuple(kept))
        alternatives = [_USERINFO, *(re.escape(s) for s in kept)]
        object.__setattr__(self, "_pattern", re.compile("|".join(alternatives)))

    @classmethod
    def of(cls, settings: Settings) -> Redactor:
        """The redactor of every secret configured in ``settings``."""
        return cls(tuple(settings_secrets(settings)))

    def text(self, text: str) -> str:
        """``text`` with each secret and each URL's userinfo replaced by `MARKER`."""
        # Plain substring searches first: most text holds neither, and they are much faster
        # than the regex's alternation tried at every position.
        if "://" not in text and not any(secret in text for secret in self.secrets):
            return text
        return self._pattern.sub(_replacement, text)

    def data(self, value: Any) -> Any:
        """A JSON-like value (dicts, lists, strings, numbers) with every string redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value


def _replacement(match: re.Match[str]) -> str:
    scheme = match.group("scheme")
    return f"{scheme}{MARKER}@" if scheme else MARKER


def redact_url(url: str) -> str:
    """A URL fit to show or to name a key after: userinfo and every query value replaced.

    A URL with neither comes back unchanged, character for character.
    """
    parts = urlsplit(url)
    if "@" not in parts.netloc and not parts.query:
        return url
    netloc = parts.netloc.rpartition("@")[2]
    shown = (
        f"{parts.scheme}://{MARKER}@{netloc}"
        if "@" in parts.netloc
        else f"{parts.scheme}://{netloc}"
    )
    shown += parts.path
    if parts.query:
        pairs = (p.partition("=") for p in parts.query.split("&"))
        shown += "?" + "&".join(f"{k}={MARKER}" if eq else k for k, eq, _ in pairs)
    if parts.fragment:
        shown += f"#{parts.fragment}"
    return shown


_cached: tuple[Settings, Redactor] | None = None


def redactor_for(settings: Settings | None = None) -> Redactor:
    """The redactor of ``settings`` (the process Settings by default), built once per object."""
    global _cached
    settings = settings or get_settings()
    cached = _cached
    if cached is not None and cached[0] is settings:
        return cached[1]
    redactor = Redactor.of(settings)
    _cached = (settings, redactor)
    return redactor


def redact(text: str, settings: Settings | None = None) -> str:
    """``text`` without the secrets of ``settings`` (the process Settings by default)."""
    return redactor_for(settings).text(text)


def redact_data(value: Any, settings: Settings | None = None) -> Any:
    """A JSON-like value without the secrets of ``settings``, for a row about to be stored."""
    return redactor_for(settings).data(value)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts a record's message, exception text and stack in place.

    Installed on handlers (not loggers: a logger's filters see only records logged on that very
    logger), so records from every library, Celery's task-failure logs included, pass through
    it before any formatter writes them.
    """

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's text; never drops a record.

        The template and its arguments are redacted one by one and kept apart, because some
        formatters read ``record.args`` themselves (uvicorn's access formatter unpacks the
        client, method, path, version and status from it). Only when a secret cannot be removed
        that way (it spans the template and an argument, or sits in an argument that is not a
        string) is the record collapsed to its redacted message.
        """
        message = record.getMessage()
        redacted = self.redactor.text(message)
        if redacted != message:
            record.msg, record.args = self._parts(record)
            if record.getMessage() != redacted:
                record.msg, record.args = redacted, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.text(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor.text(record.stack_info)
        return True

    def _parts(self, record: logging.LogRecord) -> tuple[Any, Any]:
        """The record's template and arguments, each string among them redacted."""
        text = self.redactor.text
        msg = text(record.msg) if isinstance(record.msg, str) else record.msg
        args = record.args
        if isinstance(args, Mapping):
            args = {k: text(v) if isinstance(v, str) else v for k, v in args.items()}
        elif isinstance(args, tuple):
            args = tuple(text(a) if isinstance(a, str) else a for a in args)
        return msg, args


def _handlers() -> Iterable[logging.Handler]:
    yield from logging.root.handlers
    for logger in list(logging.root.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger):
            yield from logger.handlers
    if logging.lastResort is not None:  # what writes warnings when no handler is configured
        yield logging.lastResort


def install_log_redaction(settings: Settings | None = None) -> RedactingFilter:
    """Put a `RedactingFilter` for ``settings`` on every logging handler that exists now.

    Call it once logging is configured (the API after uvicorn's set-up, a worker after
    Celery's); calling it again replaces the filter instead of adding a second one.
    """
    installed = RedactingFilter(redactor_for(settings))
    for handler in set(_handlers()):
        for old in [f for f in handler.filters if isinstance(f, RedactingFilter)]:
            handler.removeFilter(old)
        handler.addFilter(installed)
    return installed
