"""Worker and beat logs go through the secret redaction of `evalq.core.redact`.

Celery sets logging up when a worker or beat starts (handlers on the root logger and on the task
logger), after evalq's code is imported. These receivers put the redacting filter on those
handlers as soon as they exist, so Celery's own logs (a task's failure with its exception and
traceback, a retry with its reason) are redacted like evalq's.
"""

from __future__ import annotations

from typing import Any

from celery.signals import after_setup_logger, after_setup_task_logger

from evalq.core.redact import install_log_redaction


def _redact_celery_logs(**_: Any) -> None:
    install_log_redaction()


def redact_worker_logs() -> None:
    """Redact every log handler Celery sets up in this process (idempotent)."""
    after_setup_logger.connect(_redact_celery_logs, dispatch_uid="evalq-redact-logs")
    after_setup_task_logger.connect(_redact_celery_logs, dispatch_uid="evalq-redact-task-logs")
