"""Fixtures shared by every test live in the conftest files below this one; helpers tests
import live in tests/support/ (services.py says where Redis and PostgreSQL are)."""

# Re-exported while the suites that import them from here move to tests.support.services.
from tests.support.services import (
    PG_ADMIN_URL,
    PG_HOST,
    PG_PORT,
    REDIS_HOST,
    REDIS_PORT,
    need,
    reachable,
)

__all__ = ["PG_ADMIN_URL", "PG_HOST", "PG_PORT", "REDIS_HOST", "REDIS_PORT", "need", "reachable"]
