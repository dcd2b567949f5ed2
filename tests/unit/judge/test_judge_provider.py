"""The judge model from Settings, the limits, and the no-model case."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pydantic import SecretStr
from pydantic_ai.models.openai import OpenAIChatModel

from evalq.core.profile import load_profile
from evalq.core.settings import Settings
from evalq.judge import JudgeLimits, build_judge
from evalq.judge.config import limits_from_settings
from evalq.judge.provider import JudgeModelConfig, judge_model_config, open_model


def test_no_model_means_no_judge() -> None:
    assert build_judge(Settings(judge_model=None), load_profile(), redis=None) is None
    assert build_judge(Settings(judge_model="  "), load_profile(), redis=None) is None


def test_model_string_and_local_server() -> None:
    config = judge_model_config(Settings(judge_model="openai:gpt-4o-mini"))
    assert config == JudgeModelConfig("openai:gpt-4o-mini")
    assert config.model_id == "openai:gpt-4o-mini"
    local = judge_model_config(
        Settings(judge_model="openai:gemma3", judge_base_url="http://127.0.0.1:9/v1")
    )
    assert local is not None
    assert local.served_name == "gemma3" and local.model_id == "openai:gemma3@http://127.0.0.1:9/v1"


def test_local_server_uses_the_openai_chat_model_at_that_url() -> None:
    model = open_model(JudgeModelConfig("qwen", "http://127.0.0.1:9/v1", SecretStr("k")))
    assert isinstance(model, OpenAIChatModel)
    assert model.model_name == "qwen" and model.base_url.startswith("http://127.0.0.1:9/v1")


def test_api_key_never_appears_in_repr() -> None:
    config = JudgeModelConfig("openai:gpt-4o", None, SecretStr("sk-secret-123"))
    assert "sk-secret-123" not in repr(config)
    judge = build_judge(
        Settings(judge_model="openai:gpt-4o", judge_api_key=SecretStr("sk-secret-123")),
        load_profile(),
        redis=None,
    )
    assert judge is not None and "sk-secret-123" not in repr(vars(judge))


def test_limits_come_from_settings_fields_when_present() -> None:
    settings = SimpleNamespace(judge_max_attempts=7, judge_requests_per_minute=5)
    limits = limits_from_settings(settings)
    assert (limits.max_attempts, limits.requests_per_minute) == (7, 5)
    assert limits.output_retries == JudgeLimits().output_retries


@pytest.mark.parametrize(
    "bad",
    [{"max_attempts": 0}, {"output_retries": -1}, {"requests_per_minute": -1}, {"cache_ttl_s": 0}],
)
def test_limits_are_validated(bad: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        JudgeLimits(**bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "config",
    [
        JudgeModelConfig("qwen", "http://127.0.0.1:9/v1", SecretStr("k")),
        JudgeModelConfig("openai:gpt-4o-mini", None, SecretStr("k")),
    ],
)
def test_models_share_one_tls_context_and_close_their_client(config: JudgeModelConfig) -> None:
    import asyncio

    first, second = open_model(config), open_model(config)
    clients = [m.client._client for m in (first, second)]  # type: ignore[attr-defined]
    assert clients[0] is not clients[1]  # one client per evaluation (event loop)
    contexts = {
        id(c._transport._pool._ssl_context)
        for c in clients  # the CA bundle is loaded once
    }
    assert len(contexts) == 1

    async def use(model: OpenAIChatModel) -> None:
        async with model:
            assert not model.client._client.is_closed

    for model, client in zip((first, second), clients, strict=True):
        asyncio.run(use(model))  # type: ignore[arg-type]
        assert client.is_closed  # the provider closed the client it was handed
