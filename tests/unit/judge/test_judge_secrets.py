"""The judge's results carry no configured secret: not in errors, not in its model id."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from evalq.core.profile import load_profile
from evalq.core.redact import MARKER, Redactor
from evalq.core.settings import Settings
from evalq.judge import build_judge
from evalq.judge.ask import MESSAGE_CHARS, error_data
from evalq.judge.provider import judge_model_config
from tests.unit.judge.judge_helpers import FAST, submission, task

KEY = "sk-planted-judge-key-0123456789abcdef"
SETTINGS = Settings(
    judge_model="openai:stub",
    judge_base_url="http://judge-user:url-pass-0123456789@127.0.0.1:9/v1",
    judge_api_key=KEY,
)


def test_the_model_id_shows_the_base_url_without_its_credentials() -> None:
    config = judge_model_config(SETTINGS)
    assert config is not None
    assert config.model_id == f"openai:stub@http://{MARKER}@127.0.0.1:9/v1"


def test_a_provider_error_that_echoes_the_key_is_stored_without_it() -> None:
    def echo(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError(f"Incorrect API key provided: {KEY}")

    judge = build_judge(SETTINGS, load_profile(), redis=None, limits=FAST)
    assert judge is not None
    judge.model_factory = lambda: FunctionModel(echo, model_name="stub")
    result = judge.evaluate(submission(), task(), deadline_s=5)
    assert result.failed
    dumped = result.model_dump_json()
    assert KEY not in dumped and "url-pass-0123456789" not in dumped
    assert f"Incorrect API key provided: {MARKER}" in result.errors[0].message


def test_the_message_is_redacted_before_it_is_cut() -> None:
    # the key straddles the cut: cutting first would keep its first half
    error = RuntimeError("x" * (MESSAGE_CHARS - 20) + KEY + "y" * 100)
    record = error_data(error, 1, "permanent", Redactor.of(SETTINGS))
    assert len(record.message) <= MESSAGE_CHARS
    assert KEY[:12] not in record.message


def test_named_level_keys_come_from_the_environment_and_are_redacted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:

    monkeypatch.setenv("EVALQ_JUDGE_KEYS", '{"hosted": "sk-hosted-level-key-0001"}')
    settings = Settings()
    assert settings.judge_keys["hosted"].get_secret_value() == "sk-hosted-level-key-0001"
    assert "sk-hosted" not in repr(settings)
    said = Redactor.of(settings).text("401: Incorrect API key provided: sk-hosted-level-key-0001")
    assert "sk-hosted-level-key-0001" not in said
