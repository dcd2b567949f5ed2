"""How many messages wait in each evalq queue, asked of the broker itself.

On Redis a kombu queue is a list per priority step: the queue's own key holds priority 0 (every
evalq message) and ``<queue>\\x06\\x16<step>`` the others, so a depth is the sum of their LLENs.
Messages a worker has taken but not yet acknowledged are not waiting and are not counted (they
sit in kombu's ``unacked`` hash until acked or restored).
"""

from __future__ import annotations

from collections.abc import Sequence

from celery import Celery
from kombu.exceptions import ChannelError

from evalq.workers.names import QUEUES
from evalq.workers.redis_url import is_redis_url, redis_client

BROKER_TIMEOUT_S = 2.0
"""Socket timeouts of a depth read: a stalled broker cannot hang a scrape or a page."""
PRIORITY_SEPARATOR = "\x06\x16"
PRIORITY_STEPS = (0, 3, 6, 9)


def priority_keys(queue: str, steps: Sequence[int] = PRIORITY_STEPS) -> list[str]:
    """The Redis list keys kombu uses for ``queue``, one per priority step."""
    return [queue if step == 0 else f"{queue}{PRIORITY_SEPARATOR}{step}" for step in steps]


def redis_queue_depths(
    url: str,
    queues: Sequence[str] = QUEUES,
    *,
    master_name: str | None = None,
    timeout_s: float | None = None,
) -> dict[str, int]:
    """Messages waiting in each of ``queues`` on the Redis broker at ``url`` (LLEN per key);
    ``master_name`` for a ``sentinel://`` URL, ``timeout_s`` bounding each socket operation."""
    client = redis_client(url, master_name=master_name, timeout_s=timeout_s)
    try:
        with client.pipeline(transaction=False) as pipe:
            for queue in queues:
                for key in priority_keys(queue):
                    pipe.llen(key)
            lengths = [int(n) for n in pipe.execute()]
    finally:
        client.close()
    per_queue = len(PRIORITY_STEPS)
    return {q: sum(lengths[i * per_queue : (i + 1) * per_queue]) for i, q in enumerate(queues)}


def queue_depths(app: Celery, queues: Sequence[str] = QUEUES) -> dict[str, int]:
    """Messages waiting in each of ``queues`` on ``app``'s broker.

    Redis is asked directly (`redis_queue_depths`); another transport through a passive queue
    declaration, where a queue that does not exist yet counts 0.
    """
    url = str(app.conf.broker_url)
    if is_redis_url(url) and not url.startswith("unix://"):
        master_name = app.conf.broker_transport_options.get("master_name")
        return redis_queue_depths(url, queues, master_name=master_name)
    depths: dict[str, int] = {}
    with app.connection_for_read() as connection:
        channel = connection.default_channel
        for queue in queues:
            try:
                depths[queue] = int(channel.queue_declare(queue=queue, passive=True).message_count)
            except ChannelError:
                depths[queue] = 0
    return depths
