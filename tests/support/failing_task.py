"""A task that fails with the judge's API key in its exception (``evalq worker --include``).

Celery itself logs a task that raises: its message, the exception and the traceback. Sending
this task shows that log is redacted too (tests/integration/test_secrets.py).
"""

from __future__ import annotations

from celery import shared_task

from evalq.core.settings import get_settings

TASK_NAME = "evalq-test.fail-with-secret"


@shared_task(name=TASK_NAME)
def fail_with_secret() -> None:
    """Raise as an upstream client might: with the credential it was given in the message."""
    key = get_settings().judge_api_key
    raise RuntimeError(f"upstream refused key {key.get_secret_value() if key else None}")
