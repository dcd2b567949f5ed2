"""`evalq webhook add|list|remove|deliveries`, what happens without EVALQ_WEBHOOK_KEY, and the
receivers refused on the defaults."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sqlalchemy import func, select

from evalq.core.receivers import PRIVATE_RULE, UNRESOLVED_RULE
from evalq.store.db import session_scope
from evalq.store.models import WebhookRow
from tests.integration.cli.test_errors import evalq
from tests.support.webhook_receiver import TEST_WEBHOOK_KEY


def stored_webhooks(url: str) -> int:
    with session_scope(url) as session:
        return int(session.scalar(select(func.count()).select_from(WebhookRow)) or 0)


def store_with_task(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'e.db'}"
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": "t1", "category": "debugging"}]))
    assert evalq(["task", "put", "tasks.json"], tmp_path, database_url=url).returncode == 0
    return url


def test_add_list_deliveries_remove(tmp_path: Path) -> None:
    url = store_with_task(tmp_path)
    key = {"database_url": url, "webhook_key": TEST_WEBHOOK_KEY}
    added = evalq(["webhook", "add", "t1", "https://93.184.215.14/x"], tmp_path, **key)
    assert added.returncode == 0, added.stderr
    hook_id = re.search(r"added webhook (wh_[0-9a-f]+)", added.stdout)
    secret = re.search(r"(whsec_[A-Za-z0-9+/=]+)", added.stdout)
    assert hook_id and secret, added.stdout
    listed = evalq(["webhook", "list", "t1"], tmp_path, **key)
    assert listed.returncode == 0 and hook_id[1] in listed.stdout
    assert "https://93.184.215.14/x" in listed.stdout and secret[1] not in listed.stdout
    empty = evalq(["webhook", "deliveries", "t1", hook_id[1]], tmp_path, **key)
    assert empty.returncode == 0 and "no deliveries yet" in empty.stdout
    removed = evalq(["webhook", "remove", "t1", hook_id[1]], tmp_path, **key)
    assert removed.returncode == 0 and stored_webhooks(url) == 0
    again = evalq(["webhook", "remove", "t1", hook_id[1]], tmp_path, **key)
    assert again.returncode == 2 and f"has no webhook '{hook_id[1]}'" in again.stderr


def test_without_a_key_registering_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    url = store_with_task(tmp_path)
    result = evalq(
        ["webhook", "add", "t1", "https://hooks.example.com/x"], tmp_path, database_url=url
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: webhooks are not configured on this deployment")
    assert "EVALQ_WEBHOOK_KEY" in result.stderr
    assert stored_webhooks(url) == 0


def test_a_bad_url_or_a_bad_key_is_named(tmp_path: Path) -> None:
    url = store_with_task(tmp_path)
    key = {"database_url": url, "webhook_key": TEST_WEBHOOK_KEY}
    bad_url = evalq(["webhook", "add", "t1", "file:///etc/passwd"], tmp_path, **key)
    assert bad_url.returncode == 2 and bad_url.stderr.startswith("error: url: must be an absolute")
    bad_key = evalq(
        ["webhook", "list", "t1"], tmp_path, database_url=url, webhook_key="too-short-a-key"
    )
    assert bad_key.returncode == 3
    assert bad_key.stderr.startswith("error: invalid settings: EVALQ_WEBHOOK_KEY:")
    assert "too-short-a-key" not in bad_key.stderr  # a secret setting is never echoed
    assert stored_webhooks(url) == 0


def test_a_receiver_that_is_not_public_is_refused_unless_allowed(tmp_path: Path) -> None:
    url = store_with_task(tmp_path)
    key = {"database_url": url, "webhook_key": TEST_WEBHOOK_KEY}
    for receiver in ("http://127.0.0.1:9000/hook", "http://2130706433/", "http://[::1]/"):
        refused = evalq(["webhook", "add", "t1", receiver], tmp_path, **key)
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr == f"error: url: {PRIVATE_RULE}\n"
    unresolved = evalq(["webhook", "add", "t1", "https://no-such-host.invalid/x"], tmp_path, **key)
    assert unresolved.returncode == 2 and unresolved.stderr == f"error: url: {UNRESOLVED_RULE}\n"
    assert stored_webhooks(url) == 0
    allowed = evalq(
        ["webhook", "add", "t1", "http://127.0.0.1:9000/hook"],
        tmp_path,
        **key,
        webhook_allow_private="true",
    )
    assert allowed.returncode == 0, allowed.stderr
    assert stored_webhooks(url) == 1
