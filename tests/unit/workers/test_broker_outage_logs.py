"""A broker outage in a worker's or beat's log: one line when it is lost, one when it is back,
no traceback between (the records are Celery's own, with a real kombu error)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
from celery.beat import SchedulingError
from celery.worker.consumer.consumer import CONNECTION_ERROR, CONNECTION_RETRY
from kombu import Connection
from kombu.exceptions import OperationalError
from tests.support.processes import free_port

from evalq.workers.logs import BrokerOutage


def broker_error() -> OperationalError:
    """What kombu raises when the Redis broker refuses the connection."""
    with Connection(f"redis://127.0.0.1:{free_port()}/0", connect_timeout=1) as connection:
        try:
            connection.ensure_connection(max_retries=1, interval_start=0, interval_step=0)
        except OperationalError as error:
            return error
    raise AssertionError("nothing listens there, yet it connected")


@pytest.fixture
def written() -> Iterator[tuple[BrokerOutage, io.StringIO]]:
    """A handler with the filter, as `redact_worker_logs` puts it on Celery's, and its text."""
    text = io.StringIO()
    handler = logging.StreamHandler(text)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    outage = BrokerOutage()
    handler.addFilter(outage)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield outage, text
    finally:
        root.removeHandler(handler)


def log_failure(logger: str, message: str, error: BaseException) -> None:
    try:
        raise error
    except BaseException:
        logging.getLogger(logger).warning(message, exc_info=True)


def test_an_outage_is_one_line_lost_and_one_line_back(
    written: tuple[BrokerOutage, io.StringIO], caplog: pytest.LogCaptureFixture
) -> None:
    outage, text = written
    caplog.set_level(logging.INFO, logger="celery.worker.consumer.connection")
    error = broker_error()
    log_failure("celery.worker.consumer.consumer", "Failed to cancel active request %r", error)
    log_failure("celery.bootsteps", "Error on restarting Gossip", error)
    try:  # beat's SchedulingError, raised (as celery.beat does) while handling the broker's
        try:
            raise error
        except OperationalError as cause:
            raise SchedulingError(f"Couldn't apply scheduled task recover: {cause}")  # noqa: B904
    except SchedulingError as scheduling:
        log_failure("celery.beat", "Message Error: %s", scheduling)
    logging.getLogger("celery.worker.consumer.connection").info("Connected to %s", "redis://x//")
    lines = text.getvalue().splitlines()
    assert lines == [
        f"celery.worker.consumer.consumer WARNING broker lost: {' '.join(str(error).split())};"
        " retrying",
        "celery.worker.consumer.connection INFO broker back: connected to redis://x//",
    ]
    assert "Connection refused" in lines[0] or "Error" in lines[0]
    assert not outage.lost


def test_a_tasks_own_connection_error_keeps_its_traceback(
    written: tuple[BrokerOutage, io.StringIO],
) -> None:
    _, text = written
    log_failure("celery.app.trace", "Task failed", ConnectionRefusedError(111, "refused"))
    assert "Traceback" in text.getvalue()


def test_a_published_task_ends_an_outage_beat_never_logs_the_end_of(
    written: tuple[BrokerOutage, io.StringIO],
) -> None:
    outage, text = written
    outage.published()  # no outage: nothing to say
    log_failure("celery.beat", "Message Error: %s", broker_error())
    outage.published()
    outage.published()
    messages = [line.split(" ", 2)[2] for line in text.getvalue().splitlines()]
    assert [m.split(":")[0] for m in messages] == ["broker lost", "broker back"]
    assert messages[1] == "broker back: a task was published"


def test_an_idle_workers_outage_from_celerys_own_lines(
    written: tuple[BrokerOutage, io.StringIO], caplog: pytest.LogCaptureFixture
) -> None:
    """An idle worker logs no traceback: the consumer's "Connection to broker lost" warning is
    the loss, its three-line "Cannot connect" retries become one line each."""
    outage, text = written
    caplog.set_level(logging.INFO, logger="celery.worker.consumer")
    consumer = logging.getLogger("celery.worker.consumer.consumer")
    error = broker_error()
    consumer.warning("%s (%r)", CONNECTION_RETRY, ConnectionError("network"))
    consumer.error(CONNECTION_ERROR, "redis://h:6379//", error, "Trying again in 2.00 seconds...")
    logging.getLogger("celery.worker.consumer.connection").info("Connected to %s", "redis://h//")
    lines = [line.split(" ", 2)[2] for line in text.getvalue().splitlines()]
    assert lines[0] == "broker lost: network; retrying"
    assert lines[1].startswith("consumer: Cannot connect to redis://h:6379//: ")
    assert lines[1].endswith(". Trying again in 2.00 seconds...")
    assert lines[2:] == ["broker back: connected to redis://h//"] and not outage.lost
