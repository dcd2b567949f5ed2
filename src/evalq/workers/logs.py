"""Worker and beat logs go through the secret redaction of `evalq.core.redact`.

Celery sets logging up when a worker or beat starts (handlers on the root logger and on the task
logger), after evalq's code is imported. These receivers put the redacting filter on those
handlers as soon as they exist, so Celery's own logs (a task's failure with its exception and
traceback, a retry with its reason) are redacted like evalq's.

httpx logs each request's URL at INFO. A webhook receiver's URL may carry its credential in the
query (``?token=...``), which is no configured secret the redaction knows of; so the URLs of
those lines are shown as the API shows receivers: userinfo and query values as ``***``.

While the broker is down, Celery's consumer, bootsteps and beat log a traceback for each thing
that fails (a request they cannot cancel, Gossip they cannot restart, each due task beat cannot
send). `BrokerOutage` makes the outage one line, ``broker lost: <error>; retrying``, drops the
tracebacks that follow it, and logs ``broker back: ...`` once the consumer has connected again
or a task has been published. What stays Celery's: docs/reliability.md, "Logs during a broker
outage".
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import httpx
import redis.exceptions
from celery.signals import after_setup_logger, after_setup_task_logger, after_task_publish
from kombu.exceptions import OperationalError

from evalq.core.redact import install_log_redaction, redact_url

CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    OperationalError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    ConnectionError,
)
"""What a lost broker raises, itself or as the cause or context of what Celery raises."""
BROKER_LOGGERS = ("celery.worker", "celery.beat", "celery.bootsteps", "celery.events", "kombu")
"""The loggers whose connection errors are the broker's (a task's own failure, logged by
``celery.app.trace``, is left alone even when it is a connection error)."""
CONNECTED = ("Connected to %s", "beat pidbox: Connected to %s.")
"""Celery's messages when it has (re)connected to the broker."""
log = logging.getLogger(__name__)


def connection_error(exc: BaseException | None) -> BaseException | None:
    """The connection error ``exc`` is, or was caused by (its cause and context followed)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, CONNECTION_ERRORS):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _consumer_lost(record: logging.LogRecord) -> BaseException | None:
    """The error of the consumer's "Connection to broker lost" warning (it has no traceback)."""
    args = record.args if isinstance(record.args, tuple) else ()
    if len(args) == 2 and str(args[0]).startswith("consumer: Connection to broker lost"):
        return args[1] if isinstance(args[1], BaseException) else ConnectionError(str(args[1]))
    return None


class BrokerOutage(logging.Filter):
    """One line when the broker is lost, none of the tracebacks that follow, one when it is back.

    It keeps the outage's state, so one instance serves every handler of the process; a record
    is decided once, whichever handler sees it first.
    """

    def __init__(self) -> None:
        super().__init__()
        self.lost = False
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the first broker error of an outage to one line, drop the rest, put Celery's
        multi-line retry messages on one line, and mark its reconnection line as the outage's
        end."""
        decided: bool | None = getattr(record, "evalq_broker_outage", None)
        if decided is None:
            decided = self._decide(record)
            record.evalq_broker_outage = decided
        return decided

    def _decide(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(BROKER_LOGGERS):
            return True
        error = connection_error(record.exc_info[1]) if record.exc_info else _consumer_lost(record)
        if error is None and "\n" in (text := record.getMessage()):  # "Cannot connect to ..."
            record.msg, record.args = " ".join(text.split()), ()
        with self._lock:
            if error is not None:
                if self.lost:
                    return False
                self.lost = True
                one_line = " ".join(str(error).split()) or type(error).__name__
                record.msg, record.args = "broker lost: %s; retrying", (one_line,)
                record.exc_info = record.exc_text = record.stack_info = None
                return True
            if self.lost and record.msg in CONNECTED:
                self.lost = False
                record.msg = f"broker back: {record.msg[0].lower()}{record.msg[1:]}"
        return True

    def published(self, **_: Any) -> None:
        """`after_task_publish`: a message reached the broker, so it is back (beat logs no
        reconnection of its own)."""
        with self._lock:
            was_lost, self.lost = self.lost, False
        if was_lost:
            log.warning("broker back: a task was published")


broker_outage = BrokerOutage()
"""The process's filter (`redact_worker_logs` installs it)."""


class RequestUrlRedaction(logging.Filter):
    """Shows the URLs a record's arguments hold (httpx's request lines) via `redact_url`."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's URL arguments; never drops a record."""
        if isinstance(record.args, tuple):
            record.args = tuple(
                redact_url(str(arg)) if isinstance(arg, httpx.URL) else arg for arg in record.args
            )
        return True


def _redact_celery_logs(**_: Any) -> None:
    install_log_redaction()
    for handler in logging.root.handlers:
        if broker_outage not in handler.filters:
            handler.addFilter(broker_outage)


def redact_worker_logs() -> None:
    """Redact every log handler Celery sets up in this process, and the URLs of httpx's
    request lines; make a broker outage one line each way (`BrokerOutage`) (idempotent)."""
    after_setup_logger.connect(_redact_celery_logs, dispatch_uid="evalq-redact-logs")
    after_task_publish.connect(broker_outage.published, dispatch_uid="evalq-broker-back")
    after_setup_task_logger.connect(_redact_celery_logs, dispatch_uid="evalq-redact-task-logs")
    httpx_log = logging.getLogger("httpx")
    if not any(isinstance(f, RequestUrlRedaction) for f in httpx_log.filters):
        httpx_log.addFilter(RequestUrlRedaction())
