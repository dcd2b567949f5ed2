"""evalq's own Redis uses through a real Sentinel group: they find the master, and follow it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.drills.harness import wait_for
from tests.drills.sentinel import MASTER_NAME, SentinelGroup, sentinel_group
from tests.support.processes import PATIENCE

from evalq.producer.api.health_checks import broker_check
from evalq.workers import heartbeat
from evalq.workers.depths import redis_queue_depths
from evalq.workers.names import MERGE_QUEUE
from evalq.workers.redis_url import redis_client


@pytest.fixture
def group(tmp_path: Path) -> Iterator[SentinelGroup]:
    with sentinel_group(tmp_path / "sentinel") as started:
        yield started


def test_own_clients_reach_the_master_and_follow_a_failover(group: SentinelGroup) -> None:
    client = redis_client(group.url, master_name=MASTER_NAME, timeout_s=2.0)
    heartbeat.beat(client, "owner-1", "a@drill", ttl_s=600)
    client.rpush(MERGE_QUEUE, "m1", "m2")
    assert client.connection_pool.get_master_address()[1] == group.master_port  # type: ignore[attr-defined]
    assert redis_queue_depths(group.url, master_name=MASTER_NAME)[MERGE_QUEUE] == 2
    assert broker_check(group.url, MASTER_NAME).ok
    assert not broker_check(group.url, "no-such-master").ok
    wait_for(lambda: group.replica_has(MERGE_QUEUE), timeout=30 * PATIENCE, what="key replicated")

    group.kill_master()
    wait_for(
        lambda: group.current_master() == ("127.0.0.1", group.replica_port),
        timeout=120 * PATIENCE,
        what="the replica promoted",
    )

    # the same client, untouched, now talks to the promoted replica
    assert heartbeat.alive_owners(client, ["owner-1"]) == {"owner-1"}
    assert client.connection_pool.get_master_address()[1] == group.replica_port  # type: ignore[attr-defined]
    assert redis_queue_depths(group.url, master_name=MASTER_NAME)[MERGE_QUEUE] == 2
    assert broker_check(group.url, MASTER_NAME).ok
