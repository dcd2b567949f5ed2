"""A ``sentinel://`` URL gives Celery its Sentinel transport and evalq a master-following client."""

from __future__ import annotations

import pytest
from celery.backends.redis import SentinelBackend
from pydantic import ValidationError
from redis.sentinel import SentinelConnectionPool

from evalq.core.settings import Settings
from evalq.workers.app import ProducerSentinelBackend, celery_config, make_app
from evalq.workers.redis_url import parse_sentinel_url, redis_client

URL = "sentinel://:pw@127.0.0.1:26391/2;sentinel://127.0.0.1:26392;sentinel://127.0.0.2:26393"


def sentinel_settings(**overrides: str) -> Settings:
    return Settings(broker_url=URL, redis_master_name="evalq-master", **overrides)  # type: ignore[arg-type]


def test_broker_and_result_backend_get_the_master_name() -> None:
    config = celery_config(sentinel_settings())
    assert config["broker_url"] == URL
    assert config["broker_transport_options"]["master_name"] == "evalq-master"
    assert config["result_backend"] == URL
    assert config["result_backend_transport_options"]["master_name"] == "evalq-master"


def test_a_producer_gets_the_sentinel_flavour_of_its_result_backend() -> None:
    config = celery_config(sentinel_settings(), producer=True)
    assert config["result_backend"].endswith(f"ProducerSentinelBackend+{URL}")
    backend = make_app(sentinel_settings(), producer=True).backend  # builds, connects to nothing
    assert isinstance(backend, ProducerSentinelBackend)
    assert isinstance(backend, SentinelBackend)
    assert backend._transport_options["master_name"] == "evalq-master"


def test_a_worker_app_uses_celerys_sentinel_backend_and_transport() -> None:
    app = make_app(sentinel_settings())
    assert type(app.backend) is SentinelBackend
    with app.connection_for_write() as connection:
        assert connection.transport_cls == "sentinel"
        assert connection.transport_options["master_name"] == "evalq-master"


def test_a_plain_redis_url_gets_no_sentinel_options() -> None:
    config = celery_config(Settings(broker_url="redis://127.0.0.1:6379/0"))
    assert "master_name" not in config["broker_transport_options"]
    assert "master_name" not in config["result_backend_transport_options"]


@pytest.mark.parametrize("field", ["broker_url", "result_backend", "judge_cache_url"])
def test_a_sentinel_url_without_a_master_name_is_refused_naming_the_setting(field: str) -> None:
    with pytest.raises(ValidationError, match=f"EVALQ_{field.upper()}.*EVALQ_REDIS_MASTER_NAME"):
        Settings(**{field: URL})  # type: ignore[arg-type]


def test_the_url_names_every_sentinel_and_the_masters_database_and_password() -> None:
    group = parse_sentinel_url(URL)
    assert group.sentinels == [("127.0.0.1", 26391), ("127.0.0.1", 26392), ("127.0.0.2", 26393)]
    assert (group.db, group.password) == (2, "pw")


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("sentinel://127.0.0.1:26391;redis://127.0.0.1:6379", "must start with sentinel://"),
        ("sentinel://127.0.0.1:26391/zero", "database must be a number"),
    ],
)
def test_a_malformed_sentinel_url_is_refused(url: str, rule: str) -> None:
    with pytest.raises(ValueError, match=rule):
        parse_sentinel_url(url)


def test_evalqs_own_client_follows_the_named_master() -> None:
    client = redis_client(URL, master_name="evalq-master", timeout_s=2.0)
    pool = client.connection_pool
    assert isinstance(pool, SentinelConnectionPool)
    assert pool.service_name == "evalq-master"
    assert pool.connection_kwargs["db"] == 2
    assert pool.connection_kwargs["password"] == "pw"
    assert pool.connection_kwargs["socket_timeout"] == 2.0
    sentinels = pool.sentinel_manager.sentinels
    addresses = [
        (s.connection_pool.connection_kwargs["host"], s.connection_pool.connection_kwargs["port"])
        for s in sentinels
    ]
    assert addresses == [("127.0.0.1", 26391), ("127.0.0.1", 26392), ("127.0.0.2", 26393)]


def test_evalqs_own_client_refuses_a_sentinel_url_without_a_master_name() -> None:
    with pytest.raises(ValueError, match="EVALQ_REDIS_MASTER_NAME"):
        redis_client(URL)
