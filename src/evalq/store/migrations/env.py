"""Alembic environment: runs on the connection evalq hands it (see evalq.store.db.upgrade)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from evalq.store.models import Base

config = context.config
connection = config.attributes.get("connection")
if connection is None:  # plain `alembic upgrade` from the command line
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.begin() as conn:
        context.configure(connection=conn, target_metadata=Base.metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
else:
    context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
