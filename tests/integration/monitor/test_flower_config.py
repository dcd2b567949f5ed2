"""`evalq flower` refuses to start without a broker or a password (nothing is started)."""

from __future__ import annotations

import os

import pytest
from tests.support.settings import configure
from typer.testing import CliRunner

from evalq.producer.cli import app as cli


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"broker_url": "redis://127.0.0.1:6379/10"}, "EVALQ_FLOWER_PASSWORD: required"),
        ({"flower_password": "secret"}, "EVALQ_BROKER_URL: required"),
        (
            {"broker_url": "redis://127.0.0.1:6379/10", "flower_password": "a,b"},
            "EVALQ_FLOWER_PASSWORD: must not contain ','",
        ),
        (
            {
                "broker_url": "redis://127.0.0.1:6379/10",
                "flower_password": "secret",
                "flower_user": "ops:x",
            },
            "EVALQ_FLOWER_USER: must not contain ':' or ','",
        ),
    ],
)
def test_flower_refuses_unsafe_or_missing_configuration(
    env: dict[str, str], problem: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("BROKER_URL", "FLOWER_PASSWORD", "FLOWER_USER"):
        monkeypatch.delenv(f"EVALQ_{name}", raising=False)
    monkeypatch.delenv("FLOWER_BASIC_AUTH", raising=False)
    configure(monkeypatch, **env)
    result = CliRunner().invoke(cli, ["flower", "--port", "1"])
    assert result.exit_code == 2
    assert problem in result.output
    assert "FLOWER_BASIC_AUTH" not in os.environ  # refused before the credentials are set
