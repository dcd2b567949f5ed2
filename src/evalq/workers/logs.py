"""Worker and beat logs go through the secret redaction of `evalq.core.redact`.

Celery sets logging up when a worker or beat starts (handlers on the root logger and on the task
logger), after evalq's code is imported. These receivers put the redacting filter on those
handlers as soon as they exist, so Celery's own logs (a task's failure with its exception and
traceback, a retry with its reason) are redacted like evalq's.

httpx logs each request's URL at INFO. A webhook receiver's URL may carry its credential in the
query (``?token=...``), which is no configured secret the redaction knows of; so the URLs of
those lines are shown as the API shows receivers: userinfo and query values as ``***``.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx
from celery.signals import after_setup_logger, after_setup_task_logger

from evalq.core.redact import install_log_redaction, redact_url


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


def redact_worker_logs() -> None:
    """Redact every log handler Celery sets up in this process, and the URLs of httpx's
    request lines (idempotent)."""
    after_setup_logger.connect(_redact_celery_logs, dispatch_uid="evalq-redact-logs")
    after_setup_task_logger.connect(_redact_celery_logs, dispatch_uid="evalq-redact-task-logs")
    httpx_log = logging.getLogger("httpx")
    if not any(isinstance(f, RequestUrlRedaction) for f in httpx_log.filters):
        httpx_log.addFilter(RequestUrlRedaction())
