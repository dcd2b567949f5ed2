"""The judge model from `Settings`: a pydantic-ai model string, or a local OpenAI-compatible server.

A model object is built per evaluation, inside that evaluation's event loop, so HTTP connection
pools never cross threads or loops; ``async with model`` closes its client afterwards. Provider SDK
retries are turned off (``max_retries=0`` in the model settings) so every retry is the judge's own
and is counted.

For OpenAI and OpenAI-compatible servers the HTTP client is built here with one TLS context
shared by the process: loading the CA bundle for a new context costs ~15-50 ms of CPU, which
was most of a judgment's CPU when every evaluation made its own (the concurrency benchmark).
The provider still owns and closes the client.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx2
from pydantic import SecretStr
from pydantic_ai.models import Model, infer_model
from pydantic_ai.providers import Provider, infer_provider, infer_provider_class

from evalq.core.errors import InvalidInput
from evalq.core.profile import Profile
from evalq.core.redact import redact_url
from evalq.core.settings import Settings

_OPENAI_PREFIXES = ("openai:", "openai-chat:", "openai-compatible:")


@dataclass(frozen=True)
class JudgeModelConfig:
    """Which model judges and how to reach it.

    Attributes:
        model: the model as configured (``EVALQ_JUDGE_MODEL``), e.g. ``openai:gpt-4o-mini``.
        base_url: an OpenAI-compatible server (vLLM, llama.cpp, Ollama), or None.
        api_key: the provider key; never logged, never in ``repr``.
    """

    model: str
    base_url: str | None = None
    api_key: SecretStr | None = field(default=None, repr=False)

    @property
    def model_id(self) -> str:
        """The identity used for cache keys, rate-limit buckets and reports.

        The base URL appears with its userinfo and query values replaced (`redact_url`): this id
        is stored with every judgment and names Redis keys, so credentials written into
        ``EVALQ_JUDGE_BASE_URL`` must not reach it. A URL without them is kept as written, so
        existing cache keys stay valid.
        """
        return f"{self.model}@{redact_url(self.base_url)}" if self.base_url else self.model

    @property
    def served_name(self) -> str:
        """The model name sent to an OpenAI-compatible server (provider prefix removed)."""
        for prefix in _OPENAI_PREFIXES:
            if self.model.startswith(prefix):
                return self.model.removeprefix(prefix)
        return self.model


def judge_model_config(settings: Settings) -> JudgeModelConfig | None:
    """The configured judge model, or None when ``judge_model`` is unset (tier 2 is skipped)."""
    model = (settings.judge_model or "").strip()
    if not model:
        return None
    return JudgeModelConfig(model, settings.judge_base_url or None, settings.judge_api_key)


def panel_configs(settings: Settings, profile: Profile) -> list[JudgeModelConfig]:
    """The judge panel: the configured judge model, then ``profile.judge.panel``, duplicates
    dropped; empty when no judge model is configured.

    Each member is reached as the judge model is. On ``judge_base_url`` when it is set (the
    server serves every member). Otherwise through pydantic-ai's provider for the member's
    prefix: ``judge_api_key`` goes to members of the judge model's own provider, and a member of
    another provider gets no key from evalq, so its provider reads its usual environment variable
    (``ANTHROPIC_API_KEY``, ...).
    """
    judge = judge_model_config(settings)
    if judge is None:
        return []
    members = {judge.model_id: judge}
    for model in profile.judge.panel:
        member = level_config(judge, model)
        members.setdefault(member.model_id, member)
    return list(members.values())


def level_config(
    judge: JudgeModelConfig,
    model: str,
    *,
    base_url: str | None = None,
    key: str | None = None,
    keys: Mapping[str, SecretStr] | None = None,
) -> JudgeModelConfig:
    """How a cascade level's ``model`` is reached.

    With its own ``base_url`` (the level's server) and ``key`` (a name in ``keys``,
    `Settings.judge_keys`), there and with that key; without ``key`` a level on its own server
    sends none. Otherwise as a panel member is (`panel_configs`).

    Raises:
        InvalidInput: ``key`` is not a name in ``keys``.
    """
    secret = None
    if key is not None:
        secret = (keys or {}).get(key)
        if secret is None:
            known = sorted(keys or {})
            rule = f"names no key in EVALQ_JUDGE_KEYS (names there: {known})"
            raise InvalidInput([("profile.judge.cascade.levels.key", rule)])
    if base_url is not None:
        return JudgeModelConfig(model, base_url, secret)
    shares_key = judge.base_url is not None or _provider(model) == _provider(judge.model)
    if secret is not None:
        return JudgeModelConfig(model, judge.base_url, secret)
    return JudgeModelConfig(model, judge.base_url, judge.api_key if shares_key else None)


def _provider(model: str) -> str:
    """The provider part of a model string (``openai-chat:x`` is OpenAI's); empty without one."""
    prefix = model.split(":", 1)[0] if ":" in model else ""
    return "openai" if prefix.startswith("openai") else prefix


_tls_lock = threading.Lock()
_tls_context: ssl.SSLContext | None = None


def shared_tls_context() -> ssl.SSLContext:
    """The process's default TLS context (CA bundle loaded once); safe to share across threads."""
    global _tls_context
    with _tls_lock:
        if _tls_context is None:
            _tls_context = ssl.create_default_context()
        return _tls_context


def http_client() -> httpx2.AsyncClient:
    """An HTTP client like pydantic-ai's default one, on the shared TLS context."""
    from pydantic_ai._http import DEFAULT_HTTP_LIMITS
    from pydantic_ai.models import get_user_agent

    return httpx2.AsyncClient(
        verify=shared_tls_context(),
        timeout=httpx2.Timeout(600, connect=5),
        limits=DEFAULT_HTTP_LIMITS,
        headers={"User-Agent": get_user_agent()},
    )


def _owning(provider: Provider[Any], client: httpx2.AsyncClient) -> Provider[Any]:
    # The provider closes (and on a new event loop replaces) only a client it made; hand it this
    # one as if it had, so `async with model` still closes it.
    provider._own_http_client = client
    provider._http_client_factory = http_client
    return provider


def open_model(config: JudgeModelConfig) -> Model:
    """A fresh pydantic-ai model for ``config``; use it in ``async with`` to close its client."""
    key = config.api_key.get_secret_value() if config.api_key is not None else None
    if config.base_url:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider

        client = http_client()
        provider = OpenAICompatibleProvider(
            "evalq-judge", base_url=config.base_url, api_key=key, http_client=client
        )
        return OpenAIChatModel(config.served_name, provider=_owning(provider, client))

    def provider_factory(name: str) -> Provider[Any]:
        if name == "openai":
            client = http_client()
            return _owning(infer_provider_class(name)(api_key=key, http_client=client), client)  # type: ignore[call-arg]
        if key is None:
            return infer_provider(name)
        return infer_provider_class(name)(api_key=key)  # type: ignore[call-arg]

    return infer_model(config.model, provider_factory=provider_factory)
